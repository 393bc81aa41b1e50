"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function
from fmibridge.core._rk import Tableau

SAFETY: float
FAC_MAX: float
FAC_MIN: float
MAX_REJECTIONS: int
MAX_STEPS_OFF_CURVE: Any
END_RTOL: float
STIFF_FRACTION: float
STIFF_STEPS: int
NONSTIFF_STEPS: int
STIFF_STEPS_LEFT: int

class Stepper:
    n: int
    rhs: Function

class FieldStepper(Stepper):
    def __init__(self, rhs: Function, tableau: Tableau) -> None: ...

class FlowStepper(Stepper):
    def __init__(self, flow: Any, scheme: Any, n: int) -> None: ...

class AdaptiveStepper(Stepper):
    rtol: float
    atol: float
    h_next: float
    n_rejected: int
    t0: float
    h_step: float
    has_step: bool
    t_end: float
    def __init__(self, rhs: Function, n: int, rtol: float, atol: float) -> None: ...
    def propose(self, h: float, t_end: float = ...) -> Any: ...
    def take_rejected(self) -> Any: ...
    def take(self, t: float, x: Any, h_max: float) -> Any: ...
    def at(self, t: float) -> Any: ...

class EmbeddedStepper(AdaptiveStepper):
    def __init__(
        self, rhs: Function, tableau: Tableau, rtol: float, atol: float
    ) -> None: ...

class PythonAdaptiveStepper(AdaptiveStepper):
    def __init__(
        self, integrator: Any, rhs: Function, rtol: float, atol: float
    ) -> None: ...
