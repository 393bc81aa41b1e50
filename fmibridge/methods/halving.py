"""Fixed steps, halved until a guard crossing is bracketed to a time tolerance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..core.errors import FmibridgeError
from ..core.recorder import Recorder
from ..core.records import State, Step
from ..core.system import HybridSystem
from ..flows.base import VectorField
from ._halving import attempt as compiled_attempt
from ._mode import compiled_mode
from .base import MAX_HALVINGS, Method, at_least_one, positive

LOCATE = ("halving", "illinois", "approach")  # Halving's ways to locate a crossing


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
    core.records.ON_SURFACE), that guard fires there.

    With a tolerance (`rtol`, and `atol`) the steps between events are
    chosen by Dormand-Prince 5(4) (`integrator` 'dopri5'): each accepted step's
    error meets the tolerance, h is only the first step (again after every
    event), and the halvings or Illinois trials that locate a crossing read
    the accepted step's dense output (its continuous extension of order 4), so
    they cost no evaluation of dx/dt; t_tol keeps its meaning.

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
    their guard, in the new mode, is still crossed (see `core.events.crossed`).
    This order is deterministic and needs no model-specific code.

    A flow that steps forward only (a Co-Simulation FMU without state saving,
    `forward_only`) is not halved: each communication step stops short of the
    crossing extrapolated from the guards' values at the last three
    communication points (Esposito and Kumar's control law on the step), the
    crossing is taken by a step of t_tol and the event placed at its end (where
    the FMU is); a step that still lands beyond is undone by the flow's replay,
    or the run stops with Status.OVERSTEPPED (`_halving._forward_step`). With
    ``locate="approach"`` every flow that steps itself (Co-Simulation FMUs and
    couplings) is stepped so: no step is undone to locate a crossing, so an
    FMU whose state save is costly is rarely saved (a step that still lands
    beyond is undone as any other: restored, or replayed). Its impacts differ
    from halving's by less than the coupling error, and converge at the
    coupling's order as halving's do.

    Every fixed step's local error is estimated (`core.integrators`); the run
    warns if one exceeds `error_warning` of its state's scale, naming the step
    that would meet it (`Result.provenance['step_error']`). Estimates above it
    that grow geometrically step over step mean the step is unstable on the
    model: the run stops with an FmibridgeError that names a stable step
    (`core._local_errors`). Dormand-Prince's steps held by stability on a
    stiff model over a long span stop it likewise, naming CVODE
    (`flows._stepper.EmbeddedStepper`).

    Parameters
    ----------
    h : float
        Nominal step, s; with `rtol`, the first step.
    integrator : {'rk4', 'euler', 'midpoint', 'dopri5'}
        Runge-Kutta scheme for native and Model Exchange flows: 'rk4' by
        default, 'dopri5' (adaptive) with `rtol`.
    rtol, atol : float, optional
        Tolerance of adaptive steps (`integrator` 'dopri5'): the scaled error
        of each step, atol + rtol abs(x_i), at most 1. atol defaults to rtol;
        'dopri5' without rtol takes the model's DefaultExperiment tolerance,
        else 1e-5.
    error_warning : float
        Relative local error of a fixed step above which the run warns.
    t_tol : float
        Width of the bracket that locates a crossing, s.
    max_halvings : int
        Bound on halvings (or Illinois iterations) in one attempt; hitting it
        stops the run with Status.NO_PROGRESS.
    locate : {'halving', 'illinois', 'approach'}
        How a crossed step is narrowed to `t_tol`; 'approach': no step
        crosses, a flow that steps itself approaches each guard (above).
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
    walks_grid: ClassVar[bool] = True
    tolerates: ClassVar[bool] = True
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

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        mode = compiled_mode(
            system.mode(state.mode), self.scheme, self.h, self.tolerance(system)
        )
        return compiled_attempt(self, mode, state, t_end, system.t0, log)

    @property
    def location_tolerance(self) -> float:
        """The bracket that locates a crossing, t_tol, s."""
        return self.t_tol
