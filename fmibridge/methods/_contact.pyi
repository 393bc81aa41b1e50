"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Callable
from typing import Any

from fmibridge.core._functions import Function
from fmibridge.core._rk import Tableau
from fmibridge.flows._stepper import Stepper

class ContactFunctions:
    n: int
    nq: int
    restitution: float
    name: str
    gap: Function
    gradient: Function
    force: Function
    hessian: Function
    rhs_function: Function
    rate_function: Function
    def __init__(
        self,
        gap: Function,
        gradient: Function,
        force: Function,
        hessian: Function | None,
        q_index: Any,
        v_index: Any,
        restitution: float,
        name: str,
        projected: bool = ...,
    ) -> None: ...
    def h(self, t: float, x: Any) -> Any: ...
    def dh(self, t: float, x: Any) -> Any: ...
    def rate(self, t: float, x: Any) -> Any: ...
    def curvature(self, t: float, x: Any) -> Any: ...
    def hddot(self, t: float, x: Any) -> Any: ...
    def affine(self, t: float, x: Any) -> Any: ...
    def constrained(self, t: float, x: Any) -> Any: ...
    def project(self, t: float, x: Any) -> Any: ...
    def impact(self, t: float, x: Any) -> Any: ...

ProjectionFunctions: Callable[..., ContactFunctions]

class ContactFunction(Function):
    def __init__(self, contact: ContactFunctions, rate: bool) -> None: ...

class ProjectedStepper(Stepper):
    contact: ContactFunctions
    def __init__(self, contact: ContactFunctions, tableau: Tableau) -> None: ...
    def constrained_step(self, t: float, x: Any, h: float, slope: Any = ...) -> Any: ...
