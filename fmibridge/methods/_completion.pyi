"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

import numpy as np

from fmibridge.core._rk import Tableau
from fmibridge.methods._contact import ContactFunctions, ProjectedStepper

MAX_HALVINGS: int
BLOCK: int
STEPPED: int
LIFTED: int
STUCK: int
NON_FINITE: int
FALLBACK_SAFETY: Any

class Phase:
    ts: np.ndarray
    xs: np.ndarray
    lams: np.ndarray
    status: int
    t: float
    last_step: float
    n_rejected: int
    def __init__(self, contact: ContactFunctions, tableau: Tableau) -> None: ...
    @property
    def x(self) -> Any: ...
    def run(
        self,
        t: float,
        x: Any,
        last_step: float,
        h: float,
        t_end: float,
        tol: float,
        t_tol: float,
        reach: float,
        max_steps: int,
    ) -> Any: ...

def truncation_threshold(
    e: float, bounds: Any, eps: Any, *, speed: float, dh_norm: float
) -> Any: ...

class Series:
    impacts: list[Any]
    floor: bool
    excess: float
    def __init__(
        self,
        contact: ContactFunctions,
        free: str,
        impact_edges: tuple[Any, ...],
        bounds: Any,
    ) -> None: ...
    def catch_up(self, events: list[Any]) -> Any: ...
    def truncates(self, eps_t: float, eps_q: float, eps_v: float) -> Any: ...
    def placed(self, inner: Any) -> Any: ...
    def switch(self, stepper: ProjectedStepper, limit: bool, t_end: float) -> Any: ...
