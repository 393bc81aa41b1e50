"""A method's steps under the stiff integrator: CVODE's accepted steps between
events, guard crossings located on each step's dense output.

`attempt` takes the steps of one `Method._attempt` of a method whose integrator
is CVODE (`flows.stiff.Stiff`): accepted variable steps, each as long as the
tolerances allow and never beyond t_end, until a guard is crossed inside one.
Every step is watched for a crossing twice: a guard beyond its surface at the
step's end (`events.crossed`), and a guard inside at both ends whose cubic
Hermite interpolant (the guard's values and rates at the ends) dips beyond
between them (`events.dips`, the test Halving's steps use), tested at the
interpolant's minimum on the integrator's dense output. A crossing is narrowed
on the dense output by Illinois regula falsi on G = min_i s_i g_i (the shared
state machine in `core.events`) until its bracket is below t_tol, placed by the
secant of g across it, and fired (`_firing.fire`) as every method fires: the
earliest crossing, and of those within t_tol of it the edge declared first.

No step is undone: the dense output is CVODE's own interpolating polynomial over
the accepted step (CVodeGetDky), accurate to the step's tolerance, so locating a
crossing costs guard evaluations only. After an event (or anything else that
moved the state between attempts: a time event of the flow) the integrator
restarts from the new state; it continues its history only from its own point
(`CvodeStepper.step`).

A step CVODE cannot take (its error test or Newton iteration fails at the
smallest step, the right-hand side is repeatedly not finite) raises
FmibridgeError naming the right-hand side, the time and CVODE's reason
(`_cvode.CvodeStepper.step`); the CLI and supervised runs keep the samples up to
there (Status.FAILED).

References
----------
Hairer and Wanner, Solving ODEs II, Sec. III.1 and V.5 (BDF); the CVODE User
Guide, SUNDIALS 7 (CV_ONE_STEP, CVodeGetDky); Hairer, Norsett and Wanner,
Solving ODEs I, Sec. II.6 (dense output); Dowell and Jarratt, BIT 11 (1971)
(the Illinois method).
"""

from libc.math cimport NAN, fabs, nextafter, INFINITY

import numpy as np

from ..core.events cimport (
    Illinois, all_finite, bracket_sign, crossed as guard_crossed, dip_sign, dips,
    hermite_minimum, illinois_done, illinois_narrow, illinois_propose,
    illinois_start, is_bracket, lowest, secant_fraction,
)
from ..flows._cvode cimport Cvode, CvodeStepper
from ._firing cimport fire
from ._mode cimport CompiledMode

from ..core.result import Status

# A guard's rate comes from a forward difference along dx/dt over RATE_STEP times
# the step: about the square root of the float64 epsilon, which balances the
# difference's truncation against round-off (as `_mode.RATE_STEP`).
RATE_STEP = 2.0**-26
# A crossing's bracket is narrowed to t_tol, or to RESOLUTION_ULPS units in the last
# place of t where t_tol is below them (t = 2e7 s resolves to 3.7e-9 s only): the
# fewest ulps that leave the secant inside the bracket room to place the event.
RESOLUTION_ULPS = 4.0


cdef class _Run:
    """One attempt's point (t, x), its guards g0 and their rates r0, with the
    integrator and scratch."""

    cdef CompiledMode cm
    cdef CvodeStepper stepper
    cdef Cvode cvode
    cdef object method, log
    cdef double t, t_end, t_tol, width
    cdef long max_iter
    cdef double[::1] x, g0, r0, y, g1, r1, z, gz, slope

    def __init__(self, method, CompiledMode cm, CvodeStepper stepper, log,
                 double t_end, double t_tol, long max_iter):
        n, m = max(cm.n, 1), max(cm.m, 1)
        self.cm, self.stepper, self.cvode = cm, stepper, stepper.cvode
        self.method, self.log = method, log
        self.t_end, self.t_tol, self.max_iter = t_end, t_tol, max_iter
        self.x, self.y, self.z, self.slope = (np.empty(n), np.empty(n), np.empty(n),
                                              np.empty(n))
        self.g0, self.r0, self.g1, self.r1, self.gz = (
            np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m))


def attempt(method, CompiledMode cm, CvodeStepper stepper, state, double t_end,
            log, *, double t_tol, long max_iter):
    """Take CVODE's steps from `state` (see the module docstring); return the Step.

    t_tol is the width a crossing's bracket is narrowed to, in at most max_iter
    guard evaluations.
    """
    from .base import State, Step
    cdef _Run w = _Run(method, cm, stepper, log, t_end, t_tol, max_iter)
    cdef Py_ssize_t n = cm.n
    cdef long k, max_steps = method.max_steps - log.n_steps, n_steps = 0
    cdef double h, t1
    w.t = state.t
    w.x = np.array(state.x, dtype=float)
    cm.evaluate(w.t, &w.x[0], &w.g0[0])
    if cm.m:
        stepper.slope(w.t, &w.x[0], &w.slope[0])
        _rates(w, w.t, &w.x[0], &w.g0[0], &w.r0[0])
    try:
        for k in range(max_steps):
            h = stepper.step(w.t, &w.x[0], t_end - w.t, NULL, &w.y[0])
            t1 = t_end if w.t + h >= t_end else w.t + h
            n_steps += 1
            step = _watch(w, t1)
            if step is not None:
                return step
            if w.t >= t_end:
                break
    finally:
        log.n_steps += n_steps
        log.n_rejected += stepper.take_rejected()
        cm.flush(log)
        if stepper.cvode.jacobian_note:
            log.warn_once(("jacobian", cm.name), stepper.cvode.jacobian_note + ".")
    return Step(State(w.t, np.array(w.x[:n]), cm.name))


cdef object _watch(_Run w, double t1):
    """Test the step just taken (to y at t1) for a crossing: fire it, or accept
    the step (None)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t m = cm.m, i
    cdef double u, best_u = 2.0, value, best_value = 0.0
    cdef double hs = t1 - w.t, s
    cm.evaluate(t1, &w.y[0], &w.g1[0])
    if not (all_finite(&w.y[0], cm.n) and all_finite(&w.g1[0], m)):
        from .base import non_finite
        raise non_finite(cm.mode, t1, np.array(w.y[:cm.n]), list(w.g1[:m]))
    for i in range(m):
        if guard_crossed(cm.sides[i], w.g0[i], w.g1[i]):
            return _locate(w, hs, w.g1)
    if m:
        w.cvode.slope(t1, &w.slope[0])  # the dense output's dx/dt at the step's end
        _rates(w, t1, &w.y[0], &w.g1[0], &w.r1[0])
    for i in range(m):  # a guard that dips beyond inside the step and comes back
        s = dip_sign(cm.sides[i], w.g0[i], w.g1[i])
        if s * w.r1[i] > 0.0 and dips(s, w.g0[i], w.r0[i], w.g1[i], w.r1[i]):
            u = hermite_minimum(s, w.g0[i], w.r0[i], w.g1[i], w.r1[i], hs, &value)
            if 0.0 < u < 1.0 and (best_u > 1.0 or value < best_value):
                best_u, best_value = u, value
    if best_u < 1.0:
        w.stepper.dense(w.t + best_u * hs, &w.z[0])
        cm.evaluate(w.t + best_u * hs, &w.z[0], &w.gz[0])
        for i in range(m):
            if guard_crossed(cm.sides[i], w.g0[i], w.gz[i]):
                return _locate(w, best_u * hs, w.gz)
    _accept(w, t1)
    return None


cdef int _accept(_Run w, double t1) except -1:
    """Move the run to the step's end (y, g1, r1) and keep it as a sample."""
    cdef double[::1] swap
    swap = w.x; w.x = w.y; w.y = swap
    swap = w.g0; w.g0 = w.g1; w.g1 = swap
    swap = w.r0; w.r0 = w.r1; w.r1 = swap
    w.t = t1
    w.cm.keep(t1, &w.x[0], w.log)
    return 0


cdef int _rates(_Run w, double t, const double* x, const double* g,
                double* out) except -1:
    """Write the guards' rates dg/dt at (t, x) to out (g their values there): a
    forward difference along dx/dt in `slope`, over RATE_STEP times the last
    step (the method's h before the first)."""
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t i
    cdef double d = RATE_STEP * (w.cvode.t - w.cvode.t_start)
    if not d > 0.0:
        d = RATE_STEP * cm.h
    for i in range(cm.n):
        w.z[i] = x[i] + d * w.slope[i]
    cm.evaluate(t + d, &w.z[0], &w.gz[0])
    for i in range(cm.m):
        out[i] = (w.gz[i] - g[i]) / d
    return 0


cdef object _locate(_Run w, double hs, double[::1] g_end):
    """Narrow the crossing inside [t, t + hs] (guards g_end at its end) on the
    dense output to t_tol, then fire it."""
    from .base import Step
    cdef CompiledMode cm = w.cm
    cdef Py_ssize_t m = cm.m, n = cm.n, i
    cdef double[::1] signs = np.empty(max(m, 1))
    for i in range(m):
        signs[i] = bracket_sign(cm.sides[i], w.g0[i], g_end[i])
    cdef double f0 = lowest(&signs[0], &w.g0[0], m)
    cdef double f1 = lowest(&signs[0], &g_end[0], m)
    g_lo, g_hi = np.array(w.g0[:m]), np.array(g_end[:m])
    cdef double lo = 0.0, hi = hs, sigma, f
    cdef double width = max(w.t_tol, RESOLUTION_ULPS * spacing(fabs(w.t) + hs))
    w.width = width
    cdef Illinois s
    cdef long k, n_trials = 0
    if is_bracket(f0, f1):
        s = illinois_start(0.0, f0, hs, f1, width)
        for k in range(w.max_iter):
            if illinois_done(&s):
                break
            sigma = illinois_propose(&s)
            n_trials += 1
            w.stepper.dense(w.t + sigma, &w.z[0])
            cm.evaluate(w.t + sigma, &w.z[0], &w.gz[0])
            f = lowest(&signs[0], &w.gz[0], m) if all_finite(&w.z[0], n) and all_finite(
                &w.gz[0], m) else NAN
            if illinois_narrow(&s, sigma, f):
                g_lo = np.array(w.gz[:m])
            else:
                g_hi = np.array(w.gz[:m])
        lo, hi = s.lo, s.hi
        w.log.n_rejected += n_trials
    if hi - lo > width:
        return Step(
            _state(w),
            Status.NO_PROGRESS,
            f"The crossing after t = {w.t!r} in mode {cm.name!r} is still "
            f"bracketed to {hi - lo:.3g} s on the dense output after "
            f"{w.max_iter} trials (max_halvings).",
        )
    return Step(_fire(w, lo, hi, g_lo, g_hi))


cdef object _fire(_Run w, double lo, double hi, g_lo, g_hi):
    """Place the crossing in [t + lo, t + hi] by the secant of each crossed guard
    and fire the earliest (the edge declared first among those within the
    bracket's width of it)."""
    cdef CompiledMode cm = w.cm
    edges = cm.mode.edges
    crossed = [i for i in range(cm.m) if guard_crossed(cm.sides[i], g_lo[i], g_hi[i])]
    if not crossed:  # beyond by round-off at lo already (a reset leaves it there)
        signed = [bracket_sign(cm.sides[i], g_lo[i], g_hi[i]) * g_hi[i]
                  for i in range(cm.m)]
        crossed = [signed.index(min(signed))]
    times = [w.t + lo + (hi - lo) * secant_fraction(g_lo[i], g_hi[i]) for i in crossed]
    first = min(times)
    group = [i for i, t_i in zip(crossed, times) if t_i - first <= w.width]
    winner = group[0]
    t_event = times[crossed.index(winner)]
    if edges[winner].guard.reset_at == "beyond":
        t_event = w.t + hi
    x_event = np.empty(cm.n)
    cdef double[::1] xs = x_event
    w.stepper.dense(t_event, &xs[0])
    cm.flush(w.log)
    others = tuple(edges[i].name for i in group[1:])
    return fire(w.method, cm, w.log, t_event, x_event, winner, others)


cdef double spacing(double t) noexcept:
    """The distance from |t| to the next float64 (numpy's spacing)."""
    return nextafter(fabs(t), INFINITY) - fabs(t)


cdef object _state(_Run w):
    from .base import State
    return State(w.t, np.array(w.x[:w.cm.n]), w.cm.name)
