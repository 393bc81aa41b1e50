"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function
from fmibridge.flows._stepper import Stepper

RATE_STEP: float
RATE_DELTA: float
BLOCK: int
COARSE_RTOL: float

def compiled_mode(mode: Any, scheme: Any, h: float, tolerance: Any = ...) -> Any: ...
def reach_tol(t_end: float, h: float) -> float: ...
def reached(t: float, t_end: float, h: float) -> bool: ...

class CompiledMode:
    mode: object
    name: str
    stepper: Stepper
    guards: Function
    n: int
    m: int
    has_rhs: bool
    is_adaptive: bool
    h: float
    resets: tuple[Any, ...]
    self_loop: tuple[Any, ...]
    work: dict[Any, Any]
    def __init__(
        self, mode: Any, scheme: Any, h: float, tolerance: Any = ...
    ) -> None: ...
    def callbacks(self) -> Any: ...
    def guard_rates(self, t: float, x: Any) -> Any: ...

def reset_function(reset: Any, n: int) -> Any: ...
def gathered(fns: Any, n: int, what: str) -> Any: ...
