"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

import numpy as np

from fmibridge.core._functions import Function
from fmibridge.flows._fmu import FmuCalls

class Part:
    start: int
    n: int
    derivatives: Function
    def __init__(
        self, start: int, derivatives: Function, put_at: Any = ...
    ) -> None: ...

class FmuPart(Part):
    def __init__(
        self, start: int, derivatives: Function, calls: FmuCalls, placed: bool
    ) -> None: ...

class Step:
    def __init__(self, kind: str, target: Any, slots: Any = ...) -> None: ...

def propagate(steps: Any, t: float, outputs: np.ndarray) -> None: ...

class CoupledRhs(Function):
    def __init__(self, parts: Any, steps: Any, outputs: Any, what: str) -> None: ...
