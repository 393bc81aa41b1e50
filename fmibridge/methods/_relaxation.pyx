"""Relaxation's steps, compiled: guards relaxed into strips of width eps
(Burden et al., Fig. 12).

`attempt` takes the attempts of one `Relaxation._attempt`: plain steps of h whose
end lies in the domain D_j (many per call where the flow is a vector field whose
steps need no call back between them), or one attempt whose trials of h, h/2,
... (Steps 4-5) end in the domain, or on a strip: there the point is projected
onto the guard along the step's own curve (`_guard_point`), waits eps - tau
(Steps 13-14) and its edge fires (`Method.fire`, Step 15). See
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

from libc.math cimport INFINITY, fabs, isfinite

import numpy as np

from ..core.events cimport (
    Illinois, all_finite, bracket_sign, illinois_close, illinois_mirror,
    illinois_narrow, illinois_secant, illinois_start,
)
from ..core._functions cimport new_array
from ..core._local_errors cimport LocalErrors
from ..flows._stepper cimport AdaptiveStepper
from ._firing cimport fire, fire_in_place, fires_in_place
from ._mode cimport BLOCK_SIZE, CompiledMode, reached

from ._firing import FIRED

from ..core.result import Status
from .base import Rated, State, Step, Waiting, non_finite

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


cdef class _Walk:
    """One call's state and scratch: the point (t, x) with its guards g0 and,
    where known, their rates r0 and dx/dt there (slope); a trial's end y with
    its guards g1 (and r1, s1 in the domain); the edges whose strips a trial
    point lies on, deepest first (order[:n_beyond], their depths taus). Kept
    with its mode between calls (`CompiledMode.work`)."""

    cdef CompiledMode cm
    cdef object method, log
    cdef double h, span, eps, gtol, t_end, t
    cdef long max_halvings, n_steps, n_rejected, max_steps
    cdef Py_ssize_t n_beyond
    cdef bint has_slope, busy, has_err
    cdef double[::1] x, g0, r0, slope, y, g1, r1, s1, z, gz, q, taus, err
    cdef Py_ssize_t[::1] order
    cdef LocalErrors errors

    def __init__(self, CompiledMode cm):
        self.cm, self.busy = cm, False
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.x, self.y, self.slope, self.s1 = (np.empty(n) for _ in range(4))
        self.z, self.q, self.err = np.empty(n), np.empty(n), np.empty(n)
        self.g0, self.g1, self.r0, self.r1 = (np.empty(m) for _ in range(4))
        self.gz, self.taus = np.empty(m), np.empty(m)
        self.order = np.empty(m, dtype=np.intp)

    cdef int start(self, method, log, double t_end, state) except -1:
        """Start a call from `state`: the method's parameters and the point."""
        cdef CompiledMode cm = self.cm
        cdef Py_ssize_t n = cm.n, m = cm.m
        cdef double[::1] given = np.ascontiguousarray(state.x, dtype=float)
        self.method, self.log, self.t_end = method, log, t_end
        self.h, self.eps = method.h, method.eps
        # the longest trial: h, or up to t_end under a tolerance
        self.span = INFINITY if cm.is_adaptive else method.h
        self.errors = getattr(log, "local_errors", None)
        if self.errors is not None and self.errors.n != cm.n:
            self.errors = None
        self.has_err = False
        self.gtol = PROJECT_GTOL * method.eps
        self.max_halvings = method.max_halvings
        self.n_steps, self.n_rejected = 0, 0
        self.max_steps = method.max_steps - log.n_steps
        self.t = state.t
        self.x[:n] = given
        cm.evaluate(self.t, &self.x[0], &self.g0[0])
        if not all_finite(&self.g0[0], m):
            x = new_array(&self.x[0], n)
            raise non_finite(cm.mode, self.t, x, list(self.g0[:m]))
        self.has_slope = isinstance(state, Rated) and state.slope is not None
        if self.has_slope:
            given = np.asarray(state.rates, dtype=float)
            self.r0[:m] = given
            given = np.asarray(state.slope, dtype=float)
            self.slope[:n] = given
        if cm.is_adaptive:  # the proposal the state kept, else h (after an event)
            h_next = getattr(state, "h_next", None)
            (<AdaptiveStepper>cm.stepper).propose(method.h if h_next is None else h_next)
        return 0


def attempt(method, CompiledMode cm, state, double t_end, log):
    """Take Relaxation's attempts from `state` (see the module docstring); return
    the Step."""
    cdef _Walk w = cm.work.get(_Walk)
    if w is None or w.busy:  # busy: a reset that runs another simulation
        w = _Walk(cm)
        cm.work.setdefault(_Walk, w)
    w.busy = True
    try:
        if isinstance(state, Waiting):
            return _wait(method, cm, state, t_end, log)
        w.start(method, log, t_end, state)
        many = cm.has_rhs and not getattr(cm.mode.flow, "calls_each_step", False)
        while True:
            step = _attempt(w)
            if step is not None or not many:
                break
            if reached(w.t, t_end, w.h) or w.n_steps >= min(w.max_steps, BLOCK_SIZE):
                break
        if step is None:
            step = _at_point(w)
    finally:
        log.n_steps += w.n_steps
        log.n_rejected += w.n_rejected
        if cm.is_adaptive:
            log.n_rejected += (<AdaptiveStepper>cm.stepper).take_rejected()
        w.n_steps, w.n_rejected = 0, 0
        w.method = w.log = None
        w.busy = False
        cm.flush(log)
    return step


cdef object _at_point(_Walk w):
    """The Step to the walk's point, with its rates and slope for the next step
    (and the adaptive stepper's proposal)."""
    cdef Py_ssize_t n = w.cm.n, m = w.cm.m
    x = new_array(&w.x[0], n)
    if not w.has_slope:
        return Step(State(w.t, x, w.cm.name))
    slope = new_array(&w.slope[0], n)
    if w.cm.is_adaptive:
        h_next = (<AdaptiveStepper>w.cm.stepper).h_next
        return Step(Rated(w.t, x, w.cm.name, list(w.r0[:m]), slope, h_next))
    return Step(Rated(w.t, x, w.cm.name, list(w.r0[:m]), slope))


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
    cdef double[::1] swap
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
            if w.errors is not None:  # made with s1 before `dip` steps again
                w.has_err = cm.stepper.estimate(hs, &w.s1[0], &w.err[0])
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
    swap = w.x; w.x = w.y; w.y = swap
    swap = w.g0; w.g0 = w.g1; w.g1 = swap
    if has_r1:
        swap = w.r0; w.r0 = w.r1; w.r1 = swap
        swap = w.slope; w.slope = w.s1; w.s1 = swap
    w.has_slope = has_r1
    w.t = t1
    if has_r1 and w.has_err:
        w.errors.add(t1, hs, &w.x[0], &w.err[0])
    w.has_err = False
    cm.keep(t1, &w.x[0], w.log)
    return None if k == 0 else _at_point(w)


cdef object _strip(_Walk w, int i, double t, double hs, double t1):
    """The trial of hs from (t, x) ended at (t1, y) on the strip of edge i
    (order[:n_beyond], the deepest first): the point is recorded at t1, waits
    eps - tau on the strip (Steps 13-14), and at t1 + eps - tau the edge's reset
    acts on q, where the step entered the guard (Step 15, R^eps(q, eps) = R(q)),
    or on y itself for a guard with reset_at='beyond' (an FMU's event mode
    tests its own condition)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, j
    cdef double[::1] q_values
    cdef double t_reset
    w.has_err = False
    if w.errors is not None:  # the wait displaces the state by eps |dx/dt|
        for j in range(n):
            w.z[j] = (w.y[j] - w.x[j]) / hs
        w.errors.add_strip(t1, w.eps, &w.z[0])
    y = new_array(&w.y[0], n)
    if cm.has_rhs:
        cm.keep(t1, &w.y[0], w.log)
    else:  # a Co-Simulation flow's outputs are read now, before the projection
        cm.flush(w.log)
        w.log.sample(t1, y, cm.name)
    edges = cm.mode.edges
    edge = edges[i]
    if getattr(edge.guard, "reset_at", "surface") == "beyond":
        q = y
    else:
        q = _guard_point(w, t, i, w.g0[i], w.g1[i], hs)
    t_reset = t1 + w.eps - w.taus[0]  # Fig. 12, Step 13
    others = tuple(edges[w.order[j]].name for j in range(1, w.n_beyond))
    if t_reset > w.t_end:  # the wait goes on past this attempt (Step 14)
        cm.flush(w.log)
        if t1 < w.t_end:
            w.log.sample(w.t_end, q, cm.name)
        return Step(Waiting(w.t_end, q, cm.name, t_reset, i, others))
    if others or not fires_in_place(cm, i):
        return Step(fire(w.method, cm, w.log, t_reset, q, i, others))
    # a self-loop fired without Python: a silent one (a strip wait at rest)
    # leaves the walk at (t_reset, q), from where it goes on
    q_values = q
    w.x[:n] = q_values[:n]
    code = fire_in_place(w.method, cm, w.log, t_reset, &w.x[0], i)
    if code == FIRED or _bound_hit(w):
        return Step(State(t_reset, new_array(&w.x[0], n), cm.name))
    w.t = t_reset
    cm.evaluate(w.t, &w.x[0], &w.g0[0])
    w.has_slope = False
    return None


def _wait(method, CompiledMode cm, state, double t_end, log):
    """Go on with a strip's wait from `state`: held at its point until t_end,
    or its edge fires at t_reset (Fig. 12, Steps 13-15)."""
    if state.t_reset > t_end:
        log.sample(t_end, state.x, cm.name)
        return Step(Waiting(t_end, state.x, cm.name, state.t_reset, state.edge,
                            state.others))
    return Step(fire(method, cm, log, state.t_reset, state.x, state.edge, state.others))


cdef bint _bound_hit(_Walk w) except -1:
    """True once the run's transitions, silent ones included, reach max_events
    (the Python loop then stops with MAX_EVENTS)."""
    log = w.log
    return len(log.events) + log.n_silent_events >= w.method.max_events


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


cdef object _guard_point(_Walk w, double t, Py_ssize_t i, double g_start,
                         double g_strip, double s):
    """Return q: where the step's curve A^sigma(t, x), sigma in [0, s], first
    meets guard i (g_start its value at t, g_strip at the strip point).

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
    cdef long k
    if _depth(side, g_start, g_start) >= 0.0:
        return new_array(&w.x[0], n)  # a reset left the state beyond this guard
    w.q[:n] = w.x[:n]
    if fabs(g_start) <= w.gtol:
        # on the surface (a reset left it there): the curve may rise inside
        # first and come back (a hop shorter than the step)
        if not _inside_point(w, t, i, s, &lo, &g_q):
            return new_array(&w.x[0], n)  # it leaves at once: enters the strip here
    sign = bracket_sign(side, g_start, g_strip)  # +1 falling, -1 rising, g_start's
    bracket = illinois_start(lo, sign * g_q, s, sign * g_strip, 0.0)  # no width
    for k in range(PROJECT_MAX_ITER):
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
            w.q[:n] = w.z[:n]
    return new_array(&w.q[0], n)


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
    cdef long k
    if side != 0.0 and cm.has_rhs:
        cm.rates(t, &w.x[0], &w.g0[0], &w.s1[0], &w.r1[0])
        if not side * w.r1[i] > 0.0:
            return False
    for k in range(w.max_halvings):
        if probe >= s:
            break
        cm.stepper.advance(t, &w.x[0], probe, NULL, &w.z[0])
        cm.evaluate(t + probe, &w.z[0], &w.gz[0])
        value = w.gz[i]
        if isfinite(value) and _depth(side, 0.0, value) < 0.0 and fabs(value) > w.gtol:
            sigma[0], g[0] = probe, value
            w.q[:n] = w.z[:n]
            return True
        probe *= 2
    return False
