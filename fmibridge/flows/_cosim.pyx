"""The co-simulation master's communication step, one for every coupling.

`CommunicationStep` takes the step of `cosim_master.CoupledCoSimulation` in
one call (docs/coupled.md): a Co-Simulation FMU (FMI 1.0, 2.0, 3.0) is called
directly (`flows._fmi`), any other component and a propagation with an
algebraic loop back in Python. Beside it: the compiled loops' steppers of a
master and of one FMU, and the direct reads of an FMU's variables.

References
----------
Kübler and Schiehlen, "Two methods of simulator coupling", 2000. Gomes et al.,
"Co-simulation: a survey", ACM Comput. Surv. 51(3), 2018.
"""

from libc.math cimport fabs
from libc.string cimport memcmp, memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from ..core._functions cimport new_array
from ..core.events cimport all_finite
from ._fmi cimport (B1, F4, F8, I1, I2, I4, I8, U1, U2, U4, Element, FmiFunctions,
                    StepEnd, fmi2Warning)
from ._fmu cimport table_value
from ._stepper cimport Stepper, copy_out

import numpy as np

from ..core.errors import FlowTerminated

from ._fmi import ELEMENTS

# the ops of the evaluation plan
cdef enum:
    _READ = 0
    _WRITE = 1


cdef double _now() noexcept:
    cdef timespec now
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec + 1e-9 * now.tv_nsec


cdef double _mean(double mean, double spent) noexcept:
    """A running mean from the first cost, each counted at most twice the mean."""
    if mean == 0.0:
        mean = spent
    return mean + 0.1 * (min(spent, 2.0 * mean) - mean)


cdef class CommunicationStep:
    """A coupling's communication step (module docstring).

    Per component: `fmus` its calls (`flows._fmi`; None: called back), `states`
    its states' value references, `inputs` and `sources` its connected inputs
    and outputs as (vrs, slots); placeholders where called back. `plan` rows
    (kind 0 read | 1 write, component, vrs, slots), or None: `propagate(t, x)`
    returns the outputs by slot. `order`: the components in stepping order.
    `step_back(c, t, x, h, scheme, level, slope, read, y)` steps component c
    with inputs level + slope (tau - t), its states at t + h into y, and where
    `read` its outputs at t + h into level.
    """

    cdef Py_ssize_t n_components, n_x, n_slots, n_plan
    cdef unsigned char[::1] called_back
    cdef readonly bint direct  # every component called directly, the plan in C
    cdef tuple fmi  # per component: its calls (`FmiFunctions`) or None
    cdef object propagate, step_back
    # every value reference: the components' states (x, in order), then their
    # inputs, then their outputs, then the plan's rows; its slots likewise
    cdef unsigned int[::1] vrs
    cdef Py_ssize_t[::1] slots
    # where each of those groups starts in vrs, one more than there are: c's
    # states are vrs[x_at[c]:x_at[c + 1]], at x[x_at[c]:x_at[c + 1]]
    cdef Py_ssize_t[::1] x_at, in_at, out_at, plan_at
    cdef Py_ssize_t[::1] plan_kind, plan_c  # the plan: kind, component
    cdef Py_ssize_t[::1] order
    cdef double[::1] buffer, values
    cdef double[::1] out_values, level, slope  # the outputs, by slot
    cdef object levels, slopes  # level and slope as arrays, for step_back
    cdef readonly object y_t
    cdef double[::1] yt
    # the last doStep that did not complete: (its status, FMI 3.0 flags event,
    # terminate and early return, last successful time)
    cdef readonly tuple ended
    cdef readonly bint finite  # the states after the last step are all finite
    cdef readonly Py_ssize_t n_done  # the components that completed the last step
    # per component called directly: its doStep's wall seconds over a full
    # step (h at least half the longest: not a search's trials), `_mean`
    cdef readonly object do_step_cost
    cdef double[::1] costs
    cdef double h_full  # the longest h taken

    def __init__(self, fmus, states, inputs, sources, plan, order,
                 propagate=None, step_back=None):
        n = self.n_components = len(fmus)
        self.fmi = tuple(fmus)
        self.called_back = np.array([f is None for f in fmus], dtype=np.uint8)
        self.direct = plan is not None and not any(f is None for f in fmus)
        self.propagate, self.step_back = propagate, step_back
        vrs, slots, starts = [], [], []
        rows = [(refs, where) for _, _, refs, where in plan or ()]
        for refs, where in [(x, [-1] * len(x)) for x in states] + [
                *inputs, *sources, *rows]:
            starts.append(len(vrs))
            vrs.extend(refs)
            slots.extend(where)
        at = np.array(starts + [len(vrs)], dtype=np.intp)
        self.x_at, self.in_at, self.out_at = at[:n + 1], at[n:2 * n + 1], at[2 * n:]
        self.plan_at = at[3 * n:]
        self.vrs = np.array(vrs + [0], dtype=np.uintc)
        self.slots = np.array(slots + [0], dtype=np.intp)
        self.n_plan = len(rows)
        self.plan_kind = np.array([r[0] for r in plan or ()] + [0], dtype=np.intp)
        self.plan_c = np.array([r[1] for r in plan or ()] + [0], dtype=np.intp)
        self.order = np.array(order, dtype=np.intp)
        self.n_x = self.x_at[n]
        self.n_slots = 1 + max([s for s in slots if s >= 0], default=-1)
        self.buffer, self.values = np.zeros(len(vrs) + 1), np.zeros(len(vrs) + 1)
        self.out_values = np.zeros(self.n_slots)
        self.levels, self.slopes = np.zeros((2, self.n_slots + 1))
        self.level, self.slope = self.levels, self.slopes
        self.y_t = np.zeros(self.n_slots)
        self.yt = self.y_t
        self.finite = True
        self.do_step_cost = np.zeros(n)
        self.costs = self.do_step_cost

    cdef int _get(self, Py_ssize_t c, Py_ssize_t at, Py_ssize_t end,
                  double* out) except -1:
        return (<FmiFunctions> self.fmi[c]).get_reals(&self.vrs[at], end - at, out)

    cdef int _set(self, Py_ssize_t c, Py_ssize_t at, Py_ssize_t end,
                  double* values) except -1:
        return (<FmiFunctions> self.fmi[c]).set_reals(&self.vrs[at], end - at, values)

    cdef int _read(self, Py_ssize_t c, Py_ssize_t at, Py_ssize_t end,
                   double* into) except -1:
        """into[slot] = each of c's variables vrs[at:end], read now."""
        cdef Py_ssize_t i
        self._get(c, at, end, &self.buffer[at])
        for i in range(at, end):
            into[self.slots[i]] = self.buffer[i]
        return 0

    cdef int _write(self, Py_ssize_t c, Py_ssize_t at, Py_ssize_t end,
                    const double* level, const double* slope, double t_offset
                    ) except -1:
        """Set c's vrs[at:end] to level + slope * t_offset (level: slope NULL)."""
        cdef Py_ssize_t i, s
        for i in range(at, end):
            s = self.slots[i]
            if slope != NULL:
                self.values[i] = level[s] + slope[s] * t_offset
            else:
                self.values[i] = level[s]
        return self._set(c, at, end, &self.values[at])

    cdef int _do_step(self, Py_ssize_t c, double t, double h) except -1:
        """c's doStep from t by h: 1 where it completed, else 0 (`ended`)."""
        cdef StepEnd end
        cdef int status = (<FmiFunctions> self.fmi[c]).do_step(t, h, &end)
        if status <= fmi2Warning and not (end.terminate or end.event or end.early):
            return 1
        self.ended = (status, end.event, end.terminate, end.early, end.last)
        return 0

    cpdef int evaluate(self, double t, object x) except -1:
        """Propagate the connections at (t, x); `y_t` holds the outputs."""
        cdef Py_ssize_t k, i, c, at, end
        cdef double[::1] outputs
        if self.propagate is not None:
            outputs = self.propagate(t, x)
            for i in range(self.n_slots):
                self.out_values[i] = outputs[i]
        for k in range(self.n_plan):
            c, at, end = self.plan_c[k], self.plan_at[k], self.plan_at[k + 1]
            if self.plan_kind[k] == _READ:
                self._read(c, at, end, &self.out_values[0])
            else:
                self._write(c, at, end, &self.out_values[0], NULL, 0.0)
        for i in range(self.n_slots):
            self.yt[i] = self.out_values[i]
        return 0

    cdef int run(self, double t, double h, bint gauss_seidel, int inputs,
                 double t_previous, object y_previous, object x, object scheme,
                 object y, double* out) except -2:
        """Step h from (t, x) after `evaluate`: states at t + h into out and -1, or
        the component whose doStep failed; inputs 0 held, 1 extrapolated, 2 none yet."""
        cdef Py_ssize_t k, i, c, s
        cdef bint extrapolates = inputs != 0, read
        cdef double[::1] previous
        cdef double start
        cdef bint full = h >= 0.5 * self.h_full
        self.n_done = 0
        self.h_full = max(self.h_full, h)
        for i in range(self.n_slots):
            self.level[i] = self.yt[i]
            self.slope[i] = 0.0
        if inputs == 1:
            previous = y_previous
            for i in range(self.n_slots):
                self.slope[i] = (self.yt[i] - previous[i]) / (t - t_previous)
        for k in range(self.n_components):
            c = self.order[k]
            read = gauss_seidel and self.out_at[c + 1] > self.out_at[c]
            if self.called_back[c]:
                self.step_back(c, t, x, h, scheme, self.levels, self.slopes, read, y)
            else:
                self._write(c, self.in_at[c], self.in_at[c + 1], &self.level[0],
                            &self.slope[0] if extrapolates else NULL, h / 2)
                start = _now()
                if not self._do_step(c, t, h):
                    return c
                if full:
                    self.costs[c] = _mean(self.costs[c], _now() - start)
                self._get(c, self.x_at[c], self.x_at[c + 1], out + self.x_at[c])
            self.n_done = k + 1
            if read and not self.called_back[c]:
                self._read(c, self.out_at[c], self.out_at[c + 1], &self.level[0])
            if read:
                for i in range(self.out_at[c], self.out_at[c + 1]):
                    s = self.slots[i]
                    if extrapolates:
                        self.slope[s] = (self.level[s] - self.yt[s]) / h
                        self.level[s] = self.yt[s]
                    else:
                        self.slope[s] = 0.0
        self.finite = all_finite(out, self.n_x)
        return -1

    cpdef bytes inputs(self):
        """The connected inputs of the last step, as bytes of doubles."""
        cdef Py_ssize_t at = self.in_at[0], n = self.in_at[self.n_components] - at
        return (<char*> &self.values[at])[:n * sizeof(double)]

    def replay(self, Py_ssize_t c, list chain, const double[::1] x):
        """Step c alone through `chain` (first first) with its inputs there; return
        the steps whose states matched the next step's x bit for bit (x: the last)."""
        cdef Py_ssize_t k, n = len(chain), first = self.in_at[c] - self.in_at[0]
        cdef Py_ssize_t at = self.in_at[c], end = self.in_at[c + 1]
        cdef Py_ssize_t part = self.x_at[c], m = self.x_at[c + 1] - part
        cdef double[::1] states = np.zeros(m + 1)
        cdef const double[::1] after
        cdef const char* given
        cdef double t, h
        for k in range(n):
            step = chain[k]
            t, h, given = step[0], step[2], step[4]
            memcpy(&self.values[at], given + first * sizeof(double),
                   (end - at) * sizeof(double))
            self._set(c, at, end, &self.values[at])
            if not self._do_step(c, t, h):
                return k
            self._get(c, self.x_at[c], self.x_at[c + 1], &states[0])
            after = chain[k + 1][1] if k + 1 < n else x
            if m and memcmp(&states[0], &after[part], m * sizeof(double)) != 0:
                return k
        return n


# Communication points a master remembers (its steps' starts, for replays;
# the outputs at each, for extrapolation): a halving revisits the last few, 64
# covers the deepest bisection of Halving's 64 halvings.
MAX_HISTORY = 64


cpdef object take_step(master, double t, x, bytes xb, double h, scheme=None,
                       bint may_undo=False):
    """The master's communication step of h from (t, x) (xb: x's bytes): return y
    at t + h, saved first where it may be undone (`_should_save`)."""
    cdef CommunicationStep step = master._compiled
    cdef int inputs = 0
    cdef double t_previous = t, t_end = t + h
    cdef double[::1] ys
    for flow, _ in master._called.values():  # a component closed behind the
        if flow._instance is None:  # master: its error, not a call into a freed
            flow.instance  # instance (raises FmibridgeError)
    step.evaluate(t, x)
    if may_undo:
        master._keep(t, x, master._should_save(t, x))
    y_previous = None
    if master._extrapolates:
        previous = master._history.get((t, xb))
        inputs = 2 if previous is None else 1
        if previous is not None:
            t_previous, y_previous = previous
    y = np.empty(step.n_x)
    ys = y
    try:
        failed = step.run(t, h, master._gauss_seidel, inputs, t_previous,
                          y_previous, x, scheme, y, &ys[0] if step.n_x else NULL)
    except BaseException as exc:  # raised by a component called back
        master._stepped(t, h, y, step.n_done)
        if isinstance(exc, FlowTerminated):  # the others cannot follow it there
            raise FlowTerminated(t, x) from None
        raise
    if failed >= 0 or not step.finite:
        master._step_failed(failed, t, x, h, y)
    yb = y.tobytes()
    if master._extrapolates:  # the outputs at t, to extrapolate from t + h
        keep_last(master._history, (t_end, yb), (t, step.y_t.copy()), MAX_HISTORY)
    for flow, where in master._called.values():
        flow.stepped(t_end, y[where], h)
    if step.direct:
        master._compiled_at = [flow._at for flow, _ in master._called.values()]
    master._last_step = (t, x.copy(), t_end, y, h)
    master._end = (t_end, h, yb)
    return y


cpdef object step_done(master, double t, x, double h, scheme, double spent):
    """Keep how the master's last step got where it is, and its cost if plain."""
    cdef CommunicationStep step = master._compiled
    if spent >= 0.0:
        master._step_cost = _mean(master._step_cost, spent)
    if master._replays:
        keep_last(master._came_from, (t + h, master._end[2]),
                  (t, x, h, scheme, step.inputs() if step.direct else None),
                  MAX_HISTORY, False)


cpdef object keep_last(history, key, value, Py_ssize_t limit, bint move=True,
                       drop=None):
    """history[key] = value (moved last where `move`), the oldest beyond `limit`
    dropped (`drop`: their values' clean-up)."""
    history[key] = value
    if move:
        history.move_to_end(key)
    while len(history) > limit:
        dropped = history.popitem(last=False)[1]
        if drop is not None:
            drop(dropped)


cdef bint _at(double t, const double* x, Py_ssize_t n, double t_at, double snap,
              bytes x_at) except -1:
    """True if (t, x) is the point (t_at, x_at bytes), its time within snap."""
    return (fabs(t - t_at) <= snap and len(x_at) == n * sizeof(double)
            and (n == 0 or memcmp(x, <const char*> x_at, n * sizeof(double)) == 0))


cdef class MasterStepper(Stepper):
    """A master's steps for the compiled loops: a plain one without Python, every
    other its `advance`; `recorded`: the recorded variables after each."""

    cdef object master, scheme
    cdef CommunicationStep step
    cdef double snap_rtol
    cdef Py_ssize_t n_rec
    cdef Py_ssize_t[::1] rec_c
    cdef unsigned int[::1] rec_vrs
    cdef double[::1] rec_values
    cdef readonly object recorded
    cdef readonly tuple recorded_names

    def __init__(self, master, scheme, double snap_rtol, recorded=()):
        self.n, self.rhs = len(master.state_names), None
        self.master, self.step, self.scheme = master, master._compiled, scheme
        self.snap_rtol = snap_rtol
        self.n_rec = len(recorded)
        self.rec_c = np.array([c for c, _ in recorded] + [0], dtype=np.intp)
        self.rec_vrs = np.array([vr for _, vr in recorded] + [0], dtype=np.uintc)
        self.rec_values = np.zeros(self.n_rec + 1)
        # None: the Recorder asks the master (`observe`)
        self.recorded = np.asarray(self.rec_values)[:self.n_rec] if self.n_rec else None
        self.recorded_names = tuple(master.recorded_names) if self.n_rec else ()

    cdef bint _plain(self, double t, const double* x) except -1:
        """True if the step from (t, x) needs no Python: see the class."""
        cdef object master = self.master
        cdef double t_end, h_end
        if (self.n == 0 or master._may_undo is None or (
                master.recorded_names and not (self.n_rec and master._undoes_none))):
            return False
        t_end, h_end, y_end = master._end
        if not _at(t, x, self.n, t_end, self.snap_rtol * h_end, y_end):
            return False
        where = [flow._at for flow, _ in master._called.values()]
        return where == master._compiled_at

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        cdef object master = self.master
        cdef double start = _now()
        cdef Py_ssize_t i
        xs = new_array(x, self.n)
        if self._plain(t, x) and not master._may_undo(t, xs, h):
            y = take_step(master, t, xs, master._end[2], h)
            step_done(master, t, xs, h, self.scheme, _now() - start)
        else:
            y = master.advance(t, xs, h, self.scheme)
        copy_out(y, out, self.n)
        if self.n_rec:  # where the step left them, connections propagated
            self.step.evaluate(t + h, y)
            for i in range(self.n_rec):
                (<FmiFunctions> self.step.fmi[self.rec_c[i]]).get_reals(
                    &self.rec_vrs[i], 1, &self.rec_values[i])
        return 0


cdef class FmuStepper(Stepper):
    """A CS FMU's steps for the compiled loops: a plain one (no guards) in C, from
    its input tables; every other its flow's `advance` (unfinished: `finish_step`)."""

    cdef object flow, scheme
    cdef CommunicationStep step
    cdef FmiFunctions fmi
    cdef Py_ssize_t n_in
    cdef Readings readings
    cdef unsigned int[::1] in_vrs
    cdef double[::1] out  # the recorded outputs (and one spare)
    cdef double[::1] in_values, table_t, table_u
    cdef Py_ssize_t[::1] table_at
    cdef unsigned char[::1] held
    cdef readonly object recorded
    cdef readonly tuple recorded_names
    cdef readonly object observe_row  # [0]: 1 where the Recorder must log its events
    cdef bint reports_events
    cdef object at  # the flow's point (`_at`) after this stepper's last step
    cdef double snap  # times within this of that point's are the same time
    cdef double snap_rtol

    def __init__(self, flow, calls, scheme, Readings readings, inputs,
                 double snap_rtol):
        fmi, states = calls
        self.n, self.rhs = len(states), None
        self.flow, self.scheme, self.snap_rtol = flow, scheme, snap_rtol
        self.step = CommunicationStep([fmi], [states], [([], [])], [([], [])], [], [0])
        self.fmi = fmi
        self.readings = readings
        self.out = np.zeros(readings.n + 1)
        self.recorded = np.asarray(self.out)[:readings.n]  # a view of out
        self.recorded_names = tuple(flow.recorded_names)
        self.n_in = len(inputs)
        self.in_vrs = np.array([u[0] for u in inputs] + [0], dtype=np.uintc)
        self.in_values = np.zeros(self.n_in + 1)
        self.held = np.array([bool(u[3]) for u in inputs] + [0], dtype=np.uint8)
        self.table_at = np.cumsum([0] + [len(u[1]) for u in inputs], dtype=np.intp)
        self.table_t = np.concatenate([np.asarray(u[1], dtype=float) for u in inputs]
                                      + [np.zeros(1)])
        self.table_u = np.concatenate([np.asarray(u[2], dtype=float) for u in inputs]
                                      + [np.zeros(1)])
        self.at, self.snap = None, 0.0
        self.observe_row = np.zeros(1, dtype=np.uint8)
        self.reports_events = flow.reports_events

    cdef bint _plain(self, double t, const double* x) except -1:
        """True if the step from (t, x) needs no Python: see the class."""
        cdef object flow = self.flow
        if self.at is None or flow._at is not self.at or flow._instance is None:
            return False
        return flow._undoes_none and _at(t, x, self.n, self.at[0], self.snap,
                                         self.at[1])

    cdef int _set_inputs(self, double t) except -1:
        """Set the inputs for the step from t (`InputTable.value`)."""
        cdef Py_ssize_t k
        cdef double t_state, t_jump
        cdef bint after
        if self.n_in == 0:
            return 0
        t_state, t_jump = self.flow._passed
        after = t == t_state
        for k in range(self.n_in):
            self.in_values[k] = table_value(
                &self.table_t[self.table_at[k]], &self.table_u[self.table_at[k]],
                self.table_at[k + 1] - self.table_at[k], t_jump if after else t,
                self.held[k], after)
        return self.fmi.set_reals(&self.in_vrs[0], self.n_in, &self.in_values[0])

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        cdef object flow = self.flow
        cdef CommunicationStep step = self.step
        cdef int failed = 0
        if self._plain(t, x):
            self._set_inputs(t)
            failed = step.run(t, h, False, 0, t, None, None, None, None, out)
            if failed < 0 and step.finite:
                flow.stepped(t + h, new_array(out, self.n), h)
                return self._arrived(h)
            ended = step.ended if failed >= 0 else None
            y = flow.finish_step(t, h, ended, new_array(out, self.n))
        else:
            y = flow.advance(t, new_array(x, self.n), h, self.scheme)
        copy_out(y, out, self.n)
        if self.reports_events:
            self.observe_row[0] = 1
        return self._arrived(h)

    cdef int _arrived(self, double h) except -1:
        """Read the recorded outputs and note the FMU's point as this stepper's."""
        self.readings.read_into(&self.out[0])
        self.at, self.snap = self.flow._at, self.snap_rtol * h
        return 0

    def callbacks(self):
        """The Python functions the steps call back."""
        if self.flow._undoes_none:
            return []
        return [f"{type(self.flow).__name__}.advance"]


cdef class Readings:
    """Scalar variables read by their C gets, as doubles (`flows.fmu._Reader`)."""

    cdef FmiFunctions fmi
    cdef tuple names  # per get: its C name, for messages
    cdef size_t[::1] fns  # per get: its address
    cdef Py_ssize_t[::1] kinds  # per get: its C type, an `Element`
    cdef Py_ssize_t[::1] starts  # get g's vrs: vrs[starts[g]:starts[g + 1]]
    cdef unsigned int[::1] vrs
    cdef unsigned long long[::1] got  # get g's values, of its C type, at starts[g]
    cdef double[::1] read  # the values the gets read, as doubles, as vrs
    cdef Py_ssize_t[::1] take
    cdef readonly Py_ssize_t n  # variables

    def __init__(self, FmiFunctions fmi, getters, take):
        self.fmi, self.names = fmi, tuple(g[1] for g in getters)
        self.fns = np.array([g[0] for g in getters] + [0], dtype=np.uintp)
        self.kinds = np.array([ELEMENTS.index(g[2]) for g in getters] + [0],
                              dtype=np.intp)
        self.starts = np.cumsum([0] + [len(g[3]) for g in getters], dtype=np.intp)
        self.vrs = np.array([vr for g in getters for vr in g[3]] + [0], dtype=np.uintc)
        self.got = np.zeros(len(self.vrs), dtype=np.ulonglong)
        self.read = np.zeros(len(self.vrs))
        self.take = np.array(take, dtype=np.intp)
        self.n = len(self.take)

    cdef int read_into(self, double* out) except -1:
        """Write the variables' current values to out[0 .. n - 1]."""
        cdef Py_ssize_t g, i, at
        cdef Element kind
        cdef char* data
        for g in range(len(self.names)):
            at, kind = self.starts[g], <Element> self.kinds[g]
            data = <char*> &self.got[at]
            self.fmi.get_values(kind, <void*> self.fns[g], self.names[g],
                                &self.vrs[at], self.starts[g + 1] - at, data)
            for i in range(self.starts[g + 1] - at):
                self.read[at + i] = _as_double(data, kind, i)
        for i in range(self.n):
            out[i] = self.read[self.take[i]]
        return 0

    def values(self):
        """Return the variables' current values (a new array)."""
        cdef double[::1] out
        values = np.empty(self.n)
        out = values
        if self.n:
            self.read_into(&out[0])
        return values


cdef double _as_double(const char* data, Element kind, Py_ssize_t i) noexcept:
    """The i-th value of a buffer of the C type ELEMENTS[kind], as a double."""
    if kind == F8:
        return (<const double*> data)[i]
    if kind == F4:
        return (<const float*> data)[i]
    if kind == I4:
        return (<const int*> data)[i]
    if kind == U1:
        return (<const unsigned char*> data)[i]
    if kind == B1:  # one byte: C's bool, FMI 1.0's char fmiBoolean (true: not 0)
        return (<const unsigned char*> data)[i] != 0
    if kind == I1:
        return (<const signed char*> data)[i]
    if kind == I2:
        return (<const short*> data)[i]
    if kind == U2:
        return (<const unsigned short*> data)[i]
    if kind == U4:
        return (<const unsigned int*> data)[i]
    if kind == I8:
        return <double> (<const long long*> data)[i]
    return <double> (<const unsigned long long*> data)[i]
