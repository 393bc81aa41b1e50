"""Guards relaxed into strips of width eps: the method of Burden et al., Fig. 12."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..core.integrators import Scheme
from ..core.recorder import Recorder
from ..core.records import State, Step
from ..core.system import HybridSystem
from ..flows.stiff import Stiff
from ._mode import compiled_mode
from ._relaxation import attempt as compiled_attempt
from .base import MAX_HALVINGS, Method, at_least_one, positive


@dataclass(frozen=True)
class Relaxation(Method):
    """Relax every guard into a strip of width eps and wait on it (Fig. 12).

    Each attempt tries a step of h from the current point (the last step is
    shortened to land on t_end), then h/2, h/4, ... -- the trial restarts at h
    every attempt, as n' restarts at 0 in Fig. 12, Step 4 -- and accepts the
    first trial point that lies in the relaxed domain D_j^eps:

    * in D_j (no guard beyond its surface): an ordinary step;
    * on a strip: beyond one or more guards, each by a depth tau <= eps,
      where tau is the guard value beyond the surface (-g for a falling
      guard): the transverse distance to the guard surface (Burden et al.,
      Def. 17), exact when g is a signed distance. The point is recorded at t_{k+1};
      it waits eps - tau on the strip (Steps 13-14), and at
      t_{k+1} + eps - tau the reset of the strip's edge acts on the point q
      where the step entered the guard (Step 15, R^eps(q, eps) = R(q)). The
      Event carries that reset time and x_before = q.

    No trial in D_j^eps after `max_halvings` halvings (Step 5, n' = inf)
    stops the run with Status.NO_PROGRESS.

    Strip coordinates (q, tau) of a trial point y = A^s(t, x): q is the point
    where the step's own curve sigma -> A^sigma(t, x), sigma in [0, s], first
    meets the guard, found by regula falsi on g with the method's integrator
    and kept on the domain side (g >= 0 for a falling guard, so a reset never
    leaves the state beyond the guard it just left). This projects along the
    flow and needs only `advance`, so it serves any Flow. If x itself already
    lies beyond the guard (a reset put it there: a simultaneous transition),
    the strip was entered at x and q = x. A guard with reset_at='beyond'
    (an FMU whose event mode tests its own condition) is reset at y itself,
    as the reference code does for every guard.

    Overlapping guards need no special code (Burden et al., Sec. VI): a point
    in several strips takes the deepest one, whose relaxed guard the strip
    flow reaches first (ties: the edge declared first); the other edges are
    recorded in the Event's `simultaneous` field, and if the reset leaves the
    state beyond one of them in the new mode, the next step finds it on that
    strip, so a simultaneous transition costs about two strip waits (2 eps).

    The steps, trials and projections run compiled (`_relaxation`), the
    plain steps many per call; a transition fires through `Method.fire`, or
    in the compiled loop where its edge is a self-loop with a compiled (or
    identity) reset, which then goes on unless the run's method reads each
    transition as it comes (`Completion`).

    With a tolerance (`rtol`, and `atol`) the trials start from the step
    Dormand-Prince 5(4) chooses (`integrator` 'dopri5'), h being the first
    one (again after every event); the halved trials and the guard point read
    the accepted step's dense output. eps keeps its meaning.

    Every fixed step's local error is estimated, and each strip's wait by the
    displacement eps abs(dx/dt) it costs; the run warns if either exceeds
    `error_warning` of a state's scale, naming the h or eps that would meet
    it (`Result.provenance['step_error']`, `['strip_error']`). The strip is
    judged by the state it displaces rather than against h: a wait of eps
    shifts every later state by eps abs(dx/dt) whatever the step, the O(eps)
    term of Thm. 27.

    Parameters
    ----------
    h : float
        Nominal step, s.
    eps : float
        Strip width: transverse depth (in the guard's units) and time on the
        strip (s); each transition is delayed by at most eps.
    integrator : {'midpoint', 'euler', 'rk4', 'dopri5'}
        Scheme A^h; midpoint (RK2) as in the paper's examples, 'dopri5'
        (adaptive) with `rtol`.
    rtol, atol : float, optional
        Tolerance of adaptive steps, as `Halving`'s.
    error_warning : float
        Relative local error of a fixed step, or displacement of a strip's
        wait, above which the run warns.
    max_halvings : int
        Bound on halvings in one attempt (Step 5).
    max_steps, max_events : int
        Bounds on accepted steps and on transitions.

    References
    ----------
    Burden, Gonzalez, Vasudevan, Bajcsy, Sastry, "Metrization and simulation
    of controlled hybrid systems", Fig. 12; strips Def. 14, strip vector field
    Def. 17 (eq. 13), relaxed guards and resets Def. 18 (eq. 14); rate
    O(eps) + O(h^order), Cor. 28.

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = Relaxation(h=1e-2, eps=1e-6).run(bouncing_ball(), t_end=1.0)
    >>> round(result.events[0].t, 5)
    0.45152
    """

    name: ClassVar[str] = "relaxation"
    passes_zeno: ClassVar[bool] = True  # each transition waits on its strip
    # a state on a strip is reset after its wait, whatever its rate (Burden et al.)
    resets_on_approach: ClassVar[bool] = False
    default_integrator: ClassVar[str] = "midpoint"
    walks_grid: ClassVar[bool] = True
    tolerates: ClassVar[bool] = True
    integrator: str | Scheme | Stiff | None = None
    eps: float = 1e-6
    max_halvings: int = 64
    rtol: float | None = None
    atol: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_tolerance()
        positive("eps", self.eps)
        at_least_one("max_halvings", self.max_halvings, MAX_HALVINGS)

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        mode = compiled_mode(
            system.mode(state.mode), self.scheme, self.h, self.tolerance(system)
        )
        return compiled_attempt(self, mode, state, t_end, log)

    @property
    def location_tolerance(self) -> float:
        """The strip width eps, s: a transition waits up to eps on its strip."""
        return self.eps

    def time_resolution(self, gap: float, rate: float) -> float:
        """A transition waits eps - tau on its strip after a step that ends up to
        eps deep (Fig. 12, Steps 13-14): up to (abs(gap) + eps) / abs(rate) + eps
        late."""
        return (abs(gap) + self.eps) / abs(rate) + self.eps if rate else math.inf
