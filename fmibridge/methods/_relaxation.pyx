"""Relaxation's steps, compiled: guards relaxed into strips of width eps
(Burden et al., Fig. 12).

`attempt` takes the attempts of one `Relaxation._attempt`: plain steps of h whose
end lies in the domain D_j (many per call where the flow is a vector field whose
steps need no call back between them, or a flow whose steps may run in blocks:
`steps_in_blocks`; each output time on the way ends a step, not the call:
`_walk.Walk.next_stop`), or one attempt whose trials of h, h/2,
... (Steps 4-5) end in the domain, or on a strip: there the point is projected
onto the guard along the step's own curve (`_guard_point`), waits eps - tau
(Steps 13-14) and its edge fires (`Method.fire`, Step 15; in place, without
Python, for a self-loop with a compiled or identity reset, after which the walk
goes on unless the run reads each transition: `Recorder.each_transition`). See
`relaxation.Relaxation` for the algorithm.

Under a tolerance (`CompiledMode.is_adaptive`) the first trial of each attempt is
the stepper's adaptive step (`Stepper.step`); the halved trials and the guard
point read that step's dense output (`Stepper.advance`). A fixed step's local
error is estimated with its end's slope and kept for the run when the step is
accepted, and each strip's wait with the displacement eps |dx/dt| it costs
(`LocalErrors`).

References
----------
Burden, Gonzalez, Vasudevan, Bajcsy, Sastry, "Metrization and simulation of
controlled hybrid systems", Fig. 12; strips Def. 14, strip vector field Def. 17,
relaxed guards and resets Def. 18. Dowell and Jarratt, BIT 11 (1971), the
Illinois method (`core.events`).
"""

from libc.math cimport fabs, isfinite

import numpy as np

from ..core.events cimport (
    Illinois, all_finite, bracket_sign, illinois_close, illinois_mirror,
    illinois_narrow, illinois_secant, illinois_start,
)
from ..core._functions cimport new_array
from ._firing cimport Firing, fire, fire_in_place, fires_in_place
from ._mode cimport CompiledMode, reached
from ._walk cimport Walk, attempt_with

from ._firing import FIRED

from ..core.records import State, Status, Step, Waiting, non_finite

# Projection onto the guard (Illinois regula falsi along the step's own curve)
# stops once the guard point's |g| is below PROJECT_GTOL * eps: one millionth of
# the O(eps) error the strip costs anyway (Burden et al., Thm. 27).
PROJECT_GTOL = 1e-6
# Bound on projection iterations; Illinois converges superlinearly, about ten
# iterations reach PROJECT_GTOL from a bracket of one step.
PROJECT_MAX_ITER = 100

# where a trial point lies (`_classify`), besides on the strip of an edge (>= 0)
cdef enum:
    DOMAIN = -1   # in D_j: no guard beyond its surface
    OUTSIDE = -2  # outside D_j^eps (or not finite): halve


cdef class _Walk(Walk):
    """Relaxation's walk (`_walk.Walk`), with the strip width eps, the guard
    point q, the edges whose strips a trial point lies on, deepest first
    (order[:n_beyond], their depths taus), and per edge whether it fires
    without Python (`in_place`, `_firing.fires_in_place`), read once from the
    mode."""

    cdef double eps, gtol
    cdef long max_events
    cdef bint each_transition
    cdef Py_ssize_t n_beyond
    cdef double[::1] q, taus
    cdef Py_ssize_t[::1] order
    cdef unsigned char[::1] in_place

    def __init__(self, CompiledMode cm):
        Walk.__init__(self, cm)
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.q, self.taus = np.empty(n), np.empty(m)
        self.order = np.empty(m, dtype=np.intp)
        self.in_place = np.array(
            [fires_in_place(cm, i) for i in range(len(cm.mode.edges))] + [False],
            dtype=np.uint8)

    cdef int read_settings(self, method) except -1:
        """Read the method's parameters (`Walk.read_settings`), with the strips'
        width."""
        Walk.read_settings(self, method)
        self.eps, self.gtol = method.eps, PROJECT_GTOL * method.eps
        self.max_events = method.max_events
        return 0

    cdef int start(self, method, log, double t_end, double t0, state) except -1:
        """Start a call from `state` (`Walk.start`)."""
        self.each_transition = log.each_transition
        return Walk.start(self, method, log, t_end, t0, state)

    cdef object walk(self, method, log, double t_end, double t0, state):
        """Go on with a strip's wait (`_wait`), else take attempts (`Walk.walk`)."""
        if isinstance(state, Waiting):
            self.begin(method, log)
            return _wait(self.firing, self.cm, state,
                         self.next_stop(state.t, t_end), log)
        return Walk.walk(self, method, log, t_end, t0, state)

    cdef object step(self):
        """One attempt (Fig. 12, Steps 4-15; `_attempt`)."""
        return _attempt(self)


def attempt(method, CompiledMode cm, state, double t_end, log):
    """Take Relaxation's attempts from `state` (see the module docstring); return
    the Step."""
    return attempt_with(_Walk, method, cm, state, t_end, 0.0, log)


cdef inline double _depth(double side, double g_start, double g) noexcept:
    """How far g lies beyond the guard's surface, or -1 inside (a depth is never
    negative): below zero for a falling guard (side +1), above for a rising one
    (-1); for 'either' (0, an FMU's event indicator), on the other side of zero
    than g_start, the value at the step's start."""
    if side > 0.0:
        return -g if g < 0.0 else -1.0
    if side < 0.0:
        return g if g > 0.0 else -1.0
    return fabs(g) if g * g_start < 0.0 else -1.0


cdef int _classify(_Walk w, const double* g) noexcept:
    """Where a finite trial point with guard values g lies: DOMAIN, OUTSIDE, or
    on the strip of the edge returned, the deepest (ties: the edge declared
    first); the edges it lies beyond go to order[:n_beyond], deepest first."""
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


cdef int _trial_end(_Walk w, double t1, const double* y, double* g) except? -3:
    """Where the trial point y at t1 lies (`_classify`), its guards written to g;
    OUTSIDE, with g not evaluated, if y is not finite."""
    if not all_finite(y, w.cm.n):
        return OUTSIDE
    w.cm.evaluate(t1, y, g)
    return _classify(w, g)


cdef object _attempt(_Walk w):
    """One attempt from the walk's point (Fig. 12, Steps 4-15): returns None
    after a plain step of h into the domain (the walk moved on), else the Step
    that ends it.

    Trials of h (the last one shortened to land on t_end), h/2, h/4, ... until
    the trial point lies in D_j^eps (the trial restarts at h every attempt, as
    n' restarts at 0 in Step 4). A trial in the domain whose guard may have
    dipped beyond its surface and come back inside the step
    (`CompiledMode.dip`) is replaced by the trial to the dip's bottom,
    classified like any other.
    """
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
        where = _trial_end(w, t + hs, &w.y[0], &w.g1[0])
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
    return None if k == 0 else w.at_point()


cdef object _strip(_Walk w, int i, double t, double hs, double t1):
    """The trial of hs from (t, x) ended at (t1, y) on the strip of edge i
    (order[:n_beyond], the deepest first): the point is recorded at t1, waits
    eps - tau on the strip (Steps 13-14), and at t1 + eps - tau the edge's reset
    acts on q, where the step entered the guard (Step 15, R^eps(q, eps) = R(q)),
    or on y itself for a guard with reset_at='beyond' (an FMU's event mode
    tests its own condition). A self-loop that fires without Python
    (`fires_in_place`) and alone allocates no Python object."""
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
    if w.n_beyond > 1:
        edges = cm.mode.edges
        others = tuple([edges[w.order[j]].name for j in range(1, w.n_beyond)])
    else:
        others = ()
    if t_reset > w.t_end:  # the wait goes on past this attempt (Step 14)
        q = new_array(&w.q[0], n)
        cm.flush(w.log)
        if t1 < w.t_end:
            w.log.sample(w.t_end, q, cm.name)
        return Step(Waiting(w.t_end, q, cm.name, t_reset, i, others))
    if others or not w.in_place[i]:
        return Step(fire(w.firing, cm, w.log, t_reset, new_array(&w.q[0], n), i,
                         others))
    # a self-loop fired without Python: a silent one (a strip wait at rest), or
    # a logged one where the run's method does not read each transition as it
    # comes (`Recorder.each_transition`: Completion does), leaves the walk at
    # (t_reset, q), from where it goes on
    for j in range(n):
        w.x[j] = w.q[j]
    code = fire_in_place(w.firing, cm, w.log, t_reset, &w.x[0], i)
    if (code == FIRED and w.each_transition) or _bound_hit(w):
        return Step(State(t_reset, new_array(&w.x[0], n), cm.name))
    w.t = t_reset
    cm.evaluate(w.t, &w.x[0], &w.g0[0])
    w.has_slope = False
    return None


cdef object _wait(Firing how, CompiledMode cm, state, double t_end, log):
    """Go on with a strip's wait from `state`: held at its point until t_end,
    or its edge fires at t_reset (Fig. 12, Steps 13-15)."""
    if state.t_reset > t_end:
        log.sample(t_end, state.x, cm.name)
        return Step(Waiting(t_end, state.x, cm.name, state.t_reset, state.edge,
                            state.others))
    return Step(fire(how, cm, log, state.t_reset, state.x, state.edge, state.others))


cdef bint _bound_hit(_Walk w) except -1:
    """True once the run's transitions, silent ones included, reach max_events
    (the Python loop then stops with MAX_EVENTS)."""
    log = w.log
    return len(log.events) + log.n_silent_events >= w.max_events


cdef object _no_step(_Walk w, double hs):
    """Stop after Step 5's n' = inf (or once halving stops advancing time): an
    error naming the guard or the flow if the last trial, of hs, was not finite,
    else Status.NO_PROGRESS."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, m = cm.m
    cm.stepper.advance(w.t, &w.x[0], hs, NULL, &w.y[0])
    cm.evaluate(w.t + hs, &w.y[0], &w.g1[0])
    if not (all_finite(&w.y[0], n) and all_finite(&w.g1[0], m)):
        raise non_finite(cm.mode, w.t + hs, new_array(&w.y[0], n), list(w.g1[:m]))
    return Step(
        State(w.t, new_array(&w.x[0], n), cm.name),
        Status.NO_PROGRESS,
        f"No trial step from t = {w.t!r} in mode {cm.name!r} lands in the "
        f"domain or a strip after {w.max_halvings} halvings (max_halvings).",
    )


cdef int _guard_point(_Walk w, double t, Py_ssize_t i, double g_start,
                      double g_strip, double s) except -1:
    """Write to w.q the point q where the step's curve A^sigma(t, x), sigma in
    [0, s], first meets guard i (g_start its value at t, g_strip at the strip
    point).

    Illinois regula falsi on the guard signed positive inside
    (`core.events`), keeping the domain-side end (so a reset never leaves the
    state beyond the guard it just left), until that end's |g| is below
    PROJECT_GTOL eps (`illinois_close`) or the secant falls outside the bracket
    (round-off width). A trial where the flow or the guard is not finite
    counts as beyond, with lo's value mirrored (`illinois_mirror`). If x itself
    lies beyond the guard (a reset put it there: a simultaneous transition),
    the strip was entered at x and q = x; from its surface, the curve may rise
    inside first (`_inside_point`).
    """
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
        # on the surface (a reset left it there): the curve may rise inside
        # first and come back (a hop shorter than the step)
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
    """Find a point on the step's curve inside guard i by more than the
    projection's tolerance: write its sigma and g, and the state to q; False if
    none.

    False at once where the state moves out of the domain at the start (the
    guard's rate, `CompiledMode.rates`); else probes sigma = eps, 2 eps, 4 eps,
    ... below s, so a short hop costs a few probes: a dip inside the domain
    shorter than the strip time eps moves q by O(eps) only (Thm. 27).
    """
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
