"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function
from fmibridge.flows._stepper import AdaptiveStepper

JACOBIAN_CHECKS: int
JACOBIAN_RTOL: float
JACOBIAN_FLOOR: float
REASONS: Any

class Cvode:
    rhs: Function
    jacobian: Function
    n: int
    rtol: float
    max_step: float
    t: float
    t_start: float
    message: str
    t_not_finite: float
    n_restarts: int
    n_checks: int
    jacobian_note: str
    def __init__(
        self,
        rhs: Function,
        rtol: float,
        atol: Any,
        jacobian: Function | None = ...,
        *,
        max_step: float = ...,
        max_order: int = ...,
    ) -> None: ...
    def stats(self) -> Any: ...
    def failure(self, flag: int) -> Any: ...
    @property
    def step_size(self) -> Any: ...

SAME_TIME_ULPS: float
MAX_STALLED_STEPS: int

class CvodeStepper(AdaptiveStepper):
    cvode: Cvode
    def __init__(self, cvode: Cvode) -> None: ...
    def stats(self) -> Any: ...
