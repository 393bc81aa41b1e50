"""Halving's steps, compiled (`halving.Halving` describes them). Under a
tolerance the first trial of a step is the stepper's adaptive step, the
halvings and Illinois trials (`core.events`) read its dense output.
"""

from libc.math cimport INFINITY, fabs, NAN, nextafter
from libc.string cimport memcpy

import numpy as np

from ..core._functions cimport new_array
from ..core.events cimport (
    Illinois, all_finite, bracket_sign, crossed as guard_crossed, illinois_done,
    illinois_narrow, illinois_propose, illinois_start, is_bracket, lowest, same,
    secant_fraction,
)
from ..flows._stepper cimport Stepper
from ._firing cimport fire
from ._guard_history cimport GuardHistory
from ._mode cimport CompiledMode, reached
from ._walk cimport Walk

from ..core.errors import ReplayRefused
from ..core.records import ON_SURFACE, TIME_RTOL, Status, Step, non_finite

cdef double _ON_SURFACE = ON_SURFACE, _TIME_RTOL = TIME_RTOL

# A crossing's bracket is no narrower than RESOLUTION_ULPS units in the last place
# of t: the fewest that leave the secant inside the bracket room to place the event.
RESOLUTION_ULPS = 4.0

# A crossing bracketed by a trial of 2 hs from a state on the guard's surface,
# whose halves do not cross it, with hs <= ROUND_OFF_BRACKET t_tol: the guard's
# values there are its round-off; three more halvings would only chase it.
ROUND_OFF_BRACKET = 8.0

_NON_FINITE = -1  # `_crossed`: a trial with non-finite states or guards
# A forward-only flow's step stops short of the predicted crossing by twice the
# gap between the quadratic's and the line's crossing times (an estimate of the
# prediction's error), at least t_tol / 2 and at most LONGEST_SHORTFALL of the
# way (each step closes in by a quarter at least).
LONGEST_SHORTFALL = 0.75
# The first step from a point without a past (the start, an event) is this part
# of h: it gives the line its second point before a guard can be near.
PROBE = 1.0 / 16.0


cdef class _Walk(Walk):
    """Halving's walk: Illinois' ends, the bracket and a forward flow's past."""

    cdef double t_tol, t_tol_asked  # the bracket, and the method's t_tol
    cdef bint illinois, approach  # `Halving.locate`
    # a flow stepped forward only: its guards' past, and the state at the newest
    cdef bint forward
    cdef GuardHistory past
    cdef object past_x
    cdef double[::1] x_lo, g_lo, g_hi, signs

    def __init__(self, CompiledMode cm):
        Walk.__init__(self, cm)
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.x_lo = np.empty(n)
        self.g_lo, self.g_hi, self.signs = (np.empty(m) for _ in range(3))
        self.past, self.past_x = GuardHistory(cm.m), None

    cdef int read_settings(self, method) except -1:
        Walk.read_settings(self, method)
        self.t_tol_asked = method.t_tol
        self.illinois = method.locate == "illinois"
        self.approach = method.locate == "approach"
        return 0

    cdef int start(self, method, log, double t_end, double t0, state) except -1:
        cdef CompiledMode cm = self.cm
        cdef GuardHistory past = self.past
        Walk.start(self, method, log, t_end, t0, state)
        if cm.is_adaptive or not cm.has_rhs:
            self.errors = None  # errors of a vector field's fixed steps only
        self.forward = not cm.has_rhs and (
            self.approach or getattr(cm.mode.flow, "forward_only", False))
        if not self.forward:
            return 0
        x = new_array(&self.x[0], cm.n).tobytes()
        # the past is kept where the walk goes on from its newest point
        if not (past.n and past.ts[past.n - 1] == self.t and self.past_x == x):
            past.clear()
            past.push(self.t, &self.g0[0])
            self.past_x = x
        return 0

    cdef object step(self):
        return _step(self)


cdef double _grid_step(_Walk w, double t):
    """The step from t: to the next communication point t0 + (k + 1) h, or h."""
    cdef double k
    if w.cm.has_rhs:
        return w.span
    k = round((t - w.t0) / w.h)
    if abs(w.t0 + k * w.h - t) > _TIME_RTOL * w.h:
        return w.h
    return w.t0 + (k + 1) * w.h - t


cdef double _step_end(_Walk w, double t, double hs):
    """Where a step of hs from t ends: t_end, a communication point, or t + hs."""
    cdef double t1 = t + hs, grid
    if reached(t1, w.t_end, w.h):
        return w.t_end
    if w.cm.has_rhs:
        return t1
    grid = w.t0 + round((t1 - w.t0) / w.h) * w.h
    return grid if abs(grid - t1) <= _TIME_RTOL * w.h else t1


cdef object _crossed(_Walk w, const double* g0, const double* g1, const double* y):
    """The indices of the guards a trial crossed, or _NON_FINITE."""
    cdef Py_ssize_t i
    if not (all_finite(y, w.cm.n) and all_finite(g1, w.cm.m)):
        return _NON_FINITE
    return [i for i in range(w.cm.m) if guard_crossed(w.cm.sides[i], g0[i], g1[i])]


cdef object _step(_Walk w):
    """One step of h, halved into a crossing; None, or the Step ending the call."""
    cdef CompiledMode cm = w.cm
    cdef Stepper stepper = cm.stepper
    cdef Py_ssize_t n = cm.n, m = cm.m
    cdef double t = w.t, hs = min(_grid_step(w, w.t), w.t_end - w.t)
    cdef long n_halvings = 0, k
    # the bracket: t_tol, or RESOLUTION_ULPS of t where t resolves no finer
    w.t_tol = max(w.t_tol_asked,
                  RESOLUTION_ULPS * (nextafter(fabs(t), INFINITY) - fabs(t)))
    cdef bint after_half_step = False, has_r1
    cdef object crossed, crossing = None
    cdef double dip_hs, t1
    cdef set was_crossed = set()
    if w.forward:
        return _forward_step(w, hs)
    for k in range(2 * w.max_halvings + 2):
        if k == 0:  # the step: of hs, or the adaptive step's own length
            hs = stepper.step(t, &w.x[0], hs, &w.slope[0] if w.has_slope else NULL,
                              &w.y[0])
        else:
            stepper.advance(t, &w.x[0], hs, &w.slope[0] if w.has_slope else NULL,
                            &w.y[0])
        # the guards where the step is accepted (`_step_end`): a time-dependent
        # indicator may change sign in the round-off
        t1 = _step_end(w, t, hs)
        cm.evaluate(t1, &w.y[0], &w.g1[0])
        crossed = _crossed(w, &w.g0[0], &w.g1[0], &w.y[0])
        if n_halvings == 0 and cm.has_rhs and not crossed:
            cm.rates(t1, &w.y[0], &w.g1[0], &w.s1[0], &w.r1[0])
            w.estimate(hs)
            if not cm.may_dip(&w.g0[0], &w.r0[0], w.has_slope, &w.g1[0], &w.r1[0]):
                _accept(w, t, hs, True)
                return None
        if not crossed and n_halvings and not after_half_step:
            if not cm.has_rhs and n > 0 and same(&w.x[0], &w.y[0], n):
                # the flow does not advance on steps that short
                return Step(_fire_unresolved(w, t, crossing))
        if crossed and crossed is not _NON_FINITE:
            crossing = (hs, np.array(w.g1[:m]), crossed)
        has_r1 = False
        if not crossed:
            if cm.has_rhs:
                cm.rates(t1, &w.y[0], &w.g1[0], &w.s1[0], &w.r1[0])
                w.estimate(hs)
                has_r1 = True
                if cm.dip(t, &w.x[0], &w.g0[0], &w.r0[0], &w.slope[0], &w.has_slope,
                          hs, &w.g1[0], &w.r1[0], &dip_hs, &w.z[0], &w.gz[0],
                          w.method, w.log):
                    if _crossed(w, &w.g0[0], &w.gz[0], &w.z[0]):
                        # the crossing lies before the dip's bottom
                        hs = dip_hs
                        w.y[:n] = w.z[:n]
                        w.g1[:m] = w.gz[:m]
                        crossed = _crossed(w, &w.g0[0], &w.g1[0], &w.y[0])
                        has_r1 = False
        if not crossed:
            stuck = _stuck(was_crossed, &w.g0[0], &w.g1[0])
            if stuck is not None:  # crossed at once from the surface: fire here
                return Step(_fire(w, t, &w.x[0], 0.0, &w.g0[0], &w.g0[0], [stuck], 0.0))
            if after_half_step and hs <= ROUND_OFF_BRACKET * w.t_tol:
                # the state creeps towards the guard slower than its round-off
                near = _stuck(was_crossed, &w.g0[0], &w.g0[0])  # on the surface
                if near is not None:  # bracketed in [t - hs, t + hs]: fire here
                    cm.flush(w.log)
                    return Step(_fire(w, t, &w.x[0], 0.0, &w.g0[0], &w.g0[0], [near]))
            _accept(w, t, hs, has_r1)
            t = w.t
            if n_halvings == 0:
                return None
            if after_half_step or t == w.t_end:
                return w.at_point()
            after_half_step = True  # the crossing lies in the next hs: close in
            continue
        if crossed is not _NON_FINITE:
            was_crossed.update(crossed)
            if hs <= w.t_tol:
                cm.flush(w.log)
                return Step(_fire(w, t, &w.x[0], hs, &w.g0[0], &w.g1[0], crossed))
            if w.illinois:  # fires with the block kept (`fire`)
                located = _illinois(w, t, hs)
                if located is not None:
                    return located
        if n_halvings == w.max_halvings:
            break
        if crossed is _NON_FINITE and hs <= w.t_tol:
            near = _nearest_guard(&w.g0[0], m)
            if near is None:
                raise non_finite(cm.mode, t + hs, np.array(w.y[:n]), list(w.g1[:m]))
            # the flow is undefined just beyond this guard: it fires here
            cm.flush(w.log)
            return Step(_fire(w, t, &w.x[0], 0.0, &w.g0[0], &w.g0[0], [near]))
        n_halvings, after_half_step = n_halvings + 1, False
        w.log.n_rejected += 1
        hs /= 2
    return w.stopped(Status.NO_PROGRESS,
                     f"No step from t = {t!r} in mode {cm.name!r} after {n_halvings} "
                     f"halvings (max_halvings); guards {_named(cm, w.g0)}.")


cdef int _accept(_Walk w, double t, double hs, bint has_r1) except -1:
    """Count the step and move the walk to the trial's end (`_step_end`)."""
    w.n_steps += 1
    w.accept(_step_end(w, t, hs), hs, has_r1)
    return 0


cdef object _stuck(set was_crossed, const double* g0, const double* g1):
    """A crossed guard this trial leaves unchanged on its surface: at rest on it."""
    for i in sorted(was_crossed):
        if g1[i] == g0[i] and abs(g0[i]) <= _ON_SURFACE:
            return i
    return None


cdef object _nearest_guard(const double* g0, Py_ssize_t m):
    """The guard within ON_SURFACE of its surface, the closest, if any."""
    cdef Py_ssize_t i
    near = [(abs(g0[i]), i) for i in range(m) if abs(g0[i]) <= _ON_SURFACE]
    return min(near)[1] if near else None


cdef dict _named(CompiledMode cm, g):
    return {edge.guard.name: float(g[i]) for i, edge in enumerate(cm.mode.edges)}


cdef object _fire(_Walk w, double t, const double* x, double hs, const double* g0,
                  const double* g1, list crossed, double still=NAN):
    """Fire the first declared of the crossings within t_tol of the earliest by
    the secant in [t, t + hs]; `still`: the approach for hs = 0 (NAN unknown)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t i, winner = -1
    cdef double first, t_i, t_event = t
    edges = cm.mode.edges
    times = [t + hs * secant_fraction(g0[i], g1[i]) for i in crossed]
    first = min(times)
    others = []
    for i, t_i in zip(crossed, times):
        if t_i - first <= w.t_tol:
            if winner < 0:
                winner, t_event = i, t_i
            else:
                others.append(edges[i].name)
    if w.beyond[winner]:
        t_event = _step_end(w, t, hs) if hs > 0.0 else t
    x_event = new_array(x, cm.n) if t_event == t else _advanced(cm, t, x, t_event - t)
    step_rate = (g1[winner] - g0[winner]) / hs if hs > 0.0 else still
    return fire(w.firing, cm, w.log, t_event, x_event, winner, tuple(others), True,
                step_rate)


cdef object _advanced(CompiledMode cm, double t, const double* x, double h):
    """x(t + h) from x, a fresh step (no known slope)."""
    y = np.empty(cm.n)
    cdef double[::1] ys = y
    if cm.n:
        cm.stepper.advance(t, x, h, NULL, &ys[0])
    return y


cdef object _fire_unresolved(_Walk w, double t, crossing):
    """Fire at t + hs, with a warning, a crossing the flow cannot narrow."""
    cdef CompiledMode cm = w.cm
    hs, g1, crossed = crossing
    g0 = w.g0
    y = _advanced(cm, t, &w.x[0], hs)  # the FMU back at the end of the crossing
    i = min(crossed, key=lambda k: g0[k] / (g0[k] - g1[k]))
    edge = cm.mode.edges[i]
    source = cm.mode.flow.describe().get("fmu", type(cm.mode.flow).__name__)
    w.log.warn(
        f"{source}: guard {edge.name!r} was crossed between t = {t:.9g} s and "
        f"{t + hs:.9g} s, but a step of {hs / 2:.3g} s from t left the state "
        f"unchanged (the flow does not advance on steps that short), so the "
        f"crossing is located only to {hs:.3g} s, not t_tol = {w.t_tol:.3g} "
        f"s: the event is placed at t = {t + hs:.9g} s, where the guard is "
        f"{g1[i]:.3g}."
    )
    others = tuple(cm.mode.edges[k].name for k in crossed if k != i)
    return fire(w.firing, cm, w.log, t + hs, y, i, others, False, (g1[i] - g0[i]) / hs)


cdef object _illinois(_Walk w, double t, double hs):
    """Narrow [t, t + hs] by Illinois on min_i s_i g_i(A^sigma(t, x)) and fire;
    None (halve) without a sign change or where two trials give one state."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, m = cm.m, i
    cdef double* signs = &w.signs[0]
    cdef double* y = &w.z[0]
    cdef double* g = &w.gz[0]
    cdef double sigma, f, f0, f1
    cdef long n_trials = 0, _k
    cdef bint stalls = not cm.has_rhs and n > 0
    cdef Illinois s
    for i in range(m):
        signs[i] = bracket_sign(cm.sides[i], w.g0[i], w.g1[i])
    f0, f1 = lowest(signs, &w.g0[0], m), lowest(signs, &w.g1[0], m)
    if not is_bracket(f0, f1):
        return None
    s = illinois_start(0.0, f0, hs, f1, w.t_tol)
    memcpy(&w.x_lo[0], &w.x[0], n * sizeof(double))
    memcpy(&w.g_lo[0], &w.g0[0], m * sizeof(double))
    memcpy(&w.g_hi[0], &w.g1[0], m * sizeof(double))
    seen = {new_array(&w.x[0], n).tobytes(): 0.0} if stalls else None
    for _k in range(w.max_halvings):
        if illinois_done(&s):
            break
        sigma = illinois_propose(&s)
        cm.stepper.advance(t, &w.x[0], sigma, &w.slope[0] if w.has_slope else NULL, y)
        if stalls and seen.setdefault(new_array(y, n).tobytes(), sigma) != sigma:
            # one state for two steps: halving says what it can
            w.log.n_rejected += n_trials
            return None
        cm.evaluate(t + sigma, y, g)
        n_trials += 1
        f = lowest(signs, g, m) if all_finite(y, n) and all_finite(g, m) else NAN
        if illinois_narrow(&s, sigma, f):
            memcpy(&w.x_lo[0], y, n * sizeof(double))
            memcpy(&w.g_lo[0], g, m * sizeof(double))
        else:
            memcpy(&w.g_hi[0], g, m * sizeof(double))
    return _fire_bracket(w, t, s.lo, s.hi, n_trials)


cdef object _fire_bracket(_Walk w, double t, double lo, double hi, long n_trials):
    """Fire the crossing in [t + lo, t + hi]; NO_PROGRESS if wider than t_tol."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t m = cm.m, i, lowest_i = 0
    cdef double* g_lo = &w.g_lo[0]
    cdef double* g_hi = &w.g_hi[0]
    cdef double signed, lowest_signed = INFINITY
    w.log.n_rejected += n_trials
    if hi - lo > w.t_tol:
        stuck = _stuck(set(range(m)), &w.g0[0], g_lo)
        if stuck is not None and lo > 0.0:  # the state rests on that guard
            return Step(_fire(w, t, &w.x[0], 0.0, &w.g0[0], &w.g0[0], [stuck], 0.0))
        return w.stopped(
            Status.NO_PROGRESS,
            f"The crossing after t = {t!r} in mode {cm.name!r} is still "
            f"bracketed to {hi - lo:.3g} s after {n_trials} trials "
            f"(max_halvings); guards {_named(cm, new_array(g_lo, m))}.")
    if not all_finite(g_hi, m):  # the guard on its surface at lo fires
        near = _nearest_guard(g_lo, m)
        if near is None:
            y = _advanced(cm, t, &w.x[0], hi)
            raise non_finite(cm.mode, t + hi, y, list(cm.guards(t + hi, y)))
        return Step(_fire(w, t + lo, &w.x_lo[0], 0.0, g_lo, g_lo, [near]))
    # no sign change: the guard beyond at the far end (and by round-off at lo)
    crossed = [i for i in range(m) if guard_crossed(cm.sides[i], g_lo[i], g_hi[i])]
    if not crossed:
        for i in range(m):
            signed = bracket_sign(cm.sides[i], g_lo[i], g_hi[i]) * g_hi[i]
            if signed < lowest_signed:
                lowest_signed, lowest_i = signed, i
        crossed = [lowest_i]
    return Step(_fire(w, t + lo, &w.x_lo[0], hi - lo, g_lo, g_hi, crossed))


cdef double _shortfall_step(_Walk w, double hs):
    """hs, short of the earliest crossing the guards' past predicts (eq. 12)."""
    cdef GuardHistory past = w.past
    cdef Py_ssize_t m = w.cm.m, i, n = past.n
    cdef double ahead = INFINITY, spread = 0.0, sign, c, quad, gap
    cdef bint has_beyond = past.beyond_t == past.beyond_t
    if m == 0:
        return hs
    for i in range(m):
        sign = bracket_sign(w.cm.sides[i], w.g0[i], w.g0[i])
        c = sign * w.g0[i]
        if w.cm.sides[i] != 0.0 and c <= 0.0 and (
                n < 2 or sign * past.gs[n - 2, i] >= c):
            return min(hs, w.t_tol)
    if n < 2 and not has_beyond:  # one point: a probe gives the second
        return min(hs, max(PROBE * hs, w.t_tol))
    for i in range(m):
        sign = bracket_sign(w.cm.sides[i], w.g0[i], w.g0[i])
        if sign * w.g0[i] <= 0.0:
            continue
        quad = past.first_crossing(i, sign, &gap)
        if quad < ahead:
            ahead, spread = quad, gap
    if ahead == INFINITY:
        return hs if not has_beyond else min(hs, 0.5 * (past.beyond_t - w.t))
    if ahead <= w.t_tol:
        return min(hs, w.t_tol)
    return min(
        hs, ahead - min(max(2.0 * spread, 0.5 * w.t_tol), LONGEST_SHORTFALL * ahead)
    )


cdef object _forward_step(_Walk w, double hs):
    """One step of a forward-only flow: a crossing longer than t_tol is replayed
    and its far end kept as the point beyond; the event is the far end of t_tol."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t n = cm.n, m = cm.m
    cdef double t = w.t, trial
    cdef long _k
    for _k in range(w.max_halvings + 1):
        trial = _shortfall_step(w, hs)
        try:
            cm.stepper.advance(t, &w.x[0], trial, NULL, &w.y[0])
        except ReplayRefused as exc:
            return _overstepped(w, t, exc)
        cm.evaluate(t + trial, &w.y[0], &w.g1[0])
        crossed = _crossed(w, &w.g0[0], &w.g1[0], &w.y[0])
        if crossed is _NON_FINITE:
            raise non_finite(cm.mode, t + trial, np.array(w.y[:n]), list(w.g1[:m]))
        if not crossed:
            _accept(w, t, trial, False)
            w.past.push(w.t, &w.g0[0])  # forgets a point beyond that it passed
            w.past_x = new_array(&w.x[0], n).tobytes()
            return None
        if trial <= w.t_tol:  # bracketed to t_tol: the event at its far end
            cm.flush(w.log)
            times = [secant_fraction(w.g0[i], w.g1[i]) for i in crossed]
            winner = crossed[times.index(min(times))]
            others = tuple(cm.mode.edges[i].name for i in crossed if i != winner)
            return Step(fire(w.firing, cm, w.log, t + trial, np.array(w.y[:n]),
                             winner, others, False,
                             (w.g1[winner] - w.g0[winner]) / trial))
        w.log.n_rejected += 1
        w.past.set_beyond(t + trial, &w.g1[0])
        w.past_x = new_array(&w.x[0], n).tobytes()
    return w.stopped(Status.NO_PROGRESS,
                     f"No step from t = {t!r} in mode {cm.name!r} reached the "
                     f"crossing after {w.max_halvings} replays (max_halvings); "
                     f"guards {_named(cm, w.g0)}.")


cdef object _overstepped(_Walk w, double t, exc):
    """Stop where a step went beyond a guard that the FMU cannot return from."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t m = cm.m, i
    cdef double[::1] g = w.past.beyond_g
    cdef double t_beyond = w.past.beyond_t
    beyond = [i for i in range(m) if guard_crossed(cm.sides[i], w.g0[i], g[i])]
    i = beyond[0] if beyond else 0
    located = t + (t_beyond - t) * secant_fraction(w.g0[i], g[i])
    return w.stopped(
        Status.OVERSTEPPED,
        f"{exc} The step from t = {t!r} to {t_beyond!r} crossed guard "
        f"{cm.mode.edges[i].name!r} (g = {w.g0[i]:.6g} -> {g[i]:.6g}; by "
        f"its secant at t = {located:.9g} s, {t_beyond - located:.3g} s before "
        f"the step's end), but t_tol = {w.t_tol:.3g} s.")
