"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

import numpy as np

from fmibridge.core._functions import Function

SMALL: int

def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

class EulerLagrange(Function):
    n: int
    def __init__(
        self,
        mass: Function,
        bias: Function,
        gradient: Function,
        forced: bool,
        what: str,
    ) -> None: ...

class ForceMap(EulerLagrange):
    def __init__(
        self, mass: Function, bias: Function, gradient: Function, what: str
    ) -> None: ...
    def __call__(self, t: float, x: Any, lam: Any = None) -> Any: ...

class OfState(Function):
    def __init__(
        self, of_q: Function, n_state: int, shape: tuple[int, ...]
    ) -> None: ...
    def __call__(self, t: float, x: Any) -> Any: ...
    def engine_entry(self, n: int) -> Any: ...
