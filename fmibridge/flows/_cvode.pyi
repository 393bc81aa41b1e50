"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function
from fmibridge.flows._stepper import AdaptiveStepper

JACOBIAN_CHECKS: int
JACOBIAN_RTOL: float
JACOBIAN_FLOOR: float
REASONS: Any

SAME_TIME_ULPS: float
MAX_STALLED_STEPS: int

class CvodeStepper(AdaptiveStepper):
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
