"""Fixed steps, halved until a guard crossing is bracketed to a time tolerance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..core.errors import FmibridgeError
from ..core.result import Recorder
from ..core.system import HybridSystem
from ..flows.stiff import stiff_named
from . import _halving, _stiff
from ._mode import compiled_mode
from .base import Method, State, Step, at_least_one, positive

STIFF_RTOL = 1e-5  # rtol of integrator='cvode' given none: FMPy's default for CVode


@dataclass(frozen=True)
class Halving(Method):
    """Fixed steps of h; a step that crosses a guard is undone and halved.

    Each attempt tries a step of h (the last step is shortened to land on
    t_end). If a guard is crossed, the step is undone (the flow is repeatable
    from the saved point: a native state, or a saved FMU state) and retried
    with h/2, h/4, ...; a half step that crosses nothing is accepted and the
    search goes on from its end. Once the crossing lies in a bracket shorter
    than `t_tol`, the crossing time is placed by the secant of g across the
    bracket, the state is advanced there (to the bracket's far end for a guard
    with reset_at='beyond'), the reset is applied and stepping resumes with h.
    A trial that gives non-finite states is halved like a crossing; if it
    stays non-finite down to `t_tol` next to a guard's surface (within
    NEAR_GUARD), that guard fires there.

    With ``locate="illinois"`` the first crossed step is not halved: the
    crossing is found inside it by Illinois regula falsi on sigma ->
    min_i g_i(A^sigma(t, x)) (each guard signed positive inside), until the
    bracket is below `t_tol`; then the same secant placement and reset apply.
    It needs about ten trial steps per event where halving needs two per
    halving (about 50 from h = 1e-2 to t_tol = 1e-10), and it records no
    samples inside the located step. A trial with non-finite states
    bisects the bracket instead. A CompiledFlow with compiled guards
    locates the crossing inside its compiled loop, with the same trials.

    Simultaneous transitions: guards crossed in the final bracket whose secant
    times lie within `t_tol` of the earliest are simultaneous. The edge
    declared first in the mode fires; the others are recorded in the event's
    `simultaneous` field and fire at the same instant on the next attempt if
    their guard, in the new mode, is still crossed (see `Guard.crossed`).
    This order is deterministic and needs no model-specific code.

    Parameters
    ----------
    h : float
        Nominal step, s.
    integrator : {'euler', 'midpoint', 'rk4'}
        Fixed-step scheme for native and Model Exchange flows.
    t_tol : float
        Width of the bracket that locates a crossing, s.
    max_halvings : int
        Bound on halvings (or Illinois iterations) in one attempt; hitting it
        stops the run with Status.NO_PROGRESS.
    locate : {'halving', 'illinois'}
        How a crossed step is narrowed to `t_tol`.
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
    t_tol: float = 1e-10
    max_halvings: int = 64
    locate: str = "halving"
    # the stiff integrator's tolerances (integrator='cvode'); see `flows.stiff`
    rtol: float | None = None
    atol: float | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        stiff = stiff_named(self.integrator)
        object.__setattr__(self, "_stiff", stiff)
        if stiff is not None:  # CVODE steps; a scheme keys the modes' guards only
            object.__setattr__(self, "integrator", "rk4")
            object.__setattr__(
                self, "rtol", STIFF_RTOL if self.rtol is None else self.rtol
            )
            positive("rtol", self.rtol)
        super().__post_init__()
        positive("t_tol", self.t_tol)
        at_least_one("max_halvings", self.max_halvings)
        if self.locate not in ("halving", "illinois"):
            raise FmibridgeError(
                f"Halving: `locate` must be 'halving' or 'illinois', got "
                f"{self.locate!r}."
            )

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        mode = compiled_mode(system.mode(state.mode), self.scheme, self.h)
        if self._stiff is not None:
            return _stiff.attempt(
                self, mode, self._stepper(mode), state, t_end, log,
                t_tol=self.t_tol, max_iter=self.max_halvings,
            )  # fmt: skip
        return _halving.attempt(self, mode, state, t_end, system.t0, log)

    def _stepper(self, mode):
        """CVODE on the mode's flow, built once per mode and tolerance."""
        key = ("cvode", self._stiff, self.rtol, self.atol)
        if key not in mode.work:
            flow = mode.mode.flow
            stepper = self._stiff.adaptive_stepper(flow, self.rtol, self.atol)
            mode.work[key] = stepper
        return mode.work[key]

    def _check_step(self, t0: float, t_end: float) -> None:
        if self._stiff is None:
            super()._check_step(t0, t_end)

    def parameters(self) -> dict[str, object]:
        """The parameters, with the stiff integrator by name."""
        values = super().parameters()
        if self._stiff is not None:
            values["integrator"] = self._stiff.name
        return values
