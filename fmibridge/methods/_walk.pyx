"""A run's loop, compiled: `drive` attempts steps and the flows' own events from
a method's start to its stop, in one call from `Method.run`. Halving and
Relaxation take their steps in a `Walk`, extended by each method's `step`.
"""

from libc.math cimport INFINITY

import numpy as np

from ..core._functions cimport new_array
from ..core._grid cimport next_after
from ..core.events cimport all_finite
from ..flows._stepper cimport AdaptiveStepper
from ._mode cimport BLOCK_SIZE, reach_tol, reached

from ..core import time_limit
from ..core.errors import FlowTerminated, ReplayRefused, StiffnessStop
from ..core.records import Event, Rated, State, Status, Step, non_finite, unstable
from ._mode import compiled_mode


cdef class Walk:
    """One call's state and scratch, kept with its mode between calls."""

    def __init__(self, CompiledMode cm):
        self.cm, self.busy = cm, False
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.x, self.y, self.slope, self.s1, self.z, self.err = (
            np.empty(n) for _ in range(6))
        self.g0, self.g1, self.r0, self.r1, self.gz = (np.empty(m) for _ in range(5))
        self.beyond = np.array(
            [e.guard.reset_at == "beyond" for e in cm.mode.edges] + [False],
            dtype=np.uint8)

    cdef int read_settings(self, method) except -1:
        """Read the method's parameters (frozen: they hold for all its calls)."""
        self.settings_of, self.h = method, method.h
        self.span = INFINITY if self.cm.is_adaptive else method.h
        self.max_halvings = method.max_halvings
        self.max_steps_asked = method.max_steps
        self.firing.on_approach = method.resets_on_approach
        self.firing.t_tol = method.location_tolerance
        return 0

    cdef int begin(self, method, log) except -1:
        """Read `method`'s parameters (if new) and the run's output times."""
        if method is not self.settings_of:
            self.read_settings(method)
        grid = getattr(log, "grid", None)
        self.has_grid = grid is not None
        if self.has_grid:
            self.grid, self.grid_tol = grid.times, log.tol
        return 0

    cdef double next_stop(self, double t, double t_limit) noexcept:
        """The next output time after t if before t_limit, else t_limit."""
        cdef double stop
        if not self.has_grid:
            return t_limit
        stop = next_after(self.grid, t, self.grid_tol)
        return stop if stop < t_limit else t_limit

    cdef int start(self, method, log, double t_end, double t0, state) except -1:
        """Start a call from `state`: the point, its guards and slope."""
        cdef CompiledMode cm = self.cm
        cdef Py_ssize_t n = cm.n, m = cm.m, i
        cdef double[::1] given = np.ascontiguousarray(state.x, dtype=float)
        self.begin(method, log)
        self.method, self.log, self.t0 = method, log, t0
        self.t_end = self.next_stop(state.t, t_end)
        self.errors = getattr(log, "local_errors", None)
        if self.errors is not None and self.errors.n != cm.n:
            self.errors = None
        self.has_err = False  # n_steps, n_rejected: zeroed by `attempt` after a call
        self.max_steps = self.max_steps_asked - log.n_steps
        self.t = state.t
        if n:
            self.x[:n] = given
        cm.evaluate(self.t, &self.x[0], &self.g0[0])
        if not all_finite(&self.g0[0], m):
            raise non_finite(
                cm.mode, self.t, new_array(&self.x[0], n), list(self.g0[:m])
            )
        self.has_slope = isinstance(state, Rated) and state.slope is not None
        if self.has_slope:  # as `at_point` left them
            rates = state.rates
            for i in range(m):
                self.r0[i] = rates[i]
            given = np.asarray(state.slope, dtype=float)
            self.slope[:n] = given
        if cm.is_adaptive:  # the proposal the state kept, else h (after an event)
            h_next = getattr(state, "h_next", None)
            (<AdaptiveStepper>cm.stepper).propose(
                self.h if h_next is None else h_next, t_end)
        return 0

    cdef object walk(self, method, log, double t_end, double t0, state):
        """Step from `state` to the Step that ends the call, t_end, max_steps or a
        block (one step where the flow calls back each); output times end steps."""
        cdef CompiledMode cm = self.cm
        self.start(method, log, t_end, t0, state)
        flow = cm.mode.flow
        many = (cm.has_rhs and not getattr(flow, "calls_each_step", False)) or (
            not cm.has_rhs and getattr(flow, "steps_in_blocks", False))
        while True:
            step = self.step()
            if step is not None or not many:
                break
            if reached(self.t, self.t_end, self.h):
                if reached(self.t, t_end, self.h):
                    break
                self.t_end = self.next_stop(self.t, t_end)  # on, past an output time
            if self.n_steps >= min(self.max_steps, BLOCK_SIZE):
                break
        if step is None:
            step = self.at_point()
        return step

    cdef object step(self):
        """One step: None after a plain step, else the Step that ends the call."""
        raise NotImplementedError

    cdef int estimate(self, double hs) except -1:
        """Estimate the local error of the trial of hs (its end's slope in s1)."""
        if self.errors is not None:
            self.has_err = self.cm.stepper.estimate(hs, &self.s1[0], &self.err[0])
        return 0

    cdef int accept(self, double t1, double hs, bint has_r1) except -1:
        """Move the point to the trial's end at t1; keep its error and sample."""
        self.x, self.y = self.y, self.x
        self.g0, self.g1 = self.g1, self.g0
        if has_r1:
            self.r0, self.r1 = self.r1, self.r0
            self.slope, self.s1 = self.s1, self.slope
        self.has_slope = has_r1
        self.t = t1
        if (has_r1 and self.has_err
                and self.errors.add(t1, hs, &self.x[0], &self.err[0])):
            raise unstable(self.method.name, self.method.scheme, self.cm.mode,
                           self.errors.instability())
        self.has_err = False
        self.cm.keep(t1, &self.x[0], self.log)
        return 0

    cdef object stopped(self, status, str detail):
        """The Step that stops the run at the point, with `status`."""
        return Step(State(self.t, new_array(&self.x[0], self.cm.n), self.cm.name),
                    status, detail)

    cdef object at_point(self):
        """The Step to the point, with its rates, slope and proposed step."""
        cdef CompiledMode cm = self.cm
        cdef Py_ssize_t n = cm.n, m = cm.m, i
        x = new_array(&self.x[0], n)
        if not self.has_slope:
            return Step(State(self.t, x, cm.name))
        h_next = (<AdaptiveStepper>cm.stepper).h_next if cm.is_adaptive else None
        return Step(Rated(self.t, x, cm.name, [self.r0[i] for i in range(m)],
                          new_array(&self.slope[0], n), h_next))


def drive(method, system, state, double t_end, log, update, watch, tolerance,
          frozenset hooked, type kind):
    """Attempt `method`'s steps and the flows' own events from `state` until a stop;
    return (status, detail). A time event at t_end runs before the end (as in
    FMPy). `tolerance`: the run's (rtol, atol), None for fixed steps; `hooked`:
    the modes whose flows schedule events or ask for them after a step; `kind`:
    the walk that takes the method's steps in C, else None (`method._attempt`)."""
    cdef double h = method.h, t_event
    cdef double end = t_end - reach_tol(t_end, h)  # `reached`
    cdef long max_steps = method.max_steps, max_events = method.max_events, _k
    cdef bint is_due
    deadline = time_limit.current()  # simulate(timeout=...): wall time
    grid = getattr(log, "grid", None)  # a GridRecorder's output times
    modes, scheme = system.modes, method.scheme
    for _k in range(max_steps):
        mode = modes[state.mode]
        flow = mode.flow
        if flow.is_terminated or state.mode not in hooked:
            t_event = INFINITY
        else:
            t_event = flow.next_event_time()
        is_due = t_event < INFINITY and reached(state.t, t_event, h)
        if state.t >= end and not is_due:
            return Status.REACHED_END, ""
        if deadline is not None and deadline.is_over():
            return Status.TIME_LIMIT, deadline.detail(state.t)
        if log.n_steps >= max_steps:  # block steps count one by one
            break
        # silent events count too: a reset that changes nothing can repeat
        if len(log.events) + log.n_silent_events >= max_events:
            return Status.MAX_EVENTS, watch.too_many_events(log)
        if flow.is_terminated:
            return Status.TERMINATED, ""
        if is_due:
            state = _flow_event(state, flow, "time_event", log)
            continue
        if grid is not None and method.walk is None:  # a walk ends steps on it
            t_event = min(t_event, grid.next_after(state.t, log.tol))
        t_event = min(t_event, watch.step_limit(flow))  # a series' horizon
        try:
            if kind is None:
                step = method._attempt(system, state, min(t_end, t_event), log)
            else:
                step = attempt(kind, method, compiled_mode(mode, scheme, h, tolerance),
                               state, min(t_end, t_event), system.t0, log)
        except FlowTerminated as stop:  # inside a step: its end is the run's
            log.sample(stop.t, stop.x, state.mode)
            return Status.TERMINATED, ""
        except StiffnessStop as exc:  # the samples so far are the log's
            return Status.STIFF, str(exc)
        except ReplayRefused as exc:  # Halving stops so itself, steps short
            return Status.OVERSTEPPED, (
                f"{exc} {type(method).__name__} returns to points it left to "
                f"locate a crossing; Halving steps such an FMU forward only, "
                f"each step short of the guard's extrapolated crossing."
            )
        state = step.state
        update(state.t)
        if step.stop is not None:
            return step.stop, step.detail
        flow = modes[state.mode].flow
        if state.mode in hooked and flow.step_completed(state.t, state.x):
            state = _flow_event(state, flow, "step_event", log)
        stop = watch.check(state, log)
        if stop is not None:
            return stop
    return (Status.MAX_STEPS,
            f"{log.n_steps} steps of h = {h:g} s reached t = {state.t!r}.")


cdef object _flow_event(state, flow, str name, log):
    """Run the flow's own event at `state` (sampled already) and log it."""
    x_after = np.asarray(flow.discrete_event(state.t, state.x), dtype=float)
    log.sample(state.t, x_after, state.mode)
    log.event(Event(state.t, name, state.mode, state.mode, state.x, x_after))
    return State(state.t, x_after, state.mode)


cpdef object attempt(type kind, method, CompiledMode cm, state, double t_end,
                     double t0, log):
    """Take a method's steps from `state` with its walk `kind`, returning the Step
    (a fresh walk where the mode's is busy: a reset that runs another simulation)."""
    cdef Walk w = cm.work.get(kind)
    if w is None or w.busy:
        w = kind(cm)
        cm.work.setdefault(kind, w)
    w.busy = True
    try:
        step = w.walk(method, log, t_end, t0, state)
    finally:
        log.n_steps += w.n_steps
        log.n_rejected += w.n_rejected
        if cm.is_adaptive:
            log.n_rejected += (<AdaptiveStepper>cm.stepper).take_rejected()
        w.n_steps, w.n_rejected = 0, 0
        w.method = w.log = w.errors = w.grid = None
        w.busy = False
        cm.flush(log)
    return step
