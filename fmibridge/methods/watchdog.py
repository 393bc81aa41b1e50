"""The run's watchdog: Zeno accumulations, chatter and stalls, for every method.

`Method.run` asks a `Watchdog` after every attempt whether the run can go on.
It watches three things, from what every method leaves behind (the event log,
the time reached), so it serves every method and every flow (Python guards,
an FMU's own event indicators):

- **Zeno accumulation.** The last ZENO_SERIES transitions of one edge whose
  intervals shrink geometrically (ratios r <= MAX_RATIO within RATIO_SPREAD)
  predict the accumulation time t_inf = t_last + dt_last r / (1 - r), the
  model-free Zeno test of Or and Ames's completion (see `completion`). A method
  that does not complete Zeno executions stops once the tail is below
  ZENO_TAIL_RTOL of the time the series has run: Status.ZENO, at the
  accumulation point. A run that passes t_inf plus that tail (`horizon`) with
  the state beyond the guard stops there too (it lost the series), one that
  passes it inside goes on (the model came to rest by itself, as an FMU with a
  minimum bounce velocity does). Steps are not cut at the horizon, so the
  communication grid of a Co-Simulation FMU stays as it is.
- **Chatter.** CHATTER_EVENTS transitions of one edge, not geometric, more
  than one per step h: the state chatters on a guard (a Zeno point the method
  resolves into noise); Status.ZENO.
- **Stalls.** STALL_ATTEMPTS attempts in a row that do not advance time, or
  CRAWL_ATTEMPTS that together advance it by less than CRAWL_FRACTION of h.
  A guard on its surface that the flow pushes beyond is a state sticking to
  it (Status.ZENO); anything else is Status.NO_PROGRESS, naming the edges that
  fired or the guard nearest its surface.

A method that completes Zeno executions (`Completion`) is stopped only at the
horizon, or by chatter and stalls, with Status.ZENO_NOT_TRUNCATED. A method
whose executions pass Zeno points by construction (`Relaxation`: each
transition waits on its strip, so relaxed executions are not Zeno; Burden et
al., Sec. IV) is watched for stalls only.

References
----------
Or and Ames, Sec. III (Zeno executions, Def. 3) and Sec. V (truncation).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..core.result import Event, Recorder, Status
from ..flows.base import guard_rates

# Transitions in the series the Zeno test reads: 5 intervals, 4 ratios.
ZENO_SERIES = 6
# Largest spread of the interval ratios still called geometric (as completion's).
RATIO_SPREAD = 0.1
# Largest ratio called an accumulation: closer to 1, ZENO_SERIES intervals cannot
# tell a Zeno series (restitution above 0.95) from a steady chatter.
MAX_RATIO = 0.95
# A method that does not complete stops once the predicted remaining Zeno time is
# below this fraction of the time the series has run (1 ms of a 4 s ball series).
ZENO_TAIL_RTOL = 1e-3
# Transitions of one edge, more than one per step h, that make a chatter.
CHATTER_EVENTS = 50
# Attempts in a row that end at the same time: far more than any simultaneous
# transition needs (one per edge).
STALL_ATTEMPTS = 100
# A window of attempts that must advance time by CRAWL_FRACTION * h at least: a
# located crossing takes about 2 max_halvings attempts, far fewer.
CRAWL_ATTEMPTS = 1000
CRAWL_FRACTION = 1e-3
# |g| below this (SI units) counts as on the guard's surface: far above the
# round-off of a located crossing, far below any gap a model resolves.
ON_SURFACE = 1e-8


@dataclass(frozen=True)
class Stop:
    """Why the run stops: the Status and the detail naming what is at fault."""

    status: Status
    detail: str


@dataclass(frozen=True)
class Accumulation:
    """A geometric series of transitions of one edge and its predicted limit."""

    edge: str
    t_first: float
    t_last: float
    ratio: float
    tail: float
    n_events: int

    @property
    def t_inf(self) -> float:
        return self.t_last + self.tail

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
    end, if they form one.

    `n_run` counts the transitions of the last one's edge in a row.
    """
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
    return Accumulation(events[end - 1].edge, first, times[-1], r, tail, n_run)


class Watchdog:
    """Decides after each attempt whether a run goes on (see the module doc)."""

    def __init__(self, method, system, t_end: float) -> None:
        self.method, self.system, self.t_end = method, system, t_end
        self.found: Accumulation | None = None  # the series this run may not pass
        self.seen: Accumulation | None = None  # the last one, also if passed
        self._n_events, self._run = 0, 0
        self._t, self._still = system.t0, 0
        self._window = (system.t0, 0)
        self._n_attempts = 0

    @property
    def horizon(self) -> float:
        """The latest time a run may pass with its state beyond the guard: the
        end of a predicted Zeno accumulation (t_inf plus its tail again)."""
        if self.found is None:
            return self.t_end
        return min(self.t_end, self.found.t_inf + self.found.tail)

    def check(self, state, log: Recorder) -> Stop | None:
        """Return why the run must stop after the attempt that reached `state`."""
        self._n_attempts += 1
        if len(log.events) != self._n_events:
            stop = self._transitions(state, log)
            if stop is not None:
                return stop
        capped = self.found is not None and self.horizon < self.t_end
        if capped and state.t >= self.horizon:
            if self._is_beyond(self.found.edge, state):
                return self._zeno(self._accumulated(self.found, log.events))
            self.found = None  # the series ended inside: the model came to rest
        return self._stall(state, log)

    def _is_beyond(self, edge_name: str, state) -> bool:
        """True if the state lies beyond the surface of that edge's guard by more
        than ON_SURFACE: on the far side for a falling or rising guard, for an
        'either' guard (an FMU's indicator) on the side opposite to the start."""
        mode = self.system.mode(state.mode)
        edge = next((e for e in mode.edges if e.name == edge_name), None)
        if edge is None:
            return False
        g = edge.guard(state.t, state.x)
        side = {"falling": 1.0, "rising": -1.0}.get(edge.guard.direction)
        if side is None:
            side = float(np.sign(edge.guard(self.system.t0, self.system.x0)))
        return side * g < -ON_SURFACE

    # -- Zeno and chatter ---------------------------------------------------------

    def _transitions(self, state, log: Recorder) -> Stop | None:
        """Follow the new transitions; a method whose executions pass Zeno points
        sees each series event by event (its compiled loop fires many in one
        attempt), for the note of a run a bound stops."""
        events = log.events
        passes = self.method.passes_zeno and not self.method.completes_zeno
        found = None
        for k in range(self._n_events, len(events)):
            same = k and events[k - 1].edge == events[k].edge
            self._run = self._run + 1 if same else 1
            if passes or k == len(events) - 1:
                found = accumulation(events, self._run, k + 1)
                if found is not None and found.t_inf < self.t_end:
                    self.seen = found
        self._n_events = len(events)
        if passes:
            return None
        if found is None or found.t_inf >= self.t_end:
            self.found = None
            return self._chatter(events)
        self.found = found
        small = found.tail <= ZENO_TAIL_RTOL * (found.t_inf - found.t_first)
        if small and not self.method.completes_zeno:
            return self._zeno(self._accumulated(found, events))
        return None

    def _accumulated(self, found: Accumulation, events: list[Event]) -> str:
        """Describe the accumulation, with how precisely the method placed its
        transitions (`Method.time_resolution`, summed) where that exceeds the tail."""
        detail = found.describe(self._guard(found.edge))
        placed = 0.0
        for event in events[-found.n_events :]:
            mode = self.system.mode(event.source)
            edge = next(e for e in mode.edges if e.name == event.edge)
            g = edge.guard(event.t, event.x_before)
            rate = guard_rates(
                mode.flow, [edge.guard], event.t, event.x_before, [g], self.method.h
            )
            if rate is not None:
                placed += self.method.time_resolution(g, rate[0])
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
        edge = events[-1].edge
        return self._zeno(
            f"Edge {edge!r} (guard {self._guard(edge)!r}) fired {self._run} times in "
            f"a row, the last {CHATTER_EVENTS} within {span:.3g} s (steps of h = "
            f"{self.method.h:g} s): the state chatters on it near t = "
            f"{events[-1].t:.9g} s."
        )

    def note(self) -> str:
        """Name the last Zeno accumulation seen (for a run stopped by a bound)."""
        if self.seen is None:
            return ""
        return " " + self.seen.describe(self._guard(self.seen.edge))

    def _zeno(self, detail: str) -> Stop:
        status = (
            Status.ZENO_NOT_TRUNCATED if self.method.completes_zeno else Status.ZENO
        )
        return Stop(status, detail)

    def _guard(self, edge: str) -> str:
        for mode in self.system.modes.values():
            for e in mode.edges:
                if e.name == edge:
                    return e.guard.name
        return edge

    # -- stalls ---------------------------------------------------------------------

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
        guards = [edge.guard for edge in mode.edges]
        rates = guard_rates(mode.flow, guards, state.t, state.x, g, self.method.h)
        where = f"at t = {state.t!r} s in mode {mode.name!r}"
        fired = sorted({e.edge for e in log.events[-STALL_ATTEMPTS:] if e.t == state.t})
        if fired:
            return Stop(
                Status.NO_PROGRESS,
                f"Edge(s) {fired} fired again and again {where} ({what}, "
                f"{log.n_silent_events} silent events): a reset leaves the state "
                f"where a guard fires at once. Fix the reset of {fired[0]!r}.",
            )
        for i, edge in enumerate(mode.edges):
            side = {"falling": 1.0, "rising": -1.0}.get(edge.guard.direction)
            if side is None or abs(g[i]) > ON_SURFACE:
                continue
            if rates is not None and side * rates[i] <= 0.0:
                return self._zeno(
                    f"The state sticks to guard {edge.guard.name!r} {where}: g = "
                    f"{g[i]:.3g} and the flow pushes it beyond (dg/dt = "
                    f"{rates[i]:.3g}), and the reset of edge {edge.name!r} does not "
                    f"take it away ({what})."
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
