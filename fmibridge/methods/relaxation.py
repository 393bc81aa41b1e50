"""Guards relaxed into strips of width eps: the method of Burden et al., Fig. 12."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core.integrators import Scheme
from ..core.result import Event, Recorder, Status
from ..core.system import Guard, HybridSystem, Mode
from ..flows.base import RATE_STEP, guard_rates
from ..flows.compiled import BLOCK
from .base import (
    TIME_RTOL,
    Method,
    Rated,
    State,
    Step,
    at_least_one,
    non_finite,
    positive,
    reach_tol,
    reached,
    why_python,
)
from .compiled_mode import compiled_mode
from .watchdog import CRAWL_FRACTION

# Projection onto the guard (Illinois regula falsi along the step's own curve)
# stops once the guard point's |g| is below PROJECT_GTOL * eps: one millionth of
# the O(eps) error the strip costs anyway (Burden et al., Thm. 27).
PROJECT_GTOL = 1e-6
# Bound on projection iterations; Illinois converges superlinearly, about ten
# iterations reach PROJECT_GTOL from a bracket of one step.
PROJECT_MAX_ITER = 100
# Transitions one call of the compiled loop logs at most (a sticking phase
# chatters thousands of times); it is called again for more.
EVENTS = 1024


@dataclass(frozen=True)
class _Strip:
    """A trial point on the strip of edge `index` at transverse depth `tau`."""

    index: int
    tau: float
    g: float
    others: tuple[int, ...] = ()


_DOMAIN = object()  # the trial point lies in D_j (no guard beyond)
_OUTSIDE = object()  # the trial point lies outside D_j^eps: halve


def _depth(guard: Guard, g_start: float, g: float) -> float | None:
    """Return how far g lies beyond the guard's surface, or None if inside.

    'falling' guards are beyond where g < 0, 'rising' ones where g > 0;
    'either' guards (FMU event indicators) where g changed sign since the
    start of the step.
    """
    if guard.direction == "falling":
        return -g if g < 0.0 else None
    if guard.direction == "rising":
        return g if g > 0.0 else None
    return abs(g) if g * g_start < 0.0 else None


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

    Where the mode's flow, guards and resets are compiled (`compiled_mode`),
    the attempts run many at a time in one compiled call
    (`_relaxation_kernels.relax`), with the same results bit for bit.

    Parameters
    ----------
    h : float
        Nominal step, s.
    eps : float
        Strip width: transverse depth (in the guard's units) and time on the
        strip (s); each transition is delayed by at most eps.
    integrator : {'midpoint', 'euler', 'rk4'}
        Scheme A^h; midpoint (RK2) as in the paper's examples.
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
    integrator: str | Scheme = "midpoint"
    eps: float = 1e-6
    max_halvings: int = 64

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("eps", self.eps)
        at_least_one("max_halvings", self.max_halvings)

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        mode = system.mode(state.mode)
        compiled = compiled_mode(mode)
        if compiled is not None:
            relaxed = self._relax(mode, compiled, state, t_end, log)
            if relaxed is not None:
                return relaxed
        block = self.steps_inside(mode, state, t_end, log)
        if block is not None:
            return block
        log.loops[f"{mode.name}: python steps{why_python(mode)}"] += 1
        g0 = self.guards_at(mode, state.t, state.x)
        trial = self._trial(mode, state, g0, t_end, log)
        if isinstance(trial, Step):
            return trial
        hs, y, where, rates = trial
        log.n_steps += 1
        t1 = t_end if reached(state.t + hs, t_end, self.h) else state.t + hs
        log.sample(t1, y, mode.name)
        if where is _DOMAIN:
            return Step(Rated(t1, y, mode.name, *rates))
        edge = mode.edges[where.index]
        if getattr(edge.guard, "reset_at", "surface") == "beyond":
            q = y  # the reset tests its own condition (an FMU's event mode)
        else:
            q = self._guard_point(mode, state, where, g0[where.index], hs)
        t_reset = t1 + self.eps - where.tau  # Fig. 12, Step 13
        if t_reset > t_end:
            if t1 < t_end:  # the run ends while waiting on the strip (Step 14)
                log.sample(t_end, q, mode.name)
            return Step(State(t_end, q, mode.name))
        others = tuple(mode.edges[i].name for i in where.others)
        return Step(self.fire(mode, State(t_reset, q, mode.name), edge, log, others))

    def _relax(self, mode: Mode, compiled, state: State, t_end: float, log) -> Step:
        """Take the attempts from `state` in one compiled call
        (`_relaxation_kernels.relax`) and log them as the Python code does;
        return None where the kernel left the first attempt to the Python code."""
        kernels = _kernels()
        x = np.ascontiguousarray(state.x, dtype=float)
        n_x, n_g = x.size, len(mode.edges)
        samples = (np.empty(BLOCK), np.empty((BLOCK, n_x)))
        events = (
            np.empty(EVENTS),
            np.empty(EVENTS, dtype=np.int64),
            np.empty(EVENTS, dtype=np.int64),
            np.empty((EVENTS, n_x)),
            np.empty((EVENTS, n_g + 1), dtype=np.int64),
        )
        info, x_end = np.empty(kernels.INFO_SIZE), np.empty(n_x)
        settings = np.array([self.eps, self.h, RATE_STEP * self.h, self.max_halvings])
        limits = np.array(
            [
                t_end,
                reach_tol(t_end, self.h),
                self.max_steps - log.n_steps,
                self.max_events - len(log.events) - log.n_silent_events,
                CRAWL_FRACTION * self.h,
                TIME_RTOL * self.h,
            ]
        )
        n = kernels.relax(
            *compiled.functions, (*compiled.edges, *self.scheme.arrays),
            float(state.t), x, settings, limits, samples, events, info, x_end,
        )  # fmt: skip
        if n == 0:
            return None
        log.loops[f"{mode.name}: compiled steps and strips"] += 1
        log.n_steps += int(info[kernels.N_STEPS])
        log.n_rejected += int(info[kernels.N_REJECTED])
        log.n_silent_events += int(info[kernels.N_SILENT])
        self._replay(mode, samples, events, int(info[kernels.N_EVENTS]), n, log)
        return Step(State(float(info[kernels.T_END_STATE]), x_end, mode.name))

    @staticmethod
    def _replay(mode: Mode, samples, events, n_events: int, n: int, log) -> None:
        """Log the kernel's samples and transitions in the order `fire` logs them."""
        (ts, xs), (times, edges, rows, _, groups) = samples, events
        k = 0
        for j in range(n_events):
            at, edge = int(rows[j]), mode.edges[int(edges[j])]
            if at > k:
                log.samples(ts[k:at], xs[k:at], mode.name)
            before, after = xs[at].copy(), xs[at + 1].copy()
            log.sample(float(times[j]), before, mode.name)
            log.sample(float(times[j]), after, edge.target)
            count = int(groups[j, -1])
            others = tuple(mode.edges[i].name for i in groups[j, 1:count])
            log.event(
                Event(
                    float(times[j]),
                    edge.name,
                    mode.name,
                    edge.target,
                    before,
                    after,
                    others,
                )  # fmt: skip
            )
            k = at + 2
        if n > k:
            log.samples(ts[k:n], xs[k:n], mode.name)

    def time_resolution(self, gap: float, rate: float) -> float:
        """A transition waits eps - tau on its strip after a step that ends up to
        eps deep (Fig. 12, Steps 13-14): up to (abs(gap) + eps) / abs(rate) + eps
        late."""
        return (abs(gap) + self.eps) / abs(rate) + self.eps if rate else math.inf

    def _trial(self, mode: Mode, state: State, g0: list[float], t_end: float, log):
        """Find the step of Fig. 12, Steps 4-5: h, h/2, ... until the trial point
        lies in D_j^eps; return (hs, y, where, (rates, dx/dt) at y) or the Step
        that stops.

        A trial in the domain whose guard may have dipped beyond its surface and
        come back inside the step (`Method.dip`) is replaced by the trial to the
        dip's bottom, classified like any other.
        """
        t, x = state.t, state.x
        r0, slope = (
            (state.rates, state.slope) if isinstance(state, Rated) else (None,) * 2
        )
        hs = min(self.h, t_end - t)
        for _ in range(self.max_halvings + 1):
            y = self.advance(mode, t, x, hs, slope)
            where, rates = self._classify(mode, g0, t + hs, y), (None, None)
            if where is _DOMAIN:
                g1 = [edge.guard(t + hs, y) for edge in mode.edges]
                rates = self.rated(mode, t + hs, y, g1)
                dip = self.dip(mode, (t, x, g0, r0, slope), (hs, g1, rates[0]), log)
                if dip is not None:
                    inside = self._classify(mode, g0, t + dip[0], dip[1])
                    if inside is not _DOMAIN:  # the guard dipped beyond: go there
                        hs, y, where, rates = dip[0], dip[1], inside, (None, None)
            if where is not _OUTSIDE:
                return hs, y, where, rates
            log.n_rejected += 1
            if t + hs / 2 == t:  # a shorter trial would not advance time
                return self._no_step(mode, state, hs, log)
            hs /= 2
        return self._no_step(mode, state, 2 * hs, log)

    def _no_step(self, mode: Mode, state: State, hs: float, log: Recorder) -> Step:
        """Stop after Step 5's n' = inf (or once halving stops advancing time): an
        error naming the guard or the flow if the last trial, of hs, was not
        finite, else Status.NO_PROGRESS."""
        y = self.advance(mode, state.t, state.x, hs)
        g = [edge.guard(state.t + hs, y) for edge in mode.edges]
        if not (np.all(np.isfinite(y)) and all(map(math.isfinite, g))):
            raise non_finite(mode, state.t + hs, y, g)
        return Step(
            state,
            Status.NO_PROGRESS,
            f"No trial step from t = {state.t!r} in mode {mode.name!r} lands in the "
            f"domain or a strip after {self.max_halvings} halvings (max_halvings).",
        )

    def _classify(self, mode: Mode, g0: list[float], t1: float, y: np.ndarray):
        """Return _DOMAIN, _OUTSIDE or the _Strip the trial point y lies on."""
        if not np.all(np.isfinite(y)):
            return _OUTSIDE
        beyond: list[tuple[float, int, float]] = []
        for i, edge in enumerate(mode.edges):
            g = edge.guard(t1, y)
            if not np.isfinite(g):
                return _OUTSIDE
            tau = _depth(edge.guard, g0[i], g)
            if tau is None:
                continue
            if tau > self.eps:
                return _OUTSIDE
            beyond.append((-tau, i, g))  # deepest first, then declaration order
        if not beyond:
            return _DOMAIN
        beyond.sort()
        (neg_tau, index, g), rest = beyond[0], beyond[1:]
        return _Strip(index, -neg_tau, g, tuple(i for _, i, _ in rest))

    def _guard_point(
        self, mode: Mode, state: State, strip: _Strip, g_start: float, s: float
    ) -> np.ndarray:
        """Return q: where the step's curve A^sigma(t, x) first meets the guard.

        Illinois regula falsi on sigma in [0, s], keeping the domain-side end.
        """
        guard, t, x = mode.edges[strip.index].guard, state.t, state.x
        if _depth(guard, g_start, g_start) is not None:
            return x  # a reset left the state beyond this guard: it entered here
        lo, q, g_q = 0.0, x, g_start
        if abs(g_start) <= PROJECT_GTOL * self.eps:
            # on the surface (a reset left it there): the curve may rise inside
            # first and come back (a hop shorter than the step)
            inside = self._inside_point(mode, guard, state, s)
            if inside is None:
                return x  # it leaves at once: it enters the strip here
            lo, q, g_q = inside
        hi, f_lo, f_hi = s, g_q, strip.g
        side = 0
        for _ in range(PROJECT_MAX_ITER):
            if abs(g_q) <= PROJECT_GTOL * self.eps:
                break
            sigma = lo + (hi - lo) * f_lo / (f_lo - f_hi)
            if not lo < sigma < hi:  # the bracket is at round-off width
                break
            z = self.advance(mode, t, x, sigma)
            g = guard(t + sigma, z)
            if not (np.all(np.isfinite(z)) and np.isfinite(g)):
                hi, f_hi, side = sigma, -f_lo, 0  # next trial: the bracket's middle
            elif _depth(guard, g_start, g) is None:
                lo, f_lo, q, g_q = sigma, g, z, g
                f_hi, side = (f_hi / 2 if side == -1 else f_hi), -1
            else:
                hi, f_hi = sigma, g
                f_lo, side = (f_lo / 2 if side == 1 else f_lo), 1
        return q

    def _inside_point(self, mode: Mode, guard: Guard, state: State, s: float):
        """Return (sigma, z, g) inside the guard on the step's curve, by more than
        the projection's tolerance, or None.

        None at once where the state moves out of the domain at the start (its
        rate, `Method.rates`); else probes sigma = eps, 2 eps, 4 eps, ... below
        s, so a short hop costs a few probes: a dip inside the domain shorter
        than the strip time eps moves q by O(eps) only (Thm. 27).
        """
        t, x = state.t, state.x
        side = {"falling": 1.0, "rising": -1.0}.get(guard.direction)
        if side is not None:
            rate = guard_rates(mode.flow, [guard], t, x, [guard(t, x)], self.h)
            if rate is not None and not side * rate[0] > 0.0:
                return None
        sigma = self.eps
        for _ in range(self.max_halvings):
            if sigma >= s:
                break
            z = self.advance(mode, t, x, sigma)
            g = guard(t + sigma, z)
            inside = np.isfinite(g) and _depth(guard, 0.0, g) is None
            if inside and abs(g) > PROJECT_GTOL * self.eps:
                return sigma, z, g
            sigma *= 2
        return None


@functools.cache
def _kernels():
    """Import the compiled loop on first use (numba loads it from its cache)."""
    from . import _relaxation_kernels as module

    return module
