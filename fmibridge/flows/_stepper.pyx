"""A flow's steps as every compiled loop takes them (`Stepper`): fixed, or adaptive.

An `AdaptiveStepper` (rtol, atol; `EmbeddedStepper`: Dormand-Prince 5(4), or
an implicit one) takes in `step` one accepted step no longer than h_max from
the proposal `h_next`, counts rejected trials in `n_rejected`, and records it
(`anchor`); a step that cannot meet the tolerance above the resolution of
time raises FmibridgeError. `dense(t, out)` is its continuous extension;
`advance` reads it where (t, x) lies on the last step's curve, else
integrates under the tolerance, so event location on trials of `advance`
locates on the dense output unchanged. A method keeps `h_next` in the state
it returns, so a run does not depend on the stepper's history.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4 (automatic step size
control, eqs. 4.10-4.13) and II.6 (dense output).
"""

from libc.math cimport INFINITY, fabs, isfinite, sqrt
from libc.string cimport memcmp, memcpy

import numpy as np

from ..core._functions cimport Function, new_array
from ..core._rk cimport Tableau
from ..core.events cimport all_finite

from ..core.errors import FmibridgeError, StiffnessStop

# Step size control (Hairer, Norsett and Wanner, eq. 4.13): a new step is the
# old times SAFETY err^(-1/q), at most FAC_MAX and at least FAC_MIN times it
# (their values for DOPRI5), and not longer after a rejected trial.
SAFETY = 0.9
FAC_MAX = 5.0
FAC_MIN = 0.2
# Bound on rejected trials of one step: 0.2^64 spans any ratio of float steps.
MAX_REJECTIONS = 64
# Bound on the steps `advance` takes when it integrates off the last step's curve.
MAX_STEPS_OFF_CURVE = 100_000
# A trial ending this fraction of its step beyond the step's end still reads
# the dense output (the round-off of t + h summed from the step's start).
END_RTOL = 1e-9
# Stiffness detection (Hairer and Wanner, Solving ODEs II, Sec. IV.2, their
# DOPRI5's values): an accepted step is held by stability where its estimate of
# h |lam| exceeds STIFF_FRACTION of the scheme's stability boundary (3.25 of
# DOPRI5's 3.31); STIFF_STEPS such steps, with fewer than NONSTIFF_STEPS others
# in a row among them, make the flow stiff.
STIFF_FRACTION = 0.98
STIFF_STEPS = 15
NONSTIFF_STEPS = 6
# A stiff flow stops where the span left needs more steps than this: above the
# 1e6 / 3.3 = 3e5 of a model the front door's probe leaves to Dormand-Prince
# (`simulation.STIFF_SPAN`), so only one that stiffens on the way stops.
STIFF_STEPS_LEFT = 400_000


cdef int copy_out(object values, double* out, Py_ssize_t n) except -1:
    """Write the n floats of `values` to out; raise where it has another number."""
    cdef double[::1] y = np.ascontiguousarray(values, dtype=float).reshape(-1)
    if y.shape[0] != n:
        raise FmibridgeError(
            f"A step returned {y.shape[0]} state value(s); the mode has {n}."
        )
    if n:
        memcpy(out, &y[0], n * sizeof(double))
    return 0


cdef class Stepper:
    """Advance a flow's state (see the module docstring); `rhs` is dx/dt or None."""

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        """Write x(t + h) to out, for trials inside a step (k1: dx/dt at t, or NULL)."""
        raise NotImplementedError(type(self).__name__)

    cdef double step(self, double t, const double* x, double h, const double* k1,
                     double* out) except? -1.0:
        """The next step from (t, x), h at most: a fixed stepper takes h."""
        self.advance(t, x, h, k1, out)
        return h

    cdef bint estimate(self, double h, const double* f1, double* err) except -1:
        """Write the last `advance`'s local error (f1 = f(t + h, x1)); False: none."""
        return False

    cdef int slope(self, double t, const double* x, double* out) except -1:
        """Write dx/dt at (t, x) to out (the flow must have `rhs`)."""
        return self.rhs.call(t, x, out)


cdef class FieldStepper(Stepper):
    """One step of a Runge-Kutta tableau on the flow's right-hand side."""
    cdef Tableau tableau
    cdef double[::1] work

    def __init__(self, Function rhs, Tableau tableau):
        self.n, self.rhs, self.tableau = rhs.n_in, rhs, tableau
        self.work = np.empty(max(tableau.work_size(rhs.n_in), 1))

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        return self.tableau.step(self.rhs, t, x, h, k1, out, &self.work[0])

    cdef bint estimate(self, double h, const double* f1, double* err) except -1:
        """The embedded estimate of the last `advance`, f1 = f(t + h, x1)."""
        if self.tableau.error_order == 0 or self.n == 0:
            return False
        self.tableau.estimate(self.n, h, &self.work[0], f1, err)
        return True


cdef class FlowStepper(Stepper):
    """The flow's own `advance(t, x, h, scheme)`, called in Python."""
    cdef object flow, scheme

    def __init__(self, flow, scheme, Py_ssize_t n):
        self.n, self.rhs, self.flow, self.scheme = n, None, flow, scheme

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        return copy_out(
            self.flow.advance(t, new_array(x, self.n), h, self.scheme), out, self.n)


cdef class AdaptiveStepper(Stepper):
    """Steps chosen under a tolerance, with dense output (module docstring)."""

    def __init__(self, Function rhs, Py_ssize_t n, double rtol, double atol):
        self.n, self.rhs, self.rtol, self.atol = n, rhs, rtol, atol
        self.h_next, self.t_end = INFINITY, -INFINITY
        self.x0, self.x1 = np.empty(max(n, 1)), np.empty(max(n, 1))
        self.probe, self.point = np.empty(max(n, 1)), np.empty(max(n, 1))

    cdef int dense(self, double t, double* out) except -1:
        raise NotImplementedError(type(self).__name__)

    cdef int anchor(self, double t, const double* x, double h,
                    const double* x1) except -1:
        """Record the accepted step from (t, x) of h to x1 (for `advance`)."""
        self.t0, self.h_step, self.has_step = t, h, True
        if self.n:
            memcpy(&self.x0[0], x, self.n * sizeof(double))
            memcpy(&self.x1[0], x1, self.n * sizeof(double))
        return 0

    cdef bint on_curve(self, double t, const double* x) except -1:
        """True if (t, x) is the last step's start, end, or dense value at t."""
        cdef size_t size = self.n * sizeof(double)
        if not self.has_step or self.n == 0:
            return self.has_step
        if t == self.t0:
            return memcmp(x, &self.x0[0], size) == 0
        if t == self.t0 + self.h_step and memcmp(x, &self.x1[0], size) == 0:
            return True
        if not self.t0 < t <= self.t0 + self.h_step:
            return False
        self.dense(t, &self.probe[0])
        return memcmp(x, &self.probe[0], size) == 0

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        """x(t + h): the dense output on the last step's curve, else new steps."""
        cdef double t_end = t + h, t_step = t, taken
        cdef double end = self.t0 + self.h_step
        cdef long k
        if (self.has_step and t_end <= end + END_RTOL * self.h_step
                and self.on_curve(t, x)):
            if t_end == end and self.n:
                memcpy(out, &self.x1[0], self.n * sizeof(double))
            else:
                self.dense(t_end, out)
            return 0
        if self.n:
            memcpy(&self.point[0], x, self.n * sizeof(double))
        for k in range(MAX_STEPS_OFF_CURVE):
            taken = self.step(t_step, &self.point[0], t_end - t_step,
                              k1 if k == 0 else NULL, out)
            t_step = t_end if taken >= t_end - t_step else t_step + taken
            if t_step >= t_end or not all_finite(out, self.n):
                return 0
            if self.n:
                memcpy(&self.point[0], out, self.n * sizeof(double))
        raise FmibridgeError(
            f"{self.rhs.what}: {MAX_STEPS_OFF_CURVE} steps under rtol = "
            f"{self.rtol:g} did not reach t = {t_end!r} from t = {t!r}."
        )

    def propose(self, double h, double t_end=-INFINITY):
        """Set the next step's proposal and the end of the span (-inf: unknown)."""
        self.h_next, self.t_end = h, t_end

    def take_rejected(self):
        """Return the rejected trials counted so far, and start again from 0."""
        n, self.n_rejected = self.n_rejected, 0
        return n

    def take(self, double t, x, double h_max):
        """`step` from Python: return (its length, its end)."""
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        out = np.empty(self.n)
        cdef double[::1] y = out
        if self.n == 0:
            return h_max, out
        return self.step(t, &xs[0], h_max, NULL, &y[0]), out

    def at(self, double t):
        """`dense` from Python: the last step's dense output at t."""
        out = np.empty(self.n)
        cdef double[::1] y = out
        if self.n:
            self.dense(t, &y[0])
        return out


cdef class EmbeddedStepper(AdaptiveStepper):
    """An explicit embedded pair under rtol and atol (Dormand-Prince 5(4)).

    A trial with scaled RMS error err <= 1 (eq. 4.11; sc_i = atol + rtol
    max(|x_i|, |x1_i|)) is accepted; the next is h min(FAC_MAX, max(FAC_MIN,
    SAFETY err^(-1/q))) (eq. 4.13), not longer after a rejection. A step cut to
    land on h_max keeps its proposal. Where stability, not the tolerance, holds
    the steps and the span left would take more than STIFF_STEPS_LEFT of them,
    the step raises StiffnessStop naming an implicit integrator.
    """
    cdef Tableau tableau
    cdef double[::1] work, err, first
    # accepted steps held by stability, and others in a row (`_watch_stiffness`)
    cdef long n_stiff, n_nonstiff

    def __init__(self, Function rhs, Tableau tableau, double rtol, double atol):
        AdaptiveStepper.__init__(self, rhs, rhs.n_in, rtol, atol)
        self.tableau = tableau
        self.work = np.empty(max(tableau.work_size(rhs.n_in), 1))
        self.err, self.first = np.empty(max(rhs.n_in, 1)), np.empty(max(rhs.n_in, 1))

    def propose(self, double h, double t_end=-INFINITY):
        """`AdaptiveStepper.propose`; each attempt counts stiff steps anew."""
        AdaptiveStepper.propose(self, h, t_end)
        self.n_stiff, self.n_nonstiff = 0, 0

    cdef int _watch_stiffness(self, double t, double h) except -1:
        """Count the step as held by stability or not; raise where stiff."""
        cdef Tableau tab = self.tableau
        cdef Py_ssize_t s = tab.stages, n = self.n
        cdef double bound = STIFF_FRACTION * tab.stability_boundary
        cdef double h_lam = tab.stiffness(n, h, &self.work[0], &self.work[s * n])
        cdef double left = self.t_end - t - h
        if bound <= 0.0 or h_lam <= bound:
            self.n_nonstiff += 1
            if self.n_nonstiff >= NONSTIFF_STEPS:
                self.n_stiff = 0
            return 0
        self.n_stiff, self.n_nonstiff = self.n_stiff + 1, 0
        if self.n_stiff < STIFF_STEPS or left <= STIFF_STEPS_LEFT * h:
            return 0
        raise StiffnessStop(
            f"{self.rhs.what} is stiff at t = {t + h:.6g} s: {self.n_stiff} of "
            f"the last steps were held by the explicit integrator's stability, "
            f"not by rtol = {self.rtol:g} (h |lambda| = {h_lam:.3g}, its bound "
            f"{tab.stability_boundary:.3g}; the fastest time scale 1/|lambda| = "
            f"{h / h_lam:.3g} s), and the {left:.6g} s left would "
            f"take about {left / h:.3g} more steps of {h:.3g} s. Use an implicit "
            f"integrator: integrator='cvode' (--integrator cvode)."
        )

    cdef double _norm(self, const double* x, const double* x1) noexcept:
        """The scaled RMS of the estimate in err (inf if not finite)."""
        cdef Py_ssize_t i
        cdef double total = 0.0, sc, e
        for i in range(self.n):
            sc = self.atol + self.rtol * max(fabs(x[i]), fabs(x1[i]))
            e = self.err[i] / sc
            total = total + e * e
        total = sqrt(total / self.n) if self.n else 0.0
        return total if isfinite(total) else INFINITY

    cdef double step(self, double t, const double* x, double h_max,
                     const double* k1, double* out) except? -1.0:
        cdef Tableau tab = self.tableau
        cdef Py_ssize_t n = self.n, s = tab.stages
        cdef double* slopes = &self.work[0]
        cdef double* f1 = slopes + s * n
        cdef double proposal = self.h_next, h = min(self.h_next, h_max), err = 0.0
        cdef double exponent = -1.0 / tab.error_order, fac
        cdef bint rejected = False
        cdef long _k
        if n == 0:
            self.anchor(t, x, h, out)
            return h
        if k1 == NULL:
            self.rhs.call(t, x, &self.first[0])
        else:
            memcpy(&self.first[0], k1, n * sizeof(double))
        for _k in range(MAX_REJECTIONS):
            tab.step(self.rhs, t, x, h, &self.first[0], out, slopes)
            self.rhs.call(t + h, out, f1)
            tab.estimate(n, h, slopes, f1, &self.err[0])
            err = self._norm(x, out)
            if err <= 1.0:
                break
            self.n_rejected += 1
            rejected = True
            fac = FAC_MIN if err == INFINITY else max(FAC_MIN, SAFETY * err**exponent)
            if t + h * fac == t:
                break
            h = h * fac
        if err > 1.0 and all_finite(out, n):
            raise FmibridgeError(
                f"{self.rhs.what}: no step from t = {t!r} meets rtol = "
                f"{self.rtol:g}, atol = {self.atol:g} (the last trial, of {h:.3g} "
                f"s, has {err:.3g} times the error allowed): dx/dt is not smooth "
                f"there, or the tolerance is below round-off; loosen it or give h."
            )
        if err <= 1.0:
            self._watch_stiffness(t, h)
        fac = (FAC_MAX if err == 0.0
               else min(FAC_MAX, max(FAC_MIN, SAFETY * err**exponent)))
        if rejected:
            fac = min(fac, 1.0)
        self.h_next = h * fac
        if h == h_max and h < proposal and not rejected:
            self.h_next = max(self.h_next, proposal)
        self.anchor(t, x, h, out)
        return h

    cdef int dense(self, double t, double* out) except -1:
        cdef double theta = (t - self.t0) / self.h_step
        self.tableau.interpolate(self.n, self.h_step, theta, &self.x0[0],
                                 &self.work[0], out)
        return 0

    cdef int slope(self, double t, const double* x, double* out) except -1:
        """dx/dt; at the last step's end its last stage (first same as last)."""
        cdef Py_ssize_t n = self.n
        if (self.has_step and n and t == self.t0 + self.h_step
                and memcmp(x, &self.x1[0], n * sizeof(double)) == 0):
            memcpy(out, &self.work[self.tableau.stages * n], n * sizeof(double))
            return 0
        return self.rhs.call(t, x, out)


cdef class PythonAdaptiveStepper(AdaptiveStepper):
    """A Python integrator's step(t, x, h_max) -> (h, x1), dense(t), n_rejected."""
    cdef object integrator

    def __init__(self, integrator, Function rhs, double rtol, double atol):
        AdaptiveStepper.__init__(self, rhs, rhs.n_in, rtol, atol)
        self.integrator = integrator

    cdef double step(self, double t, const double* x, double h_max,
                     const double* k1, double* out) except? -1.0:
        self.integrator.h_next = self.h_next
        h, x1 = self.integrator.step(t, new_array(x, self.n), h_max)
        copy_out(x1, out, self.n)
        self.n_rejected += self.integrator.n_rejected
        self.integrator.n_rejected = 0
        self.h_next = self.integrator.h_next
        self.anchor(t, x, h, out)
        return h

    cdef int dense(self, double t, double* out) except -1:
        return copy_out(self.integrator.dense(t), out, self.n)
