"""Relaxation's steps, compiled (`relaxation.Relaxation` describes them and
cites Burden et al.): a trial on a strip is projected onto the guard along the
step's curve (`_guard_point`), waits and fires, in place where it can.
"""

from libc.math cimport fabs, isfinite

import numpy as np

from ..core.events cimport (
    Illinois, all_finite, bracket_sign, illinois_close, illinois_mirror,
    illinois_narrow, illinois_secant, illinois_start,
)
from ..core._functions cimport Function, new_array
from ._firing cimport fire, fire_in_place
from ._mode cimport CompiledMode, reached
from ._walk cimport Walk

from ._firing import FIRED

from ..core.records import State, Status, Step, Waiting, non_finite

# The projection onto the guard stops at |g| < PROJECT_GTOL eps: a millionth of
# the O(eps) error the strip costs anyway (Thm. 27).
PROJECT_GTOL = 1e-6
# Bound on projection iterations: Illinois takes about ten from one step.
PROJECT_MAX_ITER = 100

# where a trial point lies (`_classify`), besides on the strip of an edge (>= 0)
cdef enum:
    DOMAIN = -1   # in D_j: no guard beyond its surface
    OUTSIDE = -2  # outside D_j^eps (or not finite): halve


cdef class _Walk(Walk):
    """Relaxation's walk: eps, the guard point q, the strips a trial point lies
    on, deepest first (order[:n_beyond], depths taus), the edges `in_place`."""

    cdef double eps, gtol
    cdef long max_events
    cdef Py_ssize_t n_beyond
    cdef double[::1] q, taus
    cdef Py_ssize_t[::1] order
    cdef unsigned char[::1] in_place

    def __init__(self, CompiledMode cm):
        Walk.__init__(self, cm)
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.q, self.taus = np.empty(n), np.empty(m)
        self.order = np.empty(m, dtype=np.intp)
        self.in_place = np.array(  # self-loops, compiled or identity, no approach
            [<bint>loop and e.approach is None
             and (r is None or isinstance(r, Function))
             for e, r, loop in zip(cm.mode.edges, cm.resets, cm.self_loop)] + [False],
            dtype=np.uint8)

    cdef int read_settings(self, method) except -1:
        Walk.read_settings(self, method)
        self.eps, self.gtol = method.eps, PROJECT_GTOL * method.eps
        self.max_events = method.max_events
        return 0

    cdef object walk(self, method, log, double t_end, double t0, state):
        """Go on with a strip's wait (to t_end, or fire at t_reset), else walk."""
        if not isinstance(state, Waiting):
            return Walk.walk(self, method, log, t_end, t0, state)
        self.begin(method, log)
        t_end = self.next_stop(state.t, t_end)
        if state.t_reset > t_end:
            log.sample(t_end, state.x, self.cm.name)
            return Step(Waiting(t_end, state.x, self.cm.name, state.t_reset,
                                state.edge, state.others))
        return Step(fire(self.firing, self.cm, log, state.t_reset, state.x,
                         state.edge, state.others))

    cdef object step(self):
        return _attempt(self)


cdef inline double _depth(double side, double g_start, double g) noexcept:
    """How far g lies beyond the guard's surface (from g_start's side), -1 inside."""
    if side > 0.0:
        return -g if g < 0.0 else -1.0
    if side < 0.0:
        return g if g > 0.0 else -1.0
    return fabs(g) if g * g_start < 0.0 else -1.0


cdef int _classify(_Walk w, const double* g) noexcept:
    """DOMAIN, OUTSIDE, or the edge of the deepest strip a trial point lies on."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t i, k
    cdef double tau
    w.n_beyond = 0
    for i in range(cm.m):
        if not isfinite(g[i]):
            return OUTSIDE
        tau = _depth(cm.sides[i], w.g0[i], g[i])
        if tau < 0.0:
            continue
        if tau > w.eps:
            return OUTSIDE
        k = w.n_beyond
        while k > 0 and w.taus[k - 1] < tau:
            w.taus[k], w.order[k] = w.taus[k - 1], w.order[k - 1]
            k -= 1
        w.taus[k], w.order[k] = tau, i
        w.n_beyond += 1
    return DOMAIN if w.n_beyond == 0 else <int>w.order[0]


cdef object _attempt(_Walk w):
    """One attempt (Fig. 12, Steps 4-15): None after a plain step, else the Step."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, m = cm.m
    cdef double t = w.t, hs = min(w.span, w.t_end - t), sigma = 0.0, t1
    cdef long k
    cdef int where = OUTSIDE, inside
    cdef bint has_r1 = False
    for k in range(w.max_halvings + 1):
        if k == 0:  # the step: of hs, or the adaptive step's own length
            hs = cm.stepper.step(t, &w.x[0], hs,
                                 &w.slope[0] if w.has_slope else NULL, &w.y[0])
        else:
            cm.stepper.advance(t, &w.x[0], hs,
                               &w.slope[0] if w.has_slope else NULL, &w.y[0])
        where = OUTSIDE
        if all_finite(&w.y[0], n):
            cm.evaluate(t + hs, &w.y[0], &w.g1[0])
            where = _classify(w, &w.g1[0])
        has_r1 = False
        if where == DOMAIN and cm.has_rhs:
            cm.rates(t + hs, &w.y[0], &w.g1[0], &w.s1[0], &w.r1[0])
            w.estimate(hs)  # made with s1 before `dip` steps again
            has_r1 = True
            if cm.may_dip(&w.g0[0], &w.r0[0], w.has_slope, &w.g1[0], &w.r1[0]) and (
                cm.dip(t, &w.x[0], &w.g0[0], &w.r0[0], &w.slope[0], &w.has_slope,
                       hs, &w.g1[0], &w.r1[0], &sigma, &w.z[0], &w.gz[0],
                       w.method, w.log)
            ):
                inside = _classify(w, &w.gz[0]) if all_finite(&w.z[0], n) else OUTSIDE
                if inside != DOMAIN:  # the guard dipped beyond: go there
                    hs, where, has_r1 = sigma, inside, False
                    w.y[:n] = w.z[:n]
                    w.g1[:m] = w.gz[:m]
        if where != OUTSIDE:
            break
        w.n_rejected += 1
        if t + hs / 2 == t:  # a shorter trial would not advance time
            return _no_step(w, hs)
        hs /= 2
    else:
        return _no_step(w, 2 * hs)
    w.n_steps += 1
    t1 = w.t_end if reached(t + hs, w.t_end, w.h) else t + hs
    if where != DOMAIN:
        return _strip(w, where, t, hs, t1)
    w.accept(t1, hs, has_r1)
    return None


cdef object _strip(_Walk w, int i, double t, double hs, double t1):
    """Record y on the strip of edge i at t1, wait eps - tau (Steps 13-14) and
    reset q (Step 15, R^eps(q, eps) = R(q)), or y for reset_at='beyond'."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, j
    cdef double t_reset
    w.has_err = False
    if w.errors is not None:  # the wait displaces the state by eps |dx/dt|
        for j in range(n):
            w.z[j] = (w.y[j] - w.x[j]) / hs
        w.errors.add_strip(t1, w.eps, &w.z[0])
    if cm.has_rhs:
        cm.keep(t1, &w.y[0], w.log)
    else:  # a Co-Simulation flow's outputs are read now, before the projection
        cm.flush(w.log)
        w.log.sample(t1, new_array(&w.y[0], n), cm.name)
    if w.beyond[i]:
        for j in range(n):
            w.q[j] = w.y[j]
    else:
        _guard_point(w, t, i, w.g0[i], w.g1[i], hs)
    t_reset = t1 + w.eps - w.taus[0]  # Fig. 12, Step 13
    others = tuple([cm.mode.edges[w.order[j]].name for j in range(1, w.n_beyond)])
    if t_reset > w.t_end:  # the wait goes on past this attempt (Step 14)
        q = new_array(&w.q[0], n)
        cm.flush(w.log)
        if t1 < w.t_end:
            w.log.sample(w.t_end, q, cm.name)
        return Step(Waiting(w.t_end, q, cm.name, t_reset, i, others))
    if others or not w.in_place[i]:
        return Step(fire(w.firing, cm, w.log, t_reset, new_array(&w.q[0], n), i,
                         others))
    # a self-loop fired in place: the walk goes on from (t_reset, q) unless the
    # run reads each transition (`Recorder.each_transition`: Completion)
    for j in range(n):
        w.x[j] = w.q[j]
    code = fire_in_place(w.firing, cm, w.log, t_reset, &w.x[0], i)
    log = w.log  # at max_events, silent ones too, the run loop stops
    if (code == FIRED and log.each_transition) or (
            len(log.events) + log.n_silent_events >= w.max_events):
        return Step(State(t_reset, new_array(&w.x[0], n), cm.name))
    w.t = t_reset
    cm.evaluate(w.t, &w.x[0], &w.g0[0])
    w.has_slope = False
    return None


cdef object _no_step(_Walk w, double hs):
    """Stop after Step 5's n' = inf: NO_PROGRESS, or an error if not finite."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, m = cm.m
    cm.stepper.advance(w.t, &w.x[0], hs, NULL, &w.y[0])
    cm.evaluate(w.t + hs, &w.y[0], &w.g1[0])
    if not (all_finite(&w.y[0], n) and all_finite(&w.g1[0], m)):
        raise non_finite(cm.mode, w.t + hs, new_array(&w.y[0], n), list(w.g1[:m]))
    return w.stopped(
        Status.NO_PROGRESS,
        f"No trial step from t = {w.t!r} in mode {cm.name!r} lands in the "
        f"domain or a strip after {w.max_halvings} halvings (max_halvings).")


cdef int _guard_point(_Walk w, double t, Py_ssize_t i, double g_start,
                      double g_strip, double s) except -1:
    """Write to w.q where A^sigma(t, x), sigma in [0, s], first meets guard i,
    by Illinois keeping the domain side (a non-finite trial counts as beyond)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n
    cdef double side = cm.sides[i], sign, lo = 0.0, g_q = g_start, sigma, g
    cdef Illinois bracket
    cdef long _k
    cdef Py_ssize_t j
    for j in range(n):
        w.q[j] = w.x[j]
    if _depth(side, g_start, g_start) >= 0.0:
        return 0  # a reset left the state beyond this guard: q = x
    if fabs(g_start) <= w.gtol:
        # on the surface: the curve may rise inside first (a short hop)
        if not _inside_point(w, t, i, s, &lo, &g_q):
            return 0  # it leaves at once: enters the strip here, q = x
    sign = bracket_sign(side, g_start, g_strip)  # +1 falling, -1 rising, g_start's
    bracket = illinois_start(lo, sign * g_q, s, sign * g_strip, 0.0)  # no width
    for _k in range(PROJECT_MAX_ITER):
        if illinois_close(&bracket, w.gtol):
            break
        sigma = illinois_secant(&bracket)
        if not bracket.lo < sigma < bracket.hi:  # the bracket is at round-off
            break
        cm.stepper.advance(t, &w.x[0], sigma, NULL, &w.z[0])
        cm.evaluate(t + sigma, &w.z[0], &w.gz[0])
        g = w.gz[i]
        if not (all_finite(&w.z[0], n) and isfinite(g)):
            illinois_mirror(&bracket, sigma)  # next trial: the bracket's middle
        elif illinois_narrow(&bracket, sigma, sign * g):
            for j in range(n):
                w.q[j] = w.z[j]
    return 0


cdef bint _inside_point(_Walk w, double t, Py_ssize_t i, double s, double* sigma,
                        double* g) except -1:
    """Probe sigma = eps, 2 eps, ... below s for a point inside guard i (to q)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n
    cdef double side = cm.sides[i], probe = w.eps, value
    cdef long _k
    cdef Py_ssize_t j
    if side != 0.0 and cm.has_rhs:
        cm.rates(t, &w.x[0], &w.g0[0], &w.s1[0], &w.r1[0])
        if not side * w.r1[i] > 0.0:
            return False
    for _k in range(w.max_halvings):
        if probe >= s:
            break
        cm.stepper.advance(t, &w.x[0], probe, NULL, &w.z[0])
        cm.evaluate(t + probe, &w.z[0], &w.gz[0])
        value = w.gz[i]
        if isfinite(value) and _depth(side, 0.0, value) < 0.0 and fabs(value) > w.gtol:
            sigma[0], g[0] = probe, value
            for j in range(n):
                w.q[j] = w.z[j]
            return True
        probe *= 2
    return False
