"""The stiff integrator between events: CVODE's BDF under tolerances.

`Stiff` is the integrator a method names ``"cvode"`` (or ``"bdf"``): SUNDIALS
CVODE's variable-order, variable-step backward differentiation formulas
(`flows._cvode`), whose accepted steps a method takes as it takes any adaptive
integrator's (`adaptive_stepper` builds them on a flow: a `_cvode.CvodeStepper`),
and locates guards on their dense output. Resets, the flow's own events,
completion and the watchdog act on the states the method returns as for any
integrator; after an event CVODE restarts from the new state.

Why CVODE (measured on the Reference FMU Roberts to its stopTime 1e8 s and on
the same equations in Python, docs/guide/stiff.md): CVODE through fmpy's SUNDIALS
took 8 ms at rtol 1e-6 with a Python right-hand side (869 steps, y1 off by
1.3e-5), scipy's BDF 177 ms (622 steps, 1.2e-5) and Radau 224 ms (356 steps,
2.9e-8): scipy's solvers are Python loops around the right-hand side, CVODE is a
C loop that calls it. fmpy, already a dependency, ships the SUNDIALS libraries, so
CVODE costs no new dependency; it is the integrator FMPy, PyFMI and OMSimulator
run Model Exchange FMUs with.

References
----------
Hairer and Wanner, Solving ODEs II, Sec. III.1 and V.5 (BDF); Hindmarsh et al.,
ACM TOMS 31 (2005) (SUNDIALS); the CVODE User Guide, SUNDIALS 7.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ._cvode import Cvode, CvodeStepper
from .base import VectorField

STIFF_NAMES = ("cvode", "bdf")  # what a user may call the stiff integrator
JACOBIANS = ("auto", "difference")
MAX_ORDER = 5  # BDF is not zero-stable beyond order 6; CVODE stops at 5


@dataclass(frozen=True)
class Stiff:
    """CVODE's BDF between events (its options; the tolerances are the method's).

    Parameters
    ----------
    max_order : int
        The highest BDF order, 1 to 5 (orders 1 and 2 are A-stable: lower it
        for oscillatory stiff modes).
    max_step : float
        The longest step, s (inf: no bound).
    jacobian : {'auto', 'difference'}
        'auto': the flow's Jacobian where it has one (an FMU's directional
        derivatives, checked against forward differences at its first
        evaluations), else CVODE's difference quotients; 'difference': the
        difference quotients always.

    References
    ----------
    CVODE User Guide, SUNDIALS 7: CVodeSetMaxOrd, CVodeSetMaxStep,
    CVodeSetJacFn; Hairer and Wanner, Solving ODEs II, Sec. V.2 (stability of
    BDF).

    Examples
    --------
    >>> import numpy as np
    >>> from fmibridge.flows import NativeFlow
    >>> flow = NativeFlow(lambda t, x, u: -1e4 * (x - np.cos(t)), ("x",))
    >>> stepper = Stiff().adaptive_stepper(flow, 1e-8, 1e-10)
    >>> t, x = 0.0, np.array([0.0])
    >>> while t < 1.0:
    ...     h, x = stepper.take(t, x, 1.0 - t)
    ...     t += h
    >>> bool(abs(x[0] - np.cos(1.0)) < 1e-4)
    True
    """

    name: ClassVar[str] = "cvode"
    order: ClassVar[int] = MAX_ORDER

    max_order: int = MAX_ORDER
    max_step: float = math.inf
    jacobian: str = "auto"

    def __post_init__(self) -> None:
        if not (isinstance(self.max_order, int) and 1 <= self.max_order <= MAX_ORDER):
            raise FmibridgeError(
                f"`max_order` must be an integer 1 to {MAX_ORDER}, got "
                f"{self.max_order!r}."
            )
        if not (self.max_step > 0):
            raise FmibridgeError(f"`max_step` must be > 0, got {self.max_step!r}.")
        if self.jacobian not in JACOBIANS:
            raise FmibridgeError(
                f"`jacobian` must be one of {list(JACOBIANS)}, got {self.jacobian!r}."
            )

    def adaptive_stepper(
        self, flow, rtol: float, atol: float | Sequence[float] | None
    ) -> CvodeStepper:
        """Return CVODE's steps on `flow` under (rtol, atol).

        atol is one value, one per state, or None for rtol times each state's
        nominal value (an FMU's `nominal`, else 1), as FMPy sets it.
        """
        if not isinstance(flow, VectorField):
            raise FmibridgeError(
                f"The stiff integrator (cvode) integrates dx/dt; the flow "
                f"{type(flow).__name__} integrates itself: use its Model Exchange "
                f"interface, or give a step h."
            )
        n = len(flow.state_names)
        jacobian = flow.jacobian_function() if self.jacobian == "auto" else None
        cvode = Cvode(
            flow.rhs_function(),
            rtol,
            tolerances(flow, rtol, atol, n),
            jacobian,
            max_step=self.max_step,
            max_order=self.max_order,
        )
        return CvodeStepper(cvode)


def tolerances(flow, rtol: float, atol, n: int) -> np.ndarray:
    """Return the absolute tolerance of each of the n states."""
    if atol is None:
        nominals = getattr(flow, "state_nominals", None)
        scale = np.ones(n) if nominals is None else np.asarray(nominals(), float)
        return rtol * scale
    values = np.atleast_1d(np.asarray(atol, dtype=float))
    if values.size not in (1, n) or not np.all((values > 0) & np.isfinite(values)):
        raise FmibridgeError(
            f"`atol` must be a number > 0 or one per state ({n}: "
            f"{list(flow.state_names)}), got {atol!r}."
        )
    return np.broadcast_to(values, (n,)).copy()


def stiff_named(name: str | Stiff) -> Stiff | None:
    """Return the stiff integrator called `name` ('cvode', 'bdf'), or None."""
    if isinstance(name, Stiff):
        return name
    return Stiff() if name in STIFF_NAMES else None
