"""Firing an edge, for every method: its reset applied, checked and logged.

A self-loop whose reset changes nothing is counted in `n_silent_events`
(unless `Edge.discrete_change`); a reset that returns wrong or non-finite
values, or leaves a self-loop's state beyond its own guard, is an error naming
it. An impact fires only on an approach (Or and Ames eq. 4), else it is a graze.
"""

from libc.math cimport NAN, isfinite

import numpy as np

from ..core._functions cimport Function, new_array
from ..core.events cimport all_finite, same
from ._mode cimport CompiledMode

from ..core.errors import FmibridgeError
from ..core.records import ON_SURFACE, Event, State

FIRED, SILENT = 0, 1  # `fire_in_place`: a transition logged, or a silent one
cdef double _ON_SURFACE = ON_SURFACE


def fire_edge(method, CompiledMode cm, log, state, Py_ssize_t i, tuple others):
    """`fire` from Python (`Method.fire_at`) at `state`, as `method` fires."""
    cdef Firing how = Firing(method.resets_on_approach, method.location_tolerance)
    return fire(how, cm, log, state.t, state.x, i, others)


cdef object fire(Firing how, CompiledMode cm, object log, double t, object x,
                 Py_ssize_t i, tuple others, bint in_walk=False,
                 double step_rate=NAN):
    """Apply edge i's reset at (t, x), log the event, return the State after.
    `in_walk`: the event's rows may join the walk's block; `step_rate`: the
    guard's rate over the locating step (the approach without dx/dt)."""
    cdef double[::1] xb, xa
    x = np.array(x, dtype=float)
    edge = cm.mode.edges[i]
    # an impact: a reset, a falling or rising guard, not the model's own event,
    # dx/dt or a `step_rate`
    if edge.approach is not None or (
            how.on_approach and cm.resets[i] is not None and cm.n > 0
            and (cm.has_rhs or isfinite(step_rate)) and cm.sides[i] != 0.0
            and edge.discrete_change is None):
        approach = _approach(cm, i, t, x, step_rate)
        if not approach < 0.0:  # not approaching: a graze, no impact
            log.graze(t, edge.name, approach, edge.approach is not None)
            return State(t, x, cm.name)
    reset = cm.resets[i]
    cdef bint in_block = (
        in_walk and cm.n > 0 and log.blocks_event_rows and log.observer is None
        and (reset is None or isinstance(reset, Function)))
    xb = x
    if in_block:
        cm.keep(t, &xb[0], log)
    else:
        cm.flush(log)
        log.sample(t, x, cm.name)
    x_after = _reset(cm, i, t, x)
    xa = x_after
    if cm.self_loop[i]:
        _check_reset(cm, i, t, &xb[0], &xa[0])
        if same(&xb[0], &xa[0], xb.shape[0]) and not (
                edge.discrete_change is not None and edge.discrete_change()):
            log.n_silent_events += 1
            return State(t, x, cm.name)
    if in_block and cm.self_loop[i]:
        cm.keep(t, &xa[0], log)
    else:
        cm.flush(log)
        log.sample(t, x_after, edge.target)
    log.event(Event(t, edge.name, cm.name, edge.target, x, x_after, others, how.t_tol))
    if others:
        _say_which_ran(cm, log, t, edge, others)
    return State(t, x_after, edge.target)


cdef object _say_which_ran(CompiledMode cm, object log, double t, object ran,
                           tuple others):
    """Warn where a model's own event and an adapter's edge crossed together."""
    edges = {e.name: e for e in cm.mode.edges}
    is_own = ran.discrete_change is not None
    for name in others:
        other = edges.get(name)
        if other is None or (other.discrete_change is not None) == is_own:
            continue
        own, added = (ran, other) if is_own else (other, ran)
        log.warn_once(
            ("which ran", own.name, added.name),
            f"At t = {t:.9g} s the model's own event {own.name!r} and the edge "
            f"{added.name!r} (guard {added.guard.name!r}) crossed together: "
            f"{ran.name!r} ran, declared first in mode {cm.name!r} (of crossings "
            f"within t_tol the first declared fires), and {name!r} did not apply "
            f"there. "
            + ("The FMU's own reset ran, not the edge's, nor a completion of its "
               "contact; to use them, export the model without its own impact."
               if is_own else
               "The edge's reset ran, not the FMU's own; its event follows only "
               "if its indicator still crosses after the reset.")
        )


cdef double _approach(CompiledMode cm, Py_ssize_t i, double t, object x,
                      double step_rate) except? -1.0:
    """Edge i's normal velocity v_n at (t, x), < 0 approaching."""
    edge = cm.mode.edges[i]
    if edge.approach is not None:
        return float(edge.approach(t, x))
    cdef double[::1] xs = x, r = cm.work_r
    if not cm.has_rhs:
        return cm.sides[i] * step_rate
    cm.impact_rates(t, &xs[0], &r[0])
    return cm.sides[i] * r[i]


cdef int fire_in_place(Firing how, CompiledMode cm, object log, double t,
                       double* x, Py_ssize_t i) except -1:
    """`fire` edge i at (t, x) without Python, over x; SILENT or FIRED."""
    cdef Py_ssize_t n = cm.n, k
    cdef Function reset = cm.resets[i]
    cdef double[::1] after = cm.work_after
    cm.keep(t, x, log)
    if reset is None:
        for k in range(n):
            after[k] = x[k]
    else:
        reset.call(t, x, &after[0])
        if not all_finite(&after[0], n):
            _reset(cm, i, t, new_array(x, n))  # raises, naming the reset
    _check_reset(cm, i, t, x, &after[0])
    if same(x, &after[0], n):
        log.n_silent_events += 1
        return SILENT
    before, x_after = new_array(x, n), new_array(&after[0], n)
    if log.blocks_event_rows:  # the sample after joins the mode's block
        cm.keep(t, &after[0], log)
    else:
        cm.flush(log)
        log.sample(t, x_after, cm.name)
    edge = cm.mode.edges[i]
    log.event(Event(t, edge.name, cm.name, cm.name, before, x_after, (),
                    how.t_tol))
    for k in range(n):
        x[k] = after[k]
    return FIRED


cdef object _reset(CompiledMode cm, Py_ssize_t i, double t, object x):
    """Edge i's reset at (t, x): n finite values, else an error naming it."""
    reset = cm.resets[i]
    if reset is None:
        return x.copy()
    cdef const double[::1] values, given
    cdef double[::1] out
    cdef Function compiled
    if isinstance(reset, Function):
        compiled = reset
        if compiled.n_in == cm.n and cm.n:  # called on x as it is, from here
            after = np.empty(compiled.n_out)
            out, given = after, x
            compiled.call(t, &given[0], &out[0])
            values = after
        else:
            after = reset(t, x)
            values = after
        if all_finite(&values[0], values.shape[0]):
            return after
        reset = cm.mode.edges[i].reset  # the numba function, for the message
    after = np.asarray(reset(t, x.copy()), dtype=float)
    if after.shape == x.shape:
        after = np.ascontiguousarray(after)
        values = after
        if values.shape[0] == 0 or all_finite(&values[0], values.shape[0]):
            return after
    edge = cm.mode.edges[i]
    raise FmibridgeError(
        f"Reset `{getattr(edge.reset, '__name__', type(edge.reset).__name__)}` "
        f"of edge {edge.name!r} returned {after.tolist()!r} at t = {t!r}; it "
        f"must return {cm.n} finite values, one per state "
        f"{list(cm.mode.flow.state_names)}."
    )


cdef int _check_reset(CompiledMode cm, Py_ssize_t i, double t, const double* x_before,
                      const double* x_after) except -1:
    """Refuse a self-loop's reset that would fire again at once."""
    cdef double side = cm.sides[i], g_before, g_after, reach, rate_after
    cdef double[::1] g = cm.work_g, r = cm.work_r, slope = cm.work_slope
    if side == 0.0:
        return 0
    cm.evaluate(t, x_before, &g[0])
    g_before = g[i]
    cm.evaluate(t, x_after, &g[0])
    g_after = g[i]
    if not isfinite(g_after):
        raise _refused(cm, i, t, x_after, "finite", g_before, g_after, 0.0)
    reach = max(_ON_SURFACE, 2.0 * abs(g_before))
    if side * g_after < -reach:
        raise _refused(cm, i, t, x_after, "beyond", g_before, g_after, 0.0)
    if abs(g_after) > reach or not cm.has_rhs:
        return 0  # off the guard, further than the event found it
    cm.rates(t, x_after, &g[0], &slope[0], &r[0])
    if side * r[i] * cm.h >= -_ON_SURFACE:
        return 0
    # the difference along the flow is blind below x's last place: only the
    # gradient's rate may refuse the reset
    cm.impact_rates(t, x_after, &r[0])
    rate_after = r[i]
    if side * rate_after * cm.h >= -_ON_SURFACE:
        return 0
    cm.impact_rates(t, x_before, &r[0])
    if side * r[i] < 0.0:  # moving out before the reset, and still after it
        raise _refused(cm, i, t, x_after, "moving out", g_before, g_after, rate_after)
    return 0


cdef object _refused(CompiledMode cm, Py_ssize_t i, double t, const double* x_after,
                     str why, double g_before, double g_after, double rate):
    """The error `_check_reset` raises, naming the edge and its guard."""
    edge = cm.mode.edges[i]
    guard = edge.guard
    where = f"at t = {t!r}, x = {new_array(x_after, cm.n).tolist()}"
    if why == "finite":
        return FmibridgeError(
            f"Guard {guard.name!r} returned {g_after!r} just after the reset of "
            f"edge {edge.name!r} {where}; a guard must be finite wherever the "
            f"flow is defined."
        )
    if why == "beyond":
        return FmibridgeError(
            f"The reset of edge {edge.name!r} leaves the state beyond its own "
            f"guard {guard.name!r}: g = {g_after!r} after it (g = {g_before!r} "
            f"before) {where}. A reset must return the state into the domain "
            f"(g {'>=' if cm.sides[i] > 0 else '<='} 0)."
        )
    return FmibridgeError(
        f"The reset of edge {edge.name!r} leaves the state on its guard "
        f"{guard.name!r} moving out of the domain as before it (dg/dt = "
        f"{rate:.6g}) {where}: the guard would fire again at once. The "
        f"reset must turn the state back into the domain (an impact "
        f"reverses the velocity)."
    )
