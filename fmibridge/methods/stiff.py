"""The stiff integrator between events: CVODE's BDF under tolerances.

`Stiff` is what a method integrates with when its integrator is ``"cvode"``
(or ``"bdf"``): SUNDIALS CVODE's variable-order, variable-step backward
differentiation formulas (`flows._cvode`), the steps between events taken and
watched by `_stiff.attempt` (guards located on CVODE's dense output). Resets,
the flow's own events, completion and the watchdog act on the States it returns
as on any method's.

Why CVODE (measured on the Reference FMU Roberts to its stopTime 1e8 s and the
same equations in Python, see docs/guide/stiff.md): CVODE through fmpy's
SUNDIALS took 8 ms at rtol 1e-6 with a Python right-hand side (869 steps),
scipy's BDF 177 ms (622 steps, an error 1.2e-5 of y1) and Radau 224 ms; both
are Python loops around the right-hand side, CVODE a C loop that calls it. fmpy,
already a dependency, ships the SUNDIALS libraries, so CVODE costs no new
dependency; it is the integrator FMPy, PyFMI and OMSimulator run Model Exchange
FMUs with, so runs compare with theirs step for step.

References
----------
Hairer and Wanner, Solving ODEs II, Sec. III.1 and V.5 (BDF); Hindmarsh et al.,
ACM TOMS 31 (2005) (SUNDIALS); the CVODE User Guide, SUNDIALS 7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ..flows._cvode import Cvode
from . import _stiff
from .base import at_least_one, positive

STIFF_NAMES = ("cvode", "bdf")  # what a user may call the stiff integrator
JACOBIANS = ("auto", "difference")
MAX_ORDER = 5  # BDF is not zero-stable beyond order 6; CVODE stops at 5


@dataclass(frozen=True)
class Stiff:
    """CVODE's BDF between events, under relative and absolute tolerances.

    Parameters
    ----------
    rtol : float
        Relative tolerance of each step's local error (CVODE's reltol).
    atol : float or tuple of float, optional
        Absolute tolerance, one for all states or one per state; default
        rtol times each state's nominal value (an FMU's `nominal`, else 1),
        as FMPy sets it.
    max_step : float
        The longest step, s (inf: no bound).
    first_step : float
        The first step after each start and event, s (0: CVODE's estimate).
    max_order : int
        The highest BDF order, 1 to 5.
    jacobian : {'auto', 'difference'}
        'auto': the flow's Jacobian where it has one (an FMU's directional
        derivatives), else CVODE's difference quotients; 'difference': the
        difference quotients always.

    References
    ----------
    CVODE User Guide, SUNDIALS 7: CVodeSVtolerances, CVodeSetMaxStep,
    CVodeSetInitStep, CVodeSetMaxOrd, CVodeSetJacFn.
    """

    name: ClassVar[str] = "cvode"
    order: ClassVar[int] = MAX_ORDER

    rtol: float = 1e-6
    atol: float | tuple[float, ...] | None = None
    max_step: float = math.inf
    first_step: float = 0.0
    max_order: int = MAX_ORDER
    jacobian: str = "auto"

    def __post_init__(self) -> None:
        positive("rtol", self.rtol)
        if self.atol is not None:
            values = np.atleast_1d(np.asarray(self.atol, dtype=float))
            if values.ndim != 1 or not np.all((values > 0) & np.isfinite(values)):
                raise FmibridgeError(
                    f"`atol` must be a number > 0 or one per state, got {self.atol!r}."
                )
            atol = float(values[0]) if np.ndim(self.atol) == 0 else tuple(values)
            object.__setattr__(self, "atol", atol)
        if not (self.max_step > 0):
            raise FmibridgeError(f"`max_step` must be > 0, got {self.max_step!r}.")
        if not (math.isfinite(self.first_step) and self.first_step >= 0):
            raise FmibridgeError(
                f"`first_step` must be >= 0 (0: CVODE's estimate), got "
                f"{self.first_step!r}."
            )
        at_least_one("max_order", self.max_order)
        if self.max_order > MAX_ORDER:
            raise FmibridgeError(
                f"`max_order` must be 1 to {MAX_ORDER}, got {self.max_order!r}."
            )
        if self.jacobian not in JACOBIANS:
            raise FmibridgeError(
                f"`jacobian` must be one of {list(JACOBIANS)}, got {self.jacobian!r}."
            )

    def integrator(self, cm) -> Cvode:
        """Return CVODE on the mode's flow (`cm`, a CompiledMode), built once per
        mode and these settings."""
        key = ("cvode", self)
        found = cm.work.get(key)
        if found is None:
            found = cm.work[key] = self._build(cm.mode)
        return found

    def _build(self, mode) -> Cvode:
        from ..flows.base import VectorField

        flow = mode.flow
        if not isinstance(flow, VectorField):
            raise FmibridgeError(
                f"The stiff integrator (cvode) integrates dx/dt; mode {mode.name!r} "
                f"has a {type(flow).__name__}, which integrates itself."
            )
        n = len(flow.state_names)
        atol = self._atol(flow, n)
        jacobian = flow.jacobian_function() if self.jacobian == "auto" else None
        return Cvode(
            flow.rhs_function(),
            self.rtol,
            atol,
            jacobian,
            max_step=self.max_step,
            first_step=self.first_step,
            max_order=self.max_order,
        )

    def _atol(self, flow, n: int) -> np.ndarray:
        if self.atol is None:
            return self.rtol * _nominals(flow, n)
        values = np.atleast_1d(np.asarray(self.atol, dtype=float))
        if values.size not in (1, n):
            raise FmibridgeError(
                f"`atol` has {values.size} values; the flow has {n} states "
                f"{list(flow.state_names)}: give one, or one per state."
            )
        return np.broadcast_to(values, (n,)).copy()

    def attempt(
        self, method, cm, state, t_end: float, log, *, t_tol: float, max_iter: int
    ):
        """Take the method's steps from `state` to t_end or the next event
        (`_stiff.attempt`); return the Step."""
        from .base import State, Step

        if cm.n == 0:  # nothing to integrate: the run goes on to t_end
            return Step(State(t_end, np.array(state.x, dtype=float), cm.name))
        return _stiff.attempt(
            method,
            cm,
            self.integrator(cm),
            state,
            t_end,
            log,
            t_tol=t_tol,
            max_iter=max_iter,
        )

    def describe(self, cm) -> dict[str, object]:
        """Return CVODE's counts over the run so far for the mode `cm`."""
        found = cm.work.get(("cvode", self))
        return {} if found is None else found.stats()


def _nominals(flow, n: int) -> np.ndarray:
    """Each state's nominal value (1 where the flow gives none)."""
    nominals = getattr(flow, "state_nominals", None)
    return np.ones(n) if nominals is None else np.asarray(nominals(), dtype=float)
