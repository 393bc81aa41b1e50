"""Completion around Halving in one compiled call: what the kernel takes, and
what it gives back to the Recorder.

Where the free flow, its guards and resets and the contact are numba-compiled,
`Completion` hands its attempts to `_completion_kernels.run`, which takes the
flights, impacts, truncation tests, switches, constrained phases and lift-offs
in one call, operation by operation as the Python attempts take them, and
returns where an attempt needs Python. `CompiledRun.of` says whether a run
qualifies; `CompiledRun.take` makes one call and logs its samples and events.

References
----------
Or and Ames, Sec. V (the procedure the kernel follows).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..core.result import Event, Recorder
from ..core.system import HybridSystem
from ..flows.base import RATE_STEP
from ..flows.compiled import BLOCK
from .base import TIME_RTOL, State, Step, reach_tol
from .compiled_mode import compiled_mode
from .watchdog import CRAWL_FRACTION, ZENO_SERIES

LABEL = "completion: compiled run"  # the provenance's `loops` entry
EVENTS = 256  # events one call logs at most (then it returns)
SAMPLES = 4096  # samples one call records at most


@dataclass(frozen=True)
class CompiledRun:
    """What one run's compiled attempts take: the modes, the contact's kernels,
    the tableau and the names behind the codes of samples and events."""

    method: object  # the Completion
    flow: object  # its ConstrainedFlow of this run (last_step)
    free: tuple  # (typed lists, edge arrays) as `_completion_kernels.run` takes
    lifted: tuple
    contact: tuple
    indices: tuple
    modes: tuple[str, str, str]  # free, lifted, constrained
    names: tuple[str, ...]  # the edges' names by code
    impacts: tuple[str, ...]  # the impact edges' names

    @classmethod
    def of(cls, method, system: HybridSystem) -> CompiledRun | None:
        """Return the compiled run of `method` (a Completion) on its completed
        `system`, or None unless its inner method is Halving with Illinois
        location and the same h and integrator, the system has only the free,
        lifted and constrained modes, every free edge returns to the free mode,
        both free modes are compiled (`compiled_mode`) and so is the contact,
        which has no bounds (the model-free test)."""
        from .completion import CONSTRAINED, LIFTED, Completion
        from .halving import Halving

        inner = method.inner
        if not (
            type(method) is Completion
            and type(inner) is Halving
            and inner.locate == "illinois"
            and not inner.is_adaptive  # its steps are fixed ones of h
            and (method.h, method.scheme) == (inner.h, inner.scheme)
        ):
            return None
        constrained = system.mode(CONSTRAINED)
        free = system.mode(constrained.flow.free)
        lifted = system.mode(LIFTED.format(free.name))
        contact = constrained.flow.contact
        if not (
            len(system.modes) == 3
            and all(e.target == free.name for e in free.edges + lifted.edges)
            and contact.kernels is not None
            and contact.bounds is None
        ):
            return None
        edges = (*free.edges, *lifted.edges, *constrained.edges)
        names = (*dict.fromkeys(e.name for e in edges), "zeno")
        impacts = constrained.flow.impact_edges
        modes = (_arrays(free, names, impacts), _arrays(lifted, names, ()))
        if None in modes:
            return None
        return cls(
            method,
            constrained.flow,
            *modes,
            contact.kernels.functions,
            (_index(contact.q_index), _index(contact.v_index)),
            (free.name, lifted.name, CONSTRAINED),
            names,
            impacts,
        )

    def take(self, state: State, t_end: float, log: Recorder) -> Step | None:
        """Take attempts from `state` in one compiled call and log them; return
        the Step to where the call returned, or None where its first attempt
        needs Python, or where Python keeps a memory the kernel does not: an
        impact series in progress, a series the watchdog follows, an output
        grid or an observer."""
        k = _kernels()
        if type(log) is not Recorder or log.observer is not None:
            return None
        events = log.events
        if events and events[-1].edge in self.impacts:
            if events[-1].source == self.modes[0]:
                return None
        run_code, run = _trailing_run(events, self.names)
        if run >= ZENO_SERIES:
            return None
        x = np.array(state.x, dtype=float)
        numbers = self._numbers(state, t_end, log)
        counts = self._counts(state, log, (run_code, run))
        out = _buffers(x.size, max(self.free[1][0].size, self.lifted[1][0].size))
        scheme = self.method.scheme
        (fs, gs, rs), free_edges = self.free
        lifted_lists, lifted_edges = self.lifted
        scratch = (np.empty(BLOCK), np.empty((BLOCK, x.size)), np.empty(BLOCK))
        rest = (scheme.arrays, numbers, counts, x, (*out, self.indices, scratch))
        if not k.run(
            fs, gs, rs, free_edges, *lifted_lists, lifted_edges, *self.contact, rest
        ):
            return None
        self._log(numbers, counts, out, log)
        return Step(State(float(numbers[k.T]), x, self.modes[counts[k.MODE]]))

    def _numbers(self, state: State, t_end: float, log: Recorder) -> np.ndarray:
        """The kernel's float slots, in the order `_completion_kernels` names them
        (T, T_END, H, REACH, END_TOL, T_TOL, D, TOL, PHASE_T_TOL, LAM_CHANGE, E,
        EPS_T, EPS_Q, EPS_V, IS_LIMIT, LAST, LAST_EVENT_T, RATIO_SPREAD, SAFETY,
        CRAWL)."""
        from .completion import FALLBACK_SAFETY, LAM_CHANGE, RATIO_SPREAD

        method, h = self.method, self.method.h
        return np.array(
            [
                state.t, t_end, h, TIME_RTOL * h, reach_tol(t_end, h),
                method.inner.t_tol, RATE_STEP * h, method.tol, method.t_tol,
                LAM_CHANGE, self.flow.contact.restitution, method.eps_t,
                method.eps_q, method.eps_v, float(method.switch == "limit"),
                self.flow.last_step or 0.0,
                log.events[-1].t if log.events else math.nan,
                RATIO_SPREAD, FALLBACK_SAFETY, CRAWL_FRACTION * h,
            ]
        )  # fmt: skip

    def _counts(self, state: State, log: Recorder, run: tuple[int, int]):
        """The kernel's integer slots, in the order `_completion_kernels` names
        them (MODE, N_STEPS, N_REJECTED, N_SILENT, EVENTS_LEFT, MAX_STEPS,
        MAX_HALVINGS, PHASE_HALVINGS, RUN_CODE, RUN, ZENO_SERIES, N_SERIES,
        N_SAMPLES, N_EVENTS, N_ATTEMPTS, LIFT_CODE, ZENO_CODE, FIRED_EDGE,
        INNER_MAX_STEPS); `run` is (RUN_CODE, RUN)."""
        from .completion import MAX_HALVINGS

        method = self.method
        n_events = len(log.events) + log.n_silent_events
        return np.array(
            [
                self.modes.index(state.mode), log.n_steps, log.n_rejected,
                log.n_silent_events, method.max_events - n_events, method.max_steps,
                method.inner.max_halvings, MAX_HALVINGS, *run, ZENO_SERIES, 0, 0, 0,
                0, self.names.index("lift-off"), self.names.index("zeno"), 0,
                method.inner.max_steps,
            ],
            dtype=np.int64,
        )  # fmt: skip

    def _log(self, numbers, counts, out, log: Recorder) -> None:
        """Hand the call's samples, events and counts to the Recorder."""
        k = _kernels()
        log.loops[LABEL] += 1
        log.n_steps, log.n_rejected, log.n_silent_events = (
            int(counts[k.N_STEPS]), int(counts[k.N_REJECTED]), int(counts[k.N_SILENT]),
        )  # fmt: skip
        (ts, xs, codes, lams), events, *_ = out
        n = counts[k.N_SAMPLES]
        log.coded_samples(ts[:n], xs[:n], codes[:n], self.modes, lam=lams[:n])
        n = counts[k.N_EVENTS]
        e_t, e_code, e_modes, e_x, e_group, e_size = (a[:n] for a in events)
        names, modes = self.names, self.modes
        rows = zip(
            e_t.tolist(), e_code.tolist(), e_modes.tolist(), list(e_x.copy()),
            e_size.tolist(), e_group.tolist(), strict=True,
        )  # fmt: skip
        log.events.extend(
            Event(
                t, names[code], modes[source], modes[target], x[0], x[1],
                tuple(names[c] for c in group[:size]) if size else (),
            )
            for t, code, (source, target), x, size, group in rows
        )  # fmt: skip
        self.flow.last_step = float(numbers[k.LAST]) or None


def _arrays(mode, names: tuple[str, ...], impacts: tuple[str, ...]) -> tuple | None:
    """The mode's typed lists and edge arrays, with each edge's name code and
    whether it is an impact; None unless the mode is compiled."""
    firing = compiled_mode(mode)
    if firing is None:
        return None
    codes = np.array([names.index(e.name) for e in mode.edges], dtype=np.int64)
    is_impact = np.array([e.name in impacts for e in mode.edges], dtype=bool)
    return firing.functions, (*firing.edges, codes, is_impact)


def _index(index: tuple[int, ...]) -> np.ndarray:
    return np.array(index, dtype=np.int64)


def _trailing_run(events: list[Event], names: tuple[str, ...]) -> tuple[int, int]:
    """The name code of the last event's edge (-1 if none) and how many of the
    last events, up to ZENO_SERIES, are of that edge: the watchdog's run."""
    if not events:
        return -1, 0
    edge, run = events[-1].edge, 0
    for event in reversed(events[-ZENO_SERIES:]):
        if event.edge != edge:
            break
        run += 1
    return (names.index(edge) if edge in names else -1), run


def _buffers(n_x: int, n_g: int) -> tuple:
    """Empty samples, events, impact series and time resolutions for one call."""
    from .completion import N_SERIES

    samples = (
        np.empty(SAMPLES), np.empty((SAMPLES, n_x)), np.empty(SAMPLES, np.int64),
        np.empty(SAMPLES),
    )  # fmt: skip
    events = (
        np.empty(EVENTS), np.empty(EVENTS, np.int64), np.empty((EVENTS, 2), np.int64),
        np.empty((EVENTS, 2, n_x)), np.empty((EVENTS, max(n_g, 1)), np.int64),
        np.empty(EVENTS, np.int64),
    )  # fmt: skip
    series = (
        np.empty(N_SERIES), np.empty((N_SERIES, n_x)), np.empty(N_SERIES),
        np.empty((N_SERIES, n_x)),
    )  # fmt: skip
    return samples, events, series, np.empty(EVENTS)


@functools.cache
def _kernels():
    """Import the compiled run on first use (numba loads it from its cache)."""
    from . import _completion_kernels as module

    return module
