"""Fixed steps, halved until a guard crossing is bracketed to a time tolerance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..core.errors import FmibridgeError
from ..core.system import HybridSystem
from ..flows.base import VectorField
from ._halving import _Walk
from .base import MAX_HALVINGS, Method, at_least_one, positive

LOCATE = ("halving", "illinois", "approach")  # Halving's ways to locate a crossing


@dataclass(frozen=True)
class Halving(Method):
    """Fixed steps of h; a step that crosses a guard is undone and halved.

    The crossing is narrowed (halved, or by Illinois regula falsi) to a bracket
    shorter than `t_tol` and the event placed by the secant of g across it; a
    flow that steps forward only steps short of the crossing extrapolated from
    its last points (Esposito and Kumar). docs/guide/halving.md has the rules.

    Parameters
    ----------
    h : float
        Nominal step, s; with `rtol`, the first step.
    integrator : {'rk4', 'euler', 'midpoint', 'dopri5'}
        Runge-Kutta scheme for native and Model Exchange flows: 'rk4' by
        default, 'dopri5' (adaptive) with `rtol`.
    rtol, atol : float, optional
        Tolerance of adaptive steps: error <= atol + rtol abs(x_i). atol
        defaults to rtol, rtol to the model's DefaultExperiment's, else 1e-5.
    error_warning : float
        Relative local error of a fixed step above which the run warns.
    t_tol : float
        Width of the bracket that locates a crossing, s.
    max_halvings : int
        Bound on halvings (or Illinois trials) in one attempt.
    locate : {'halving', 'illinois', 'approach'}
        How a crossed step is narrowed to `t_tol`; 'approach': a flow that
        steps itself approaches each guard, never crossing it (above).
    max_steps, max_events : int
        Bounds on accepted steps and on transitions.

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = Halving(h=1e-2).run(bouncing_ball(), t_end=1.0)
    >>> round(result.events[0].t, 9)
    0.451523641
    """

    name: ClassVar[str] = "halving"
    tolerates: ClassVar[bool] = True
    walk: ClassVar[type] = _Walk
    t_tol: float = 1e-10
    max_halvings: int = 64
    locate: str = "halving"
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_tolerance()
        positive("t_tol", self.t_tol)
        at_least_one("max_halvings", self.max_halvings, MAX_HALVINGS)
        if self.locate not in LOCATE:
            raise FmibridgeError(
                f"Halving: `locate` must be one of {list(LOCATE)}, got {self.locate!r}."
            )

    def _check(self, system: HybridSystem, t_end: float | None) -> float:
        """Refuse `locate="approach"` on a mode whose flow the method integrates."""
        t_end = super()._check(system, t_end)
        if self.locate == "approach":
            for mode in system.modes.values():
                if isinstance(mode.flow, VectorField):
                    raise FmibridgeError(
                        f"Halving(locate='approach'): mode {mode.name!r}'s flow is "
                        f"integrated by the method; a guard is approached only on "
                        f"flows that step themselves (Co-Simulation FMUs and "
                        f"couplings). Use 'halving' or 'illinois'."
                    )
        return t_end

    @property
    def location_tolerance(self) -> float:
        """The bracket that locates a crossing, t_tol, s."""
        return self.t_tol
