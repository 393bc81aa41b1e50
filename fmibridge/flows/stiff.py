"""The stiff integrator between events: CVODE's BDF under tolerances.

`Stiff` is the integrator a method names ``"cvode"`` (or ``"bdf"``): SUNDIALS
CVODE's variable-order backward differentiation formulas (`flows._cvode`, the
libraries fmpy ships), whose accepted steps a method takes as any adaptive
integrator's; after an event CVODE restarts from the new state
(docs/guide/stiff.md).

References
----------
Hairer and Wanner, Solving ODEs II, Sec. III.1 and V.5 (BDF); Hindmarsh et al.,
ACM TOMS 31 (2005) (SUNDIALS); the CVODE User Guide, SUNDIALS 7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import DOPRI5, RK4
from ._stepper import AdaptiveStepper
from .base import VectorField

JACOBIANS = ("auto", "difference")
MAX_ORDER = 5  # BDF is not zero-stable beyond order 6; CVODE stops at 5
# the fixed steps a method takes itself with the stiff integrator (`Stiff`)
FIXED_STEPS = RK4


@dataclass(frozen=True)
class Stiff:
    """CVODE's BDF between events (its options; the tolerances are the method's).

    A method's steps are CVODE's accepted steps (`adaptive_stepper`); where a
    method takes fixed steps of its own (Completion's constrained phase), it
    takes them with `FIXED_STEPS`, the explicit RK4.

    Parameters
    ----------
    max_order : int
        The highest BDF order, 1 to 5 (1 and 2 are A-stable; Hairer and
        Wanner, Solving ODEs II, Sec. V.2).
    max_step : float
        The longest step, s (inf: no bound).
    jacobian : {'auto', 'difference'}
        The flow's Jacobian where it has one (checked against forward
        differences), else CVODE's difference quotients; or these always.
    nominal_atol : bool
        atol_i = atol nominal_i (an FMU's `nominal`, else 1), as FMPy sets it.

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

    is_adaptive: ClassVar[bool] = True
    order: ClassVar[int] = MAX_ORDER

    max_order: int = MAX_ORDER
    max_step: float = math.inf
    jacobian: str = "auto"
    nominal_atol: bool = False

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

    @property
    def name(self) -> str:
        """'cvode', with the options that differ from the defaults."""
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) != f.default
        ]
        return f"cvode({', '.join(changed)})" if changed else "cvode"

    def adaptive_stepper(self, flow, rtol: float, atol) -> AdaptiveStepper:
        """Return CVODE's steps on `flow` under (rtol, atol: one value or one
        per state, None: rtol); on a flow without states, DOPRI5's (CVODE needs
        at least one equation), and a flow without dx/dt refuses as it does."""
        n = len(flow.state_names)
        if n == 0 or not isinstance(flow, VectorField):
            return flow.adaptive_stepper(DOPRI5, rtol, atol)
        atol = rtol if atol is None else atol
        atols = np.atleast_1d(np.asarray(atol, dtype=float))
        if atols.size not in (1, n) or not np.all((atols > 0) & np.isfinite(atols)):
            raise FmibridgeError(
                f"`atol` must be a number > 0 or one per state ({n}: "
                f"{list(flow.state_names)}), got {atol!r}."
            )
        atols = np.broadcast_to(atols, (n,)).copy()
        nominals = getattr(flow, "state_nominals", None)
        if self.nominal_atol and nominals is not None:  # atol_i = atol nominal_i
            atols *= np.asarray(nominals(), dtype=float)
        from ._cvode import CvodeStepper  # loaded where CVODE runs only

        return CvodeStepper(
            flow.rhs_function(),
            rtol,
            atols,
            flow.jacobian_function() if self.jacobian == "auto" else None,
            max_step=self.max_step,
            max_order=self.max_order,
        )

    # a method's own fixed steps: FIXED_STEPS' (`Scheme`)
    tableau: ClassVar = FIXED_STEPS.tableau
    error_order: ClassVar[int] = FIXED_STEPS.error_order
    step: ClassVar = FIXED_STEPS.step
