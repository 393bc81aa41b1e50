"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Sequence
from typing import Any

import numpy as np

from fmibridge.flows._stepper import Stepper

FMI_WARNING: int
MAX_HISTORY: int

class CommunicationStep:
    y_t: np.ndarray
    failed_status: int
    terminated: bool
    last_time: float
    finite: bool
    def __init__(
        self,
        fmus: Sequence[Any],
        names: Sequence[Any],
        states: Sequence[Any],
        inputs: Sequence[Any],
        sources: Sequence[Any],
        plan: Sequence[Any],
        order: Sequence[int],
    ) -> None: ...
    def inputs(self) -> bytes: ...
    def replay(self, c: int, chain: list[tuple], x: np.ndarray) -> int: ...

def arrived(master: Any, t: float, x: np.ndarray, h: float, y: np.ndarray) -> None: ...
def take_step(
    master: Any, t: float, x: np.ndarray, xb: bytes, h: float
) -> np.ndarray: ...
def step_done(
    master: Any, t: float, x: np.ndarray, h: float, scheme: Any, spent: float
) -> None: ...

class MasterStepper(Stepper):
    def __init__(
        self,
        master: Any,
        step: CommunicationStep,
        scheme: Any,
        n: int,
        snap_rtol: float,
    ) -> None: ...
