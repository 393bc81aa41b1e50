"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fmibridge.flows._fmi import FmiFunctions
from fmibridge.flows._stepper import Stepper

MAX_HISTORY: int
ELEMENTS: tuple[str, ...]

class CommunicationStep:
    direct: bool
    y_t: np.ndarray
    ended: tuple[int, bool, bool, bool, float]
    finite: bool
    do_step_cost: np.ndarray
    n_done: int
    def __init__(
        self,
        fmus: Sequence[FmiFunctions | None],
        states: Sequence[Any],
        inputs: Sequence[Any],
        sources: Sequence[Any],
        plan: Sequence[Any] | None,
        order: Sequence[int],
        propagate: Callable[[float, np.ndarray], np.ndarray] | None = None,
        step_back: Callable[..., None] | None = None,
    ) -> None: ...
    def evaluate(self, t: float, x: np.ndarray) -> int: ...
    def inputs(self) -> bytes: ...
    def replay(self, c: int, chain: list[tuple], x: np.ndarray) -> int: ...

def take_step(
    master: Any,
    t: float,
    x: np.ndarray,
    xb: bytes,
    h: float,
    scheme: Any = None,
    may_undo: bool = False,
) -> np.ndarray: ...
def step_done(
    master: Any, t: float, x: np.ndarray, h: float, scheme: Any, spent: float
) -> None: ...
def keep_last(
    history: Any,
    key: Any,
    value: Any,
    limit: int,
    move: bool = True,
    drop: Callable[[Any], object] | None = None,
) -> None: ...

class MasterStepper(Stepper):
    recorded: np.ndarray | None
    recorded_names: tuple[str, ...]
    def __init__(
        self,
        master: Any,
        scheme: Any,
        snap_rtol: float,
        recorded: Sequence[tuple[int, int]] = (),
    ) -> None: ...

class FmuStepper(Stepper):
    recorded: np.ndarray
    recorded_names: tuple[str, ...]
    observe_row: np.ndarray
    def __init__(
        self,
        flow: Any,
        calls: tuple[Any, ...],
        scheme: Any,
        readings: Readings,
        inputs: Sequence[tuple[int, np.ndarray, np.ndarray, bool]],
        snap_rtol: float,
    ) -> None: ...
    def callbacks(self) -> list[str]: ...

class Readings:
    n: int
    def __init__(
        self,
        fmi: FmiFunctions,
        getters: Sequence[tuple[int, str, str, Sequence[int]]],
        take: Sequence[int] | np.ndarray,
    ) -> None: ...
    def values(self) -> np.ndarray: ...
