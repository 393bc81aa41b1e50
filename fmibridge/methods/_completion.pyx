"""Completion's constrained phase, compiled: the steps on h = 0 and the lift-off.

`Phase.run` takes the constrained steps of `Completion` from a state on Z until
lam falls through zero (the lift-off, Or and Ames Def. 4), t_end, or a bound:

- a step grows by doubling from h (twice the last accepted one) while step
  doubling agrees within `tol` and lam changes over each half step by less than
  LAM_CHANGE of its smallest value; it is halved otherwise, never below h (only
  to land on t_end). A body at rest reaches t_end in O(log(t_end / h)) steps.
- each step is one step of the scheme on eq. (7), then R* (`ProjectedStepper`).
- a step of h in which lam reaches zero is narrowed by the Illinois regula falsi
  of `core.events` on lam along the step, to t_tol, and the lift-off placed by
  the secant of lam across the final bracket (`events.secant_fraction`).

References
----------
Or and Ames, Sec. V (steps 5 and 6 of the procedure), eqs. (6)-(7); Dowell and
Jarratt, BIT 11 (1971), the Illinois method.
"""

from libc.math cimport fabs, isfinite, isnan
from libc.string cimport memcpy

import numpy as np

from ..core._rk cimport Tableau
from ..core.events cimport (
    Illinois, all_finite, illinois_done, illinois_narrow, illinois_propose,
    illinois_start, secant_fraction,
)
from ._contact cimport ContactFunctions, ProjectedStepper

# A constrained step longer than h is accepted only if lam changes over each half
# by less than this fraction of its smallest sample: lam cannot then dip to zero
# and back between samples unless it varies on a scale far below the step.
cdef double _LAM_CHANGE = 0.5
LAM_CHANGE = _LAM_CHANGE
# Bound on halvings of one constrained step, and on the Illinois trials of a
# lift-off: 2^64 covers any ratio of float steps.
MAX_HALVINGS = 64
# Samples one `Phase.run` keeps at most (then it returns; the next call goes on).
BLOCK = 4096
# Outcomes of `Phase.run`, in `Phase.status`: steps taken (t_end or the step
# bound reached), a lift-off (the last sample), no step accepted after
# MAX_HALVINGS halvings, non-finite values in a step of h.
STEPPED, LIFTED, STUCK, NON_FINITE = 0, 1, 2, 3


cdef bint _steady(double lam0, double lam_mid, double lam1) noexcept:
    """True if lam changes over each half step by < LAM_CHANGE of its minimum."""
    cdef double change = max(fabs(lam_mid - lam0), fabs(lam1 - lam_mid))
    return change < _LAM_CHANGE * min(lam0, lam_mid, lam1)


cdef double _largest_difference(const double* u, const double* v, Py_ssize_t n) noexcept:
    """max_i |u_i - v_i|, nan if any difference is nan."""
    cdef double largest = 0.0, value
    cdef Py_ssize_t i
    for i in range(n):
        value = fabs(u[i] - v[i])
        if isnan(value):
            return value
        if value > largest:
            largest = value
    return largest


cdef class Phase:
    """The constrained phases of one contact and scheme (module docstring).

    After `run`, `ts`, `xs` and `lams` hold its samples (the lift-off last),
    `status` its outcome, `t` and `x` the state it stopped at (the start of the
    failing step for STUCK and NON_FINITE), `last_step` the step the next phase
    step grows from, and `n_rejected` the steps it halved.
    """

    cdef ContactFunctions contact
    cdef ProjectedStepper stepper
    cdef readonly object ts, xs, lams
    cdef double[::1] t_out, lam_out
    cdef double[:, ::1] x_out
    cdef readonly int status
    cdef readonly double t, last_step
    cdef readonly long n_rejected
    cdef double[::1] x_now, slope, x_mid, slope_mid, x_two, slope_two, x_full, z, dz

    def __init__(self, ContactFunctions contact, Tableau tableau):
        cdef Py_ssize_t n = contact.n
        self.contact = contact
        self.stepper = ProjectedStepper(contact, tableau)
        self.ts, self.xs, self.lams = np.empty(BLOCK), np.empty((BLOCK, n)), np.empty(BLOCK)
        self.t_out, self.x_out, self.lam_out = self.ts, self.xs, self.lams
        self.x_now, self.slope = np.empty(n), np.empty(n)
        self.x_mid, self.slope_mid = np.empty(n), np.empty(n)
        self.x_two, self.slope_two = np.empty(n), np.empty(n)
        self.x_full, self.z, self.dz = np.empty(n), np.empty(n), np.empty(n)

    @property
    def x(self):
        """The state the last run stopped at."""
        return np.array(self.x_now)

    def run(self, double t, x, double last_step, double h, double t_end, double tol,
            double t_tol, double reach, long max_steps):
        """Take constrained steps from (t, x) on Z (last_step: the last accepted
        one, 0 for none) until a lift-off, t_end (within `reach`), max_steps or
        BLOCK samples; return the number of samples."""
        cdef ContactFunctions c = self.contact
        cdef ProjectedStepper stepper = self.stepper
        cdef Py_ssize_t n = c.n
        cdef long n_samples = 0, rejected = 0, k
        cdef double lam0, lam_mid, lam1, hs, tc
        cdef bint crossing, stepped
        cdef double[::1] swap
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        memcpy(&self.x_now[0], &xs[0], n * sizeof(double))
        max_steps = min(max_steps, BLOCK)
        lam0 = c.constrained_at(t, &self.x_now[0], &self.slope[0])
        self.status = STEPPED
        while n_samples < max_steps and t < t_end - reach:
            hs = min(max(h, 2.0 * last_step if last_step > 0.0 else h), t_end - t)
            stepped = False
            for k in range(MAX_HALVINGS):
                stepper.advance(t, &self.x_now[0], hs / 2, &self.slope[0], &self.x_mid[0])
                lam_mid = c.constrained_at(t + hs / 2, &self.x_mid[0], &self.slope_mid[0])
                stepper.advance(
                    t + hs / 2, &self.x_mid[0], hs / 2, &self.slope_mid[0], &self.x_two[0]
                )
                lam1 = c.constrained_at(t + hs, &self.x_two[0], &self.slope_two[0])
                crossing = lam_mid <= 0 or lam1 <= 0
                if hs > h and (
                    crossing
                    or not _steady(lam0, lam_mid, lam1)
                    or self._doubling_error(t, hs) > tol
                ):
                    rejected += 1
                    hs = max(hs / 2, min(h, t_end - t))
                    continue
                stepped = True
                if crossing:
                    tc = self._lift_off(t, hs, lam0, t_tol)
                    self._keep(n_samples, t + tc, &self.z[0],
                               c.constrained_at(t + tc, &self.z[0], &self.dz[0]))
                    n_samples += 1
                    t = t + tc
                    memcpy(&self.x_now[0], &self.z[0], n * sizeof(double))
                    self.status = LIFTED
                elif not (all_finite(&self.x_two[0], n) and isfinite(lam1)):
                    self.status = NON_FINITE
                else:
                    last_step = hs
                    t = t_end if t + hs >= t_end - reach else t + hs
                    swap = self.x_now
                    self.x_now = self.x_two
                    self.x_two = swap
                    swap = self.slope
                    self.slope = self.slope_two
                    self.slope_two = swap
                    lam0 = lam1
                    self._keep(n_samples, t, &self.x_now[0], lam1)
                    n_samples += 1
                break
            if not stepped:
                self.status = STUCK
            if self.status != STEPPED:
                break
        self.t, self.last_step, self.n_rejected = t, last_step, rejected
        return n_samples

    cdef double _doubling_error(self, double t, double hs) except? -1:
        """max |x(t + hs) in one step - in two half steps| (x_two)."""
        self.stepper.advance(t, &self.x_now[0], hs, &self.slope[0], &self.x_full[0])
        return _largest_difference(&self.x_full[0], &self.x_two[0], self.contact.n)

    cdef double _lift_off(self, double t, double hs, double lam0, double t_tol) except? -1:
        """Return tc, where lam falls through zero in [t, t + hs]: Illinois on
        lam along the step from (t, x_now) to t_tol, then the secant of lam
        across the final bracket; the state there goes to z."""
        cdef ContactFunctions c = self.contact
        cdef double sigma, tc
        cdef long k
        cdef Illinois s
        self.stepper.advance(t, &self.x_now[0], hs, &self.slope[0], &self.z[0])
        s = illinois_start(
            0.0, lam0, hs, c.constrained_at(t + hs, &self.z[0], &self.dz[0]), t_tol
        )
        for k in range(MAX_HALVINGS):
            if illinois_done(&s):
                break
            sigma = illinois_propose(&s)
            self.stepper.advance(t, &self.x_now[0], sigma, &self.slope[0], &self.z[0])
            illinois_narrow(&s, sigma, c.constrained_at(t + sigma, &self.z[0], &self.dz[0]))
        tc = s.lo + (s.hi - s.lo) * secant_fraction(s.lo_f, s.hi_f)
        if tc > 0:
            self.stepper.advance(t, &self.x_now[0], tc, &self.slope[0], &self.z[0])
        else:
            memcpy(&self.z[0], &self.x_now[0], c.n * sizeof(double))
        return tc

    cdef void _keep(self, long k, double t, const double* x, double lam) noexcept:
        cdef Py_ssize_t i
        self.t_out[k] = t
        self.lam_out[k] = lam
        for i in range(self.contact.n):
            self.x_out[k, i] = x[i]
