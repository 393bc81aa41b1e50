"""Fixed steps, halved until a guard crossing is bracketed to a time tolerance."""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core.bracket import End, illinois, is_bracket
from ..core.errors import FmibridgeError
from ..core.result import Event, Recorder, Status
from ..core.system import Edge, HybridSystem, Mode
from ..flows.base import RATE_STEP, Bracket, VectorField, compiled_steps
from ..flows.compiled import BLOCK
from .base import (
    TIME_RTOL,
    Method,
    Rated,
    State,
    Step,
    at_least_one,
    grid_step,
    non_finite,
    positive,
    step_end,
    why_python,
)
from .compiled_mode import compiled_mode
from .watchdog import ON_SURFACE

# A trial of length <= t_tol that gives non-finite states while a guard is within
# NEAR_GUARD of zero is that guard's event: the right-hand side is undefined beyond
# it (sqrt of a negative gap). 1e-8 (SI units) is far above the round-off of a
# 1e-10 s bracket and far below any physical gap a model resolves.
NEAR_GUARD = 1e-8


@dataclass(frozen=True)
class Crossing:
    """A guard crossed inside the bracket [t, t + h], and its secant time."""

    edge: Edge
    t: float


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

    def __post_init__(self) -> None:
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
        mode = system.mode(state.mode)
        firing = compiled_mode(mode) if self.locate == "illinois" else None
        if firing is not None:
            block, bracket, fired = self._fly_and_fire(mode, firing, state, t_end, log)
            if fired is not None:
                return fired
        else:
            block, bracket = self.steps_to_crossing(
                mode,
                state,
                t_end,
                log,
                locate_tol=self.t_tol if self.locate == "illinois" else None,
                max_iter=self.max_halvings,
            )
        if bracket is not None:
            return self._fire_bracket(mode, bracket, log)
        if block is not None:
            return block
        log.loops[f"{mode.name}: python steps{why_python(mode)}"] += 1
        return self._step(mode, state, (system.t0, t_end), log)

    def _fly_and_fire(self, mode: Mode, firing, state: State, t_end, log):
        """Take the steps between events, locate the crossing and fire it in one
        compiled call (`_halving_kernels.fly_and_fire`); return the block of steps,
        the Bracket where the kernel located but did not fire, and the Step after
        the event where it fired (else None; the block is None where it fired)."""
        kernels = _kernels()
        x = np.ascontiguousarray(state.x, dtype=float)
        n_x, n_g = x.size, len(mode.edges)
        ts, xs = np.empty(BLOCK), np.empty((BLOCK, n_x))
        info = np.empty(kernels.INFO_SIZE)
        bracket = (np.empty(n_x), np.empty((2, n_g)), np.empty(3))
        events = (np.empty(n_x), np.empty(n_x), np.empty(n_g, dtype=np.int64))
        limits = (
            t_end,
            min(self.max_steps - log.n_steps, BLOCK),
            TIME_RTOL * self.h,
            self.t_tol,
            self.max_halvings,
            RATE_STEP * self.h,
        )
        n = kernels.fly_and_fire(
            *firing.functions, (*firing.edges, *self.scheme.arrays), float(state.t), x,
            float(self.h), limits, ts, xs, bracket, events, info,
        )  # fmt: skip
        log.loops[f"{mode.name}: compiled steps and firing"] += 1
        if n:
            log.n_steps += n
            log.samples(ts[:n], xs[:n], mode.name)
        if info[kernels.CODE] != kernels.NONE:
            return None, None, Step(self._fired(mode, events, info, log))
        block = (
            None
            if not n
            else Step(State(float(ts[n - 1]), xs[n - 1].copy(), mode.name))
        )
        if bracket[2][2] < 0:
            return block, None, None
        return block, compiled_steps(state.t, x, ts, xs, n, *bracket).bracket, None

    def _fired(self, mode: Mode, events: tuple, info: np.ndarray, log) -> State:
        """Log the event `fly_and_fire` fired, as `fire` does; a reset it refused
        is fired again in Python, which raises the error that names it."""
        kernels = _kernels()
        x_event, x_after, group = events
        t, code = float(info[kernels.T_EVENT]), info[kernels.CODE]
        log.n_rejected += int(info[kernels.N_TRIALS])
        edge = mode.edges[int(info[kernels.EDGE])]
        size = int(info[kernels.N_GROUP])
        others = tuple(mode.edges[k].name for k in group[1:size]) if size > 1 else ()
        state = State(t, x_event, mode.name)
        if code == kernels.BAD_RESET:
            return self.fire(mode, state, edge, log, others)
        log.sample(t, x_event, mode.name)
        if code == kernels.SILENT:
            log.n_silent_events += 1
            return state
        log.sample(t, x_after, edge.target)
        log.event(Event(t, edge.name, mode.name, edge.target, x_event, x_after, others))
        return State(t, x_after, edge.target)

    def _step(self, mode: Mode, state: State, span: tuple, log: Recorder) -> Step:
        """Take one step of h from `state`, halved into a crossing if one lies in it
        (one accepted half step after each halving); span is (t0, t_end)."""
        t0, t_end = span
        t, x = state.t, state.x
        g0 = self.guards_at(mode, t, x)
        r0, slope = (
            (state.rates, state.slope) if isinstance(state, Rated) else (None,) * 2
        )
        # communication points on t0 + k h for the FMUs that compare them with
        # their own time; the compiled loops that serve vector fields sum h
        grid = None if isinstance(mode.flow, VectorField) else t0
        hs = min(grid_step(t, self.h, grid), t_end - t)
        n_halvings, after_half_step, was_crossed, crossing = 0, False, set(), None
        for _ in range(2 * self.max_halvings + 2):  # a halving, an accepted half
            y = self.advance(mode, t, x, hs, slope)
            g1 = self._guards(mode, t + hs, y)
            crossed, r1, s1 = self._crossed(mode, g0, g1, y), None, None
            if not crossed and n_halvings and not after_half_step:
                if _stalled(mode, x, y):  # the half of a crossed step left x as it was
                    return Step(self._fire_unresolved(mode, t, x, g0, *crossing, log))
            if crossed and crossed is not _NON_FINITE:
                crossing = (hs, g1, crossed)
            if not crossed:
                r1, s1 = self.rated(mode, t + hs, y, g1)
                dip = self.dip(mode, (t, x, g0, r0, slope), (hs, g1, r1), log)
                if dip is not None and self._crossed(mode, g0, dip[2], dip[1]):
                    hs, y, g1 = dip  # the crossing lies before the dip's bottom
                    crossed = self._crossed(mode, g0, g1, y)
            if not crossed:
                stuck = self._stuck(was_crossed, g0, g1)
                if stuck is not None:  # crossed at once from the surface: fire here
                    return Step(self._fire(mode, t, x, 0.0, g0, g0, [stuck], log))
                log.n_steps += 1
                t = step_end(t, hs, t_end, self.h, grid)
                x, g0, r0, slope = y, g1, r1, s1
                log.sample(t, x, mode.name)
                if n_halvings == 0 or after_half_step or t == t_end:
                    return Step(Rated(t, x, mode.name, r1, s1))
                after_half_step = True  # the crossing lies in the next hs: close in
                continue
            if crossed is not _NON_FINITE:
                was_crossed.update(crossed)
                if hs <= self.t_tol:
                    return Step(self._fire(mode, t, x, hs, g0, g1, crossed, log))
                if self.locate == "illinois":
                    located = self._illinois(mode, (t, x, slope), hs, g0, g1, log)
                    if located is not None:
                        return located
            if n_halvings == self.max_halvings:
                break
            if crossed is _NON_FINITE and hs <= self.t_tol:
                near = self._nearest_guard(mode, g0)
                if near is None:
                    raise non_finite(mode, t + hs, y, g1)
                # the flow is undefined just beyond this guard: it fires here
                return Step(self._fire(mode, t, x, 0.0, g0, g0, [near], log))
            n_halvings, after_half_step = n_halvings + 1, False
            log.n_rejected += 1
            hs /= 2
        return Step(
            State(t, x, mode.name),
            Status.NO_PROGRESS,
            f"No step from t = {t!r} in mode {mode.name!r} after {n_halvings} "
            f"halvings (max_halvings); guards {self._named(mode, g0)}.",
        )

    @staticmethod
    def _stuck(was_crossed: set[int], g0: list[float], g1: list[float]) -> int | None:
        """Return a guard that a longer trial crossed but that this trial leaves
        unchanged on its surface: the state sits on it and the flow pushes it
        beyond below the resolution of the state (a body resting on a stop),
        so it crosses at the step's start."""
        stuck = [
            i
            for i in sorted(was_crossed)
            if g1[i] == g0[i] and abs(g0[i]) <= ON_SURFACE
        ]
        return stuck[0] if stuck else None

    @staticmethod
    def _named(mode: Mode, g: list[float]) -> dict[str, float]:
        return {edge.guard.name: g_i for edge, g_i in zip(mode.edges, g, strict=True)}

    def _fire(self, mode, t, x, hs, g0, g1, crossed, log) -> State:
        """Place the crossing by the secant of g in [t, t + hs] and fire its edge."""
        hits = []
        for i in crossed:
            a, b = g0[i], g1[i]
            frac = a / (a - b) if (a - b) != 0 and np.sign(a) != np.sign(b) else 0.0
            hits.append(Crossing(mode.edges[i], t + hs * min(max(frac, 0.0), 1.0)))
        first = min(c.t for c in hits)
        group = [c for c in hits if c.t - first <= self.t_tol]
        winner = group[0]  # edges keep declaration order: first declared fires
        if winner.edge.guard.reset_at == "beyond":
            winner = Crossing(winner.edge, t + hs)
        x_event = x if winner.t == t else self.advance(mode, t, x, winner.t - t)
        others = tuple(c.edge.name for c in group[1:])
        state = State(winner.t, x_event, mode.name)
        return self.fire(mode, state, winner.edge, log, others)

    def _fire_unresolved(self, mode, t, x, g0, hs, g1, crossed, log) -> State:
        """Fire a crossing the flow cannot narrow below hs, and say so.

        The flow did not advance on a step of hs / 2 from (t, x) (a
        Co-Simulation FMU with fixed internal steps ignores shorter
        communication steps), so no state inside [t, t + hs] exists: the
        event fires at t + hs, the first state the flow gives beyond the
        guard, with a warning that names the flow, the guard and the
        resolution reached.
        """
        y = self.advance(mode, t, x, hs)  # the FMU back at the end of the crossing
        i = min(crossed, key=lambda k: g0[k] / (g0[k] - g1[k]))
        edge = mode.edges[i]
        source = mode.flow.describe().get("fmu", type(mode.flow).__name__)
        log.warn(
            f"{source}: guard {edge.name!r} was crossed between t = {t:.9g} s and "
            f"{t + hs:.9g} s, but a step of {hs / 2:.3g} s from t left the state "
            f"unchanged (the flow does not advance on steps that short), so the "
            f"crossing is located only to {hs:.3g} s, not t_tol = {self.t_tol:.3g} "
            f"s: the event is placed at t = {t + hs:.9g} s, where the guard is "
            f"{g1[i]:.3g}."
        )
        others = tuple(mode.edges[k].name for k in crossed if k != i)
        return self.fire(mode, State(t + hs, y, mode.name), edge, log, others)

    def _illinois(self, mode, start, hs, g0, g1, log) -> Step | None:
        """Narrow the crossed step [t, t + hs] by Illinois regula falsi, then fire;
        `start` is (t, x, dx/dt there or None).

        Works on G(sigma) = min_i s_i g_i(A^sigma(t, x)) (s_i = +1 falling, -1
        rising; for 'either', the sign of g_i(t), or against g_i(t + hs) from
        zero), so G >= 0 until the first guard is reached. Returns None (halve
        instead) when G does not change sign over the step: a guard starts
        beyond its surface by more than round-off (`bracket.is_bracket`; a
        reset leaves it one ulp beyond), or only such a guard fired.
        `flows._kernels.locate` does the same compiled.
        """
        t, x, slope = start
        signs = [
            _inward(e.guard, a, b) for e, a, b in zip(mode.edges, g0, g1, strict=True)
        ]
        f0, f1 = min(map(operator.mul, signs, g0)), min(map(operator.mul, signs, g1))
        if not is_bracket(f0, f1):
            return None
        n_trials = 0

        seen = {x.tobytes(): 0.0}  # states the trials gave, and at which sigma

        def trial(sigma: float) -> End:
            nonlocal n_trials
            y = self.advance(mode, t, x, sigma, slope)
            if seen.setdefault(y.tobytes(), sigma) != sigma and _stalled(mode, y, y):
                raise _Stalled  # one state for two steps: halving says what it can

            g = self._guards(mode, t + sigma, y)
            n_trials += 1
            finite = np.isfinite(y).all() and all(map(math.isfinite, g))
            f = min(map(operator.mul, signs, g)) if finite else math.nan
            return End(sigma, f, (y, g))

        try:
            lo, hi = illinois(
                trial,
                End(0.0, f0, (x, g0)),
                End(hs, f1, (None, g1)),
                width=self.t_tol,
                max_iter=self.max_halvings,
            )
        except _Stalled:
            log.n_rejected += n_trials
            return None
        (x_lo, g_lo), (_, g_hi) = lo.data, hi.data
        located = Bracket(t, x, lo.sigma, hi.sigma, x_lo, g_lo, g_hi, n_trials)
        return self._fire_bracket(mode, located, log)

    def _fire_bracket(self, mode: Mode, bracket: Bracket, log: Recorder) -> Step:
        """Fire the crossing located in `bracket` (by `_illinois` or by the flow).

        Stops with NO_PROGRESS if the bracket is still wider than t_tol. A
        non-finite far end means the flow is undefined just beyond: the guard
        within NEAR_GUARD of its surface at the near end fires there.
        """
        log.n_rejected += bracket.n_trials
        b, t = bracket, bracket.t + bracket.lo
        if b.hi - b.lo > self.t_tol:
            g0 = self._guards(mode, b.t, b.x)
            stuck = self._stuck(set(range(len(g0))), g0, b.g_lo)
            if stuck is not None and b.lo > 0.0:  # the state rests on that guard
                return Step(self._fire(mode, b.t, b.x, 0.0, g0, g0, [stuck], log))
            return Step(
                State(b.t, b.x, mode.name),
                Status.NO_PROGRESS,
                f"The crossing after t = {b.t!r} in mode {mode.name!r} is still "
                f"bracketed to {b.hi - b.lo:.3g} s after {b.n_trials} trials "
                f"(max_halvings); guards {self._named(mode, b.g_lo)}.",
            )
        if not all(map(math.isfinite, b.g_hi)):
            near = self._nearest_guard(mode, b.g_lo)
            if near is None:
                y = self.advance(mode, b.t, b.x, b.hi)
                raise non_finite(mode, b.t + b.hi, y, self._guards(mode, b.t + b.hi, y))
            return Step(self._fire(mode, t, b.x_lo, 0.0, b.g_lo, b.g_lo, [near], log))
        # the guard beyond at the far end, also where it was already beyond by
        # round-off at the near end (a reset leaves it there): no sign change
        crossed = self._crossed(mode, b.g_lo, b.g_hi, b.x_lo) or [
            _deepest(mode, b.g_lo, b.g_hi)
        ]
        width = b.hi - b.lo
        return Step(self._fire(mode, t, b.x_lo, width, b.g_lo, b.g_hi, crossed, log))

    @staticmethod
    def _nearest_guard(mode: Mode, g0: list[float]) -> int | None:
        """Index of a guard within NEAR_GUARD of its surface, if any (the closest)."""
        near = [(abs(g), i) for i, g in enumerate(g0) if abs(g) <= NEAR_GUARD]
        return min(near)[1] if near else None

    @staticmethod
    def _guards(mode: Mode, t: float, x: np.ndarray) -> list[float]:
        return [edge.guard(t, x) for edge in mode.edges]

    @staticmethod
    def _crossed(mode: Mode, g0: list[float], g1: list[float], y: np.ndarray):
        """Return indices of crossed guards, or _NON_FINITE for a bad trial."""
        if not (np.isfinite(y).all() and all(map(math.isfinite, g1))):
            return _NON_FINITE
        return [
            i for i, edge in enumerate(mode.edges) if edge.guard.crossed(g0[i], g1[i])
        ]


_NON_FINITE = object()


def _deepest(mode: Mode, g_lo: list[float], g_hi: list[float]) -> int:
    """Return the guard that lies deepest beyond its surface at the far end."""
    signed = [
        _inward(e.guard, a, b) * b
        for e, a, b in zip(mode.edges, g_lo, g_hi, strict=True)
    ]
    return signed.index(min(signed))


class _Stalled(Exception):  # noqa: N818 - a signal inside _illinois, never escapes
    """A trial step left the state unchanged: the flow does not advance on it."""


def _stalled(mode: Mode, x: np.ndarray, y: np.ndarray) -> bool:
    """True if a flow the master does not integrate gave the state y equal to x
    (from a step, or for two steps of different length: a Co-Simulation FMU
    that ignores short steps); a vector field's state moves by its right-hand
    side."""
    return (
        not isinstance(mode.flow, VectorField) and x.size > 0 and (np.array_equal(x, y))
    )


def _inward(guard, g_start: float, g_end: float) -> float:
    """Return the sign that makes the guard's value positive inside its domain."""
    if guard.direction == "falling":
        return 1.0
    if guard.direction == "rising":
        return -1.0
    if g_start != 0.0:
        return 1.0 if g_start > 0.0 else -1.0
    return -1.0 if g_end > 0.0 else 1.0  # from zero, the step's side is beyond


@functools.cache
def _kernels():
    """Import the compiled firing on first use (numba loads it from its cache)."""
    from . import _halving_kernels as module

    return module
