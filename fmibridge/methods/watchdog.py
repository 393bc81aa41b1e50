"""The run's watchdog: Zeno accumulations, chatter and stalls, for every method.

ZENO_SERIES transitions of one edge whose intervals shrink geometrically
predict t_inf = t_last + dt_last r / (1 - r): a warning, and a stop only where
the run cannot go on (the rules: docs/guide/completion.md). Relaxation, whose
executions pass Zeno points (Burden et al., Sec. IV), is watched for stalls only.

References
----------
Or and Ames, Sec. III (Zeno executions, Def. 3) and Sec. V (truncation).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import pairwise
from typing import NamedTuple

import numpy as np

from ..core.events import SIDES
from ..core.recorder import Recorder
from ..core.records import ON_SURFACE, TIME_RTOL, Event, Status
from ..flows.base import VectorField

# Transitions in the series the Zeno test reads: 5 intervals, 4 ratios.
ZENO_SERIES = 6
# Largest spread of the interval ratios still called geometric (as completion's).
RATIO_SPREAD = 0.1
# Largest ratio called an accumulation: closer to 1, ZENO_SERIES intervals cannot
# tell a Zeno series from a steady chatter.
MAX_RATIO = 0.95
# Units in the last place of t below which no two transitions can be told apart:
# the round-off of the sums of times that place them (t + sigma, t + hs).
TIME_ULPS = 4
# Transitions of one edge, more than one per step h, that make a chatter.
CHATTER_EVENTS = 50
# Attempts in a row that end at the same time: far more than any simultaneous
# transition needs (one per edge).
STALL_ATTEMPTS = 100
# A window of attempts that must advance time by CRAWL_FRACTION * h at least: a
# located crossing takes about 2 max_halvings attempts, far fewer.
CRAWL_ATTEMPTS = 1000
CRAWL_FRACTION = 1e-3


class Stop(NamedTuple):
    """Why the run stops: the Status and the detail naming what is at fault."""

    status: Status
    detail: str


class Accumulation(NamedTuple):
    """A geometric series of transitions of one edge and its limit t_inf."""

    edge: str
    t_first: float
    t_inf: float
    ratio: float
    tail: float
    n_events: int

    def describe(self, guard: str) -> str:
        return (
            f"Edge {self.edge!r} (guard {guard!r}) fired {self.n_events} times, the "
            f"intervals shrinking by a factor {self.ratio:.3g}: they accumulate at "
            f"t = {self.t_inf:.9g} s."
        )


def accumulation(
    events: list[Event], n_run: int, end: int | None = None
) -> Accumulation | None:
    """Return the geometric series that the events before `end` (default: all)
    end, if any; `n_run` counts the last one's edge's transitions in a row."""
    if n_run < ZENO_SERIES:
        return None
    end = len(events) if end is None else end
    times = [e.t for e in events[end - ZENO_SERIES : end]]  # floats: no numpy
    intervals = [b - a for a, b in pairwise(times)]
    if min(intervals) <= 0.0:
        return None
    ratios = [b / a for a, b in pairwise(intervals)]
    r = max(ratios)
    if r > MAX_RATIO or r - min(ratios) > RATIO_SPREAD:
        return None
    tail = intervals[-1] * r / (1.0 - r)
    first = events[end - n_run].t
    return Accumulation(events[end - 1].edge, first, times[-1] + tail, r, tail, n_run)


class Watchdog:
    """Decides after each attempt whether a run goes on (see the module doc)."""

    def __init__(self, method, system, t_end: float) -> None:
        self.method, self.system, self.t_end = method, system, t_end
        self.series: Accumulation | None = None  # the series the run is in
        self.seen: Accumulation | None = None  # the last one, also if passed
        self._depth = 0.0  # how far beyond its guard the series' last reset left x
        self._n_events, self._run = 0, 0
        self._geometric = 0  # the events up to the last one that ended a series
        self._t, self._still = system.t0, 0
        self._window, self._n_attempts = (system.t0, 0), 0
        self._pending: dict[tuple, str] = {}  # warnings said by `finish`
        self.rested: list[Accumulation] = []  # series whose model came to rest

    @property
    def horizon(self) -> float:
        """When a series that left the state inside has ended: t_inf + tail."""
        if self.series is None:
            return self.t_end
        return min(self.t_end, self.series.t_inf + self.series.tail)

    def step_limit(self, flow) -> float:
        """Where `_walk.drive` ends a block of steps: t_end, or the horizon (by
        then a state falls through the guard) of blocks that do not complete Zeno."""
        if self.series is None or self.method.completes_zeno:
            return self.t_end
        if isinstance(flow, VectorField) or getattr(flow, "steps_in_blocks", False):
            return self.horizon
        return self.t_end

    def check(self, state, log: Recorder) -> Stop | None:
        """Return why the run must stop after the attempt that reached `state`."""
        self._n_attempts += 1
        if len(log.events) != self._n_events:
            stop = self._transitions(log)
            if stop is not None:
                return stop
        if self.series is not None:
            stop = self._tunnels(state, self.series)
            if stop is not None:
                return stop
            # reached up to a block of steps' round-off (the loop's TIME_RTOL)
            if state.t >= self.horizon - TIME_RTOL * self.method.h:
                # it ended inside: the model came to rest, the run is right
                self._pending.pop(("zeno", self.series.edge, self.series.t_first), None)
                self.rested.append(self.series)
                self.series = None
        return self._stall(state, log)

    def _transitions(self, log: Recorder) -> Stop | None:
        """Follow the new transitions (each for a method that passes Zeno points)."""
        events = log.events
        passes = self.method.passes_zeno and not self.method.completes_zeno
        found = None
        for k in range(self._n_events, len(events)):
            same = k and events[k - 1].edge == events[k].edge
            self._run = self._run + 1 if same else 1
            if passes or k == len(events) - 1:
                found = accumulation(events, self._run, k + 1)
                if found is not None:  # one accumulating before t_end is seen
                    self._geometric = k + 1
                    found = found if found.t_inf < self.t_end else None
                self.seen = found or self.seen
        self._n_events = len(events)
        if passes:
            return None
        self.series = found or self.series
        if self.series is not None and events[-1].edge == self.series.edge:
            self._depth = self._left_beyond(events[-1])
        if found is None:
            return self._chatter(events)
        if not self.method.completes_zeno:
            self._warn(found)
        return self._unresolved(found, events)

    def finish(self, log: Recorder) -> dict[str, str]:
        """Warn of the series not seen to rest; return the entry of those that did."""
        for key, message in self._pending.items():
            log.warn_once(key, message)
        self._pending.clear()
        if not self.rested:
            return {}
        rests = [
            f"{found.edge!r} ({found.n_events} transitions, predicted to "
            f"accumulate at t = {found.t_inf:.9g} s)"
            for found in self.rested
        ]
        return {"came_to_rest": "; ".join(rests)}

    def _warn(self, found: Accumulation) -> None:
        """Keep the warning that a series accumulates, once, for `finish`."""
        guard = self._guard(found.edge)
        self._pending.setdefault(
            ("zeno", found.edge, found.t_first),
            f"{self.method.name}: {found.describe(guard)} This method cannot pass "
            f"a Zeno point: the run goes on while it advances (a model that comes "
            f"to rest by itself finishes), and stops where it can no longer "
            f"resolve the transitions or the state passes guard {guard!r}. To "
            f"continue past it, declare the contact and complete the execution "
            f"(--zeno complete, or Completion(method)).",
        )

    def _unresolved(self, found: Accumulation, events: list[Event]) -> Stop | None:
        """Stop once the series' last interval is within `_resolution`."""
        last, before = events[-1], events[-2]
        resolution = self._resolution(last)
        if last.t - before.t > resolution:
            return None
        return self._zeno(
            f"{self._accumulated(found, events)} The last interval, "
            f"{last.t - before.t:.3g} s, is within the {resolution:.3g} s to which "
            f"{self.method.name} resolves a transition there: the run cannot advance "
            f"past the accumulation point.",
            names_series=True,
        )

    def _resolution(self, event: Event) -> float:
        """The time within which the method places `event` (t_tol, `_placed`, ulps)."""
        return max(
            float(getattr(self.method, "t_tol", None) or 0.0),
            TIME_ULPS * math.ulp(event.t),
            self._placed(event) or 0.0,
        )

    def _placed(self, event: Event) -> float | None:
        """`Method.time_resolution` of the event's guard value and rate, or None."""
        k, edge = self._edge(event.edge, event.source)
        if edge is None:
            return None
        g = edge.guard(event.t, event.x_before)
        rates = self._rates(event.source, event.t, event.x_before)
        if rates is None:
            return None
        placed = self.method.time_resolution(g, rates[k])
        return placed if math.isfinite(placed) else None

    def _tunnels(self, state, series: Accumulation) -> Stop | None:
        """Stop a state beyond the series' guard, too deep or moving further out."""
        k, edge = self._edge(series.edge, state.mode)
        if edge is None:
            return None
        g, side = edge.guard(state.t, state.x), self._side(edge)
        depth, tolerance = max(0.0, -side * g), max(ON_SURFACE, 2.0 * self._depth)
        if depth == 0.0:
            return None
        if depth > tolerance:
            how = f"by {depth:.3g} (more than {tolerance:.3g})"
        else:
            rates = self._rates(state.mode, state.t, state.x)
            if rates is None or side * rates[k] >= 0.0:
                return None
            how = f"by {depth:.3g}, moving further out (dg/dt = {rates[k]:.3g}),"
        guard = edge.guard.name
        return self._zeno(
            f"{series.describe(guard)} At t = {state.t!r} s the state lies "
            f"beyond guard {guard!r} {how} after its transitions: the constraint is "
            f"violated, and the state would tunnel through it.",
            names_series=True,
        )

    def _left_beyond(self, event: Event) -> float:
        """How far beyond its guard the event's reset left the state (0 inside)."""
        edge = self._edge(event.edge, event.target)[1]
        if edge is None:
            return 0.0
        return max(0.0, -self._side(edge) * edge.guard(event.t, event.x_after))

    def _edge(self, name: str, mode: str) -> tuple:
        """(position, edge) of the edge `name` in `mode`, or (-1, None)."""
        edges = enumerate(self.system.mode(mode).edges)
        return next(((k, e) for k, e in edges if e.name == name), (-1, None))

    def _rates(self, mode: str, t: float, x) -> list[float] | None:
        """The mode's guards' rates dg/dt at (t, x); None without dx/dt."""
        return self.method.compiled(self.system, mode).guard_rates(t, x)

    def _side(self, edge) -> float:
        """The sign of the edge's guard inside (an 'either' guard's at the start)."""
        side = SIDES[edge.guard.direction]
        return side or float(np.sign(edge.guard(self.system.t0, self.system.x0)))

    def _accumulated(self, found: Accumulation, events: list[Event]) -> str:
        """Describe the accumulation and, beyond its tail, its placement error."""
        detail = found.describe(self._guard(found.edge))
        placed = sum(filter(None, map(self._placed, events[-found.n_events :])))
        if placed > found.tail:
            detail += (
                f" The method placed these transitions to about {placed:.2g} s in "
                f"all: the accumulation time is that uncertain."
            )
        return detail

    def _chatter(self, events: list[Event]) -> Stop | None:
        if self._run < CHATTER_EVENTS:
            return None
        span = events[-1].t - events[-CHATTER_EVENTS].t
        if span >= CHATTER_EVENTS * self.method.h:
            return None
        recent = len(events) - self._geometric < CHATTER_EVENTS
        if recent and events[-1].t - events[-2].t > self._resolution(events[-1]):
            return None  # a series placed with some jitter, still resolved
        edge = events[-1].edge
        return self._zeno(
            f"Edge {edge!r} (guard {self._guard(edge)!r}) fired {self._run} times in "
            f"a row, the last {CHATTER_EVENTS} within {span:.3g} s (steps of h = "
            f"{self.method.h:g} s): the state chatters on it near t = "
            f"{events[-1].t:.9g} s."
        )

    def too_many_events(self, log: Recorder) -> str:
        """The detail of a run stopped by max_events: the edges behind the last
        transitions, and the last Zeno accumulation seen."""
        last = log.events[-100:]
        counts = Counter(event.edge for event in last)
        named = ", ".join(f"{edge!r} {n}x" for edge, n in counts.items())
        seen = ""
        if self.seen is not None:
            seen = " " + self.seen.describe(self._guard(self.seen.edge))
        return (
            f"{len(log.events)} transitions and {log.n_silent_events} silent "
            f"events; the last {len(last)}: {named or 'none'}.{seen}"
        )

    def _zeno(self, detail: str, *, names_series: bool = False) -> Stop:
        """A Zeno stop, naming the series the run is in unless the detail does."""
        status = (
            Status.ZENO_NOT_TRUNCATED if self.method.completes_zeno else Status.ZENO
        )
        if self.series is not None and not names_series:
            guard = self._guard(self.series.edge)
            detail += f" It follows a Zeno series: {self.series.describe(guard)}"
        return Stop(status, detail)

    def _guard(self, edge: str) -> str:
        edges = (e for mode in self.system.modes.values() for e in mode.edges)
        return next((e.guard.name for e in edges if e.name == edge), edge)

    def _stall(self, state, log: Recorder) -> Stop | None:
        if state.t != self._t:
            self._t, self._still = state.t, 0
        else:
            self._still += 1
        if self._still >= STALL_ATTEMPTS:
            return self._diagnose(state, log, f"{self._still} attempts in a row")
        t_window, n_window = self._window
        if self._n_attempts - n_window < CRAWL_ATTEMPTS:
            return None
        if state.t - t_window >= CRAWL_FRACTION * self.method.h:
            self._window = (state.t, self._n_attempts)
            return None
        return self._diagnose(
            state,
            log,
            f"{CRAWL_ATTEMPTS} attempts that advanced time by "
            f"{state.t - t_window:.3g} s together (h = {self.method.h:g} s)",
        )

    def _diagnose(self, state, log: Recorder, what: str) -> Stop:
        """Name the guard or reset that keeps time from advancing."""
        mode = self.system.mode(state.mode)
        g = [edge.guard(state.t, state.x) for edge in mode.edges]
        rates = self._rates(mode.name, state.t, state.x)
        where = f"at t = {state.t!r} s in mode {mode.name!r}"
        grazed = [g for g in log.grazes[-STALL_ATTEMPTS:] if g[0] == state.t]
        if grazed:  # crossed again and again, never approaching: at rest on it
            edge = grazed[-1][1]
            return self._zeno(
                f"The state sticks to the contact of edge {edge!r} {where}: its "
                f"guard is crossed again and again without an approach (v_n = "
                f"{grazed[-1][2]:.3g}; {len(grazed)} grazes), so no impact "
                f"applies and the state does not leave ({what})."
            )
        fired = sorted({e.edge for e in log.events[-STALL_ATTEMPTS:] if e.t == state.t})
        if fired:
            return Stop(
                Status.NO_PROGRESS,
                f"Edge(s) {fired} fired again and again {where} ({what}, "
                f"{log.n_silent_events} silent events): a reset leaves the state "
                f"where a guard fires at once. Fix the reset of {fired[0]!r}.",
            )
        for i, edge in enumerate(mode.edges):
            side = SIDES[edge.guard.direction]
            if not side or abs(g[i]) > ON_SURFACE:
                continue
            if rates is not None and side * rates[i] <= 0.0:
                return self._zeno(
                    f"The state sticks to guard {edge.guard.name!r} {where}: g = "
                    f"{g[i]:.3g} and the flow pushes it beyond (dg/dt = "
                    f"{rates[i]:.3g}), and the reset of edge {edge.name!r} does not "
                    f"take it away ({what})."
                )
            # a flow that steps itself (no dg/dt), on the surface of the guard
            # whose impacts accumulated there
            series = self.series
            if rates is None and series is not None and series.edge == edge.name:
                return self._zeno(
                    f"The state sticks to guard {edge.guard.name!r} {where}: g = "
                    f"{g[i]:.3g} after impacts that accumulate there, and no step "
                    f"leaves it ({what})."
                )
        nearest = min(range(len(g)), key=lambda i: abs(g[i]), default=None)
        guard = (
            "it has no guard"
            if nearest is None
            else f"the nearest guard is {mode.edges[nearest].guard.name!r} "
            f"(g = {g[nearest]:.3g})"
        )
        return Stop(
            Status.NO_PROGRESS, f"No step advances time {where} ({what}); {guard}."
        )
