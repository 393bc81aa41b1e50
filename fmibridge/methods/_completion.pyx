"""Completion's constrained phase (`Phase`: steps on h = 0, lift-off) and the
truncation test on a series of impacts (`Series`), compiled.

References
----------
Or and Ames, Sec. V (the procedure), Def. 7, Theorem 3, eqs. (6)-(7), (9),
(10), (14), (15); Dowell and Jarratt, BIT 11 (1971), the Illinois method.
"""

from libc.math cimport INFINITY, fabs, isfinite, isnan, sqrt
from libc.string cimport memcpy

import numpy as np

from ..core._rk cimport Tableau
from ..core.events cimport (
    Illinois, all_finite, illinois_done, illinois_narrow, illinois_propose,
    illinois_start, secant_fraction,
)
from ._contact cimport ContactFunctions, ProjectedStepper

# A step longer than h needs lam to change over each half by less than this part
# of its smallest sample: lam cannot then dip to zero and back between samples.
cdef double _LAM_CHANGE = 0.5
# Bound on halvings of one step and on a lift-off's Illinois trials: 2^64 covers
# any ratio of float steps.
MAX_HALVINGS = 64
BLOCK = 4096  # samples one `Phase.run` keeps at most
# `Phase.status`: steps taken, a lift-off (the last sample), no step after
# MAX_HALVINGS halvings, non-finite values in a step of h.
STEPPED, LIFTED, STUCK, NON_FINITE = 0, 1, 2, 3
# eps' = _V_RATIO eps: the neighbourhood V of Lemma 1 inside U (left free by Or and
# Ames; 0.5 keeps V well inside U).
cdef double _V_RATIO = 0.5
# Impacts the model-free test reads: 3 gap-rate ratios show geometric decay.
cdef enum:
    _N_SERIES = 4
# Largest spread of those ratios still called geometric: the flat ground has 0,
# the paper's examples ~0.02 near their Zeno points.
cdef double _RATIO_SPREAD = 0.1
# The model-free tails are estimates, not bounds: demand they be half the budget.
cdef double _FALLBACK_SAFETY = 2.0
FALLBACK_SAFETY = _FALLBACK_SAFETY


cdef class Phase:
    """The constrained phases of one contact and scheme: steps of eq. (7), then
    R*, doubling from h while step doubling agrees within `tol` and lam changes
    by less than _LAM_CHANGE over each half; a lift-off located by Illinois to
    t_tol. After `run`: samples `ts`, `xs`, `lams`, `status`, the state `t`,
    `x` it stopped at, `last_step` and `n_rejected`."""

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
        self.ts, self.lams = np.empty(BLOCK), np.empty(BLOCK)
        self.xs = np.empty((BLOCK, n))
        self.t_out, self.x_out, self.lam_out = self.ts, self.xs, self.lams
        self.x_now, self.slope, self.x_mid, self.slope_mid = np.empty((4, n))
        self.x_two, self.slope_two, self.x_full, self.z, self.dz = np.empty((5, n))

    @property
    def x(self):
        return np.array(self.x_now)

    def run(self, double t, x, double last_step, double h, double t_end, double tol,
            double t_tol, double reach, long max_steps):
        """Step from (t, x) on Z (after a step of last_step, 0 for none) until a
        lift-off, t_end (within `reach`), max_steps or BLOCK samples; return the
        number of samples."""
        cdef ContactFunctions c = self.contact
        cdef ProjectedStepper stepper = self.stepper
        cdef Py_ssize_t n = c.n
        cdef long n_samples = 0, rejected = 0, _k
        cdef double lam0, lam_mid, lam1, hs, tc
        cdef bint crossing, stepped
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        memcpy(&self.x_now[0], &xs[0], n * sizeof(double))
        max_steps = min(max_steps, BLOCK)
        lam0 = c.constrained_at(t, &self.x_now[0], &self.slope[0])
        self.status = STEPPED
        while n_samples < max_steps and t < t_end - reach:
            hs = min(max(h, 2.0 * last_step if last_step > 0.0 else h), t_end - t)
            stepped = False
            for _k in range(MAX_HALVINGS):
                stepper.advance(t, &self.x_now[0], hs / 2, &self.slope[0],
                                &self.x_mid[0])
                lam_mid = c.constrained_at(t + hs / 2, &self.x_mid[0],
                                           &self.slope_mid[0])
                stepper.advance(t + hs / 2, &self.x_mid[0], hs / 2,
                                &self.slope_mid[0], &self.x_two[0])
                lam1 = c.constrained_at(t + hs, &self.x_two[0], &self.slope_two[0])
                crossing = lam_mid <= 0 or lam1 <= 0
                if hs > h and (
                    crossing
                    or not max(fabs(lam_mid - lam0), fabs(lam1 - lam_mid))
                    < _LAM_CHANGE * min(lam0, lam_mid, lam1)
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
                    self.x_now, self.x_two = self.x_two, self.x_now
                    self.slope, self.slope_two = self.slope_two, self.slope
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
        """max_i |x(t + hs) in one step - in two half steps (x_two)|, or nan."""
        cdef double largest = 0.0, value
        cdef Py_ssize_t i
        self.stepper.advance(t, &self.x_now[0], hs, &self.slope[0], &self.x_full[0])
        for i in range(self.contact.n):
            value = fabs(self.x_full[i] - self.x_two[i])
            if isnan(value):
                return value
            if value > largest:
                largest = value
        return largest

    cdef double _lift_off(self, double t, double hs, double lam0,
                          double t_tol) except? -1:
        """Return tc where lam falls through zero in [t, t + hs]; its state to z."""
        cdef ContactFunctions c = self.contact
        cdef double sigma, tc
        cdef long _k
        cdef Illinois s
        self.stepper.advance(t, &self.x_now[0], hs, &self.slope[0], &self.z[0])
        s = illinois_start(
            0.0, lam0, hs, c.constrained_at(t + hs, &self.z[0], &self.dz[0]), t_tol
        )
        for _k in range(MAX_HALVINGS):
            if illinois_done(&s):
                break
            sigma = illinois_propose(&s)
            self.stepper.advance(t, &self.x_now[0], sigma, &self.slope[0], &self.z[0])
            illinois_narrow(
                &s, sigma, c.constrained_at(t + sigma, &self.z[0], &self.dz[0])
            )
        tc = s.lo + (s.hi - s.lo) * secant_fraction(s.lo_f, s.hi_f)
        if tc > 0:
            self.stepper.advance(t, &self.x_now[0], tc, &self.slope[0], &self.z[0])
        else:
            memcpy(&self.z[0], &self.x_now[0], c.n * sizeof(double))
        return tc

    cdef void _keep(self, long k, double t, const double* x, double lam) noexcept:
        self.t_out[k], self.lam_out[k] = t, lam
        memcpy(&self.x_out[k, 0], x, self.contact.n * sizeof(double))


def truncation_threshold(double e, bounds, eps, *, double speed, double dh_norm):
    """Return min(c1, c2, c3) of eq. (15); truncate when abs(dh qdot) is below it.

    Parameters
    ----------
    e : float
        Restitution, 0 < e < 1.
    bounds : ZenoBounds
        a_min, a_max, eta, zeta over V = N(eps_q', eps_v').
    eps : (eps_t, eps_q', eps_v')
        Time budget and the primed neighbourhood radii.
    speed : float
        ||qdot*||, so beta = speed + eps_v'.
    dh_norm : float
        ||dh(q*)||.

    Returns
    -------
    float
        The threshold; 0 when (9) fails (a_min <= 0 or e' = e a_max / a_min >= 1).

    References
    ----------
    Or and Ames, eqs. (9), (10), (14), (15), with dh M^-1 dh^T in the
    denominator of eq. (10) (the printed dh M dh^T is dimensionally inconsistent).

    Examples
    --------
    >>> from fmibridge.methods.contact import ZenoBounds
    >>> b = ZenoBounds(a_min=1.0, a_max=1.0, eta=1.0, zeta=1.0)
    >>> eps = (1e-3, 5e-4, 5e-4)
    >>> round(truncation_threshold(0.5, b, eps, speed=0.3, dh_norm=1.0), 10)
    8.33333e-05
    """
    cdef double eps_t, eps_q, eps_v, e1, e2, scale, c1, c2, c3
    cdef double a_min = bounds.a_min, a_max = bounds.a_max
    cdef double eta = bounds.eta, zeta = bounds.zeta
    eps_t, eps_q, eps_v = eps
    if not (a_min > 0 and a_max >= a_min):
        return 0.0
    e1 = e * a_max / a_min
    e2 = e * sqrt(a_max / a_min)
    if e1 >= 1.0:
        return 0.0
    scale = a_min * (1.0 - e1) / (2.0 * e)
    c1 = scale * eps_t
    c2 = scale * eps_q / (speed + eps_v)
    c3 = eps_v / ((1.0 + e) * eta / (1.0 - e2) + zeta / scale + 1.0 / dh_norm)
    return min(c1, c2, c3)


cdef double _norm(const double* u, const double* v, const Py_ssize_t* index,
                  Py_ssize_t m) noexcept:
    """||u[index] - v[index]|| in index order (v NULL: 0; index NULL: 0..m-1)."""
    cdef double total = 0.0, d
    cdef Py_ssize_t k, j
    for k in range(m):
        j = k if index == NULL else index[k]
        d = u[j] if v == NULL else u[j] - v[j]
        total = total + d * d
    return sqrt(total)


cdef class Series:
    """The impacts of the current Zeno series and the truncation test on them
    (`completion`): `catch_up` follows the log (an impact edge of the free mode
    joins the series, any other event ends it), `truncates` tests the last one.
    Each gap rate is compared with the one before carried to its level by
    energy, so where a method places impacts does not hide their decay. An
    impact is *unresolved* where 2 a abs(h) > hdot^2 (a = -hddot, its rate tells
    where the method fired): at the first one the test reads the impacts before
    it without the safety factor (`floor`, `excess`)."""

    cdef ContactFunctions contact
    cdef object free, impact_edges, bounds
    cdef Py_ssize_t n_seen, first
    cdef bint floored  # an impact of this series was unresolved
    cdef readonly list impacts  # (t, x before, gap rate, gap), the newest last
    cdef double[:, ::1] xs, stars  # N_SERIES states from `first` on, and their R*
    cdef bint has_star[_N_SERIES]
    cdef double[::1] dx
    cdef readonly bint floor  # the last `truncates` met the first unresolved one
    cdef readonly double excess  # of the last geometric test

    def __init__(self, ContactFunctions contact, str free, tuple impact_edges, bounds):
        self.contact, self.free, self.impact_edges = contact, free, impact_edges
        self.bounds, self.n_seen, self.impacts = bounds, 0, []
        self.xs, self.stars = np.empty((2, _N_SERIES, contact.n))
        self.dx = np.empty(contact.n)

    def catch_up(self, list events):
        """Follow the events logged since the last call."""
        for event in events[self.n_seen:]:
            t, x = event.t, event.x_before
            if event.source == self.free and event.edge in self.impact_edges:
                rate, gap = self.contact.rate(t, x), self.contact.h(t, x)
                self.impacts.append((t, x, rate, gap))
            else:
                self.impacts, self.floored = [], False
        self.n_seen = len(events)

    def truncates(self, double eps_t, double eps_q, double eps_v):
        """True if the last impact meets the truncation test."""
        cdef ContactFunctions c = self.contact
        cdef Py_ssize_t size = len(self.impacts), m = min(size, _N_SERIES), k
        cdef double e = c.restitution, t, rate, threshold
        cdef double[::1] dh
        t, _, rate, _ = self.impacts[size - 1]
        self.floor, self.excess = False, 0.0
        if self.floored or not (rate < 0 and e < 1.0):
            return False  # Theorems 1-2 need e < 1
        if e > 0.0 and self._unresolved(size - 1):
            self.floored = True  # no later impact of this series tells more
            if size <= _N_SERIES:
                return False
            self._states(_N_SERIES, size - 1)
            for k in range(_N_SERIES):
                if self._unresolved(self.first + k):
                    return False
            self.floor = (self._decays(_N_SERIES, eps_t, eps_q, eps_v)
                          and self._pressed(_N_SERIES))
            return self.floor and self.excess < _FALLBACK_SAFETY
        self._states(m, size)
        if e == 0.0:
            return self._pressed(m)  # A16: the plastic impact lands on Z
        if self.bounds is None:  # decay first: it needs no R* and mostly fails
            return (self._decays(m, eps_t, eps_q, eps_v) and self.excess < 1.0
                    and self._pressed(m))
        if not self._pressed(m):
            return False
        star = np.array(self.stars[m - 1])
        bounds = self.bounds(t, star, _V_RATIO * eps_q, _V_RATIO * eps_v)
        dh = c.dh(t, star)
        threshold = truncation_threshold(
            e, bounds, (eps_t, _V_RATIO * eps_q, _V_RATIO * eps_v),
            speed=_norm(&self.stars[m - 1, 0], NULL, &c.iv[0], c.nq),
            dh_norm=_norm(&dh[0], NULL, NULL, c.nq),
        )
        return fabs(rate) < threshold

    cdef bint _unresolved(self, Py_ssize_t k) except -1:
        """2 a abs(h) > hdot^2 at impact k, a = -hddot."""
        cdef double t, rate, gap, a
        t, x_before, rate, gap = self.impacts[k]
        a = -self.contact.hddot(t, x_before)
        return a > 0.0 and 2.0 * a * fabs(gap) > rate * rate

    cdef int _states(self, Py_ssize_t m, Py_ssize_t end) except -1:
        """Copy the m impacts before index `end` to xs (R* of none of them yet)."""
        cdef Py_ssize_t k
        self.first = end - m
        for k in range(m):
            np.asarray(self.xs)[k] = self.impacts[self.first + k][1]
            self.has_star[k] = False
        return 0

    cdef double* _star(self, Py_ssize_t k) except NULL:
        """R* of the k-th of the impacts in xs, projected once."""
        if not self.has_star[k]:
            self.contact.project_at(
                self.impacts[self.first + k][0], &self.xs[k, 0], &self.stars[k, 0]
            )
            self.has_star[k] = True
        return &self.stars[k, 0]

    cdef bint _pressed(self, Py_ssize_t m) except -1:
        """lam(R* x) > 0 at the last impact in xs: condition (i) of Def. 7."""
        return self.contact.constrained_at(
            self.impacts[self.first + m - 1][0], self._star(m - 1), &self.dx[0]
        ) > 0

    cdef bint _decays(self, Py_ssize_t m, double eps_t, double eps_q,
                      double eps_v) except -1:
        """Model-free test: the gap rates in xs decay geometrically."""
        cdef ContactFunctions c = self.contact
        cdef Py_ssize_t k, j = self.first
        cdef double ts[_N_SERIES], rates[_N_SERIES], gaps[_N_SERIES]
        cdef double lo_interval, lo_rate, ratio, r, lo_ratio, a, s, dq, dv, square
        if m < _N_SERIES:
            return False
        for k in range(m):
            ts[k] = self.impacts[j + k][0]
            rates[k] = fabs(<double> self.impacts[j + k][2])
            gaps[k] = self.impacts[j + k][3]
        lo_interval, lo_rate = ts[1] - ts[0], rates[0]
        for k in range(1, m):
            lo_interval = min(lo_interval, ts[k] - ts[k - 1])
            lo_rate = min(lo_rate, rates[k])
        if lo_interval <= 0 or lo_rate <= 0 or ts[m - 1] - ts[m - 2] >= ts[1] - ts[0]:
            return False
        a = -c.hddot_at(ts[m - 1], self._star(m - 1))
        if not a > 0.0:
            return False
        r, lo_ratio = 0.0, INFINITY
        for k in range(1, m):  # rate k carried by energy to the level of k - 1
            square = rates[k] * rates[k] + 2.0 * a * (gaps[k] - gaps[k - 1])
            ratio = (sqrt(square) if square > 0.0 else 0.0) / rates[k - 1]
            r, lo_ratio = max(r, ratio), min(lo_ratio, ratio)
        if r >= 1.0 or r - lo_ratio > _RATIO_SPREAD:
            return False
        s = _FALLBACK_SAFETY * r / (1.0 - r)
        dq = _norm(&self.xs[m - 1, 0], &self.xs[m - 2, 0], &c.iq[0], c.nq)
        dv = _norm(self._star(m - 1), self._star(m - 2), &c.iv[0], c.nq)
        self.excess = max(2.0 * rates[m - 1] / a * s / eps_t, dq * s / eps_q,
                          dv * s / eps_v)
        return True

    def placed(self, inner):
        """The sum of `Method.time_resolution` over the series' impacts."""
        cdef double late = 0.0, one
        for _t, _x_before, rate, gap in reversed(self.impacts):
            one = inner.time_resolution(gap, rate)
            if isfinite(one):  # not known at rate 0 off the surface: not added
                late += one
        return late

    def switch(self, ProjectedStepper stepper, bint limit, double t_end):
        """Return (t, x, lam) where the constrained motion starts: R* of the last
        impact's state, carried for `limit` along the constrained flow for the
        remaining Zeno time 2 e |hdot-| / ((1 - e) |hddot|) (from the last
        resolved impact after a `floor` truncation)."""
        cdef ContactFunctions c = self.contact
        cdef Py_ssize_t size = len(self.impacts), m = min(size, _N_SERIES)
        cdef double t, rate, rest, e = c.restitution, lam, t_ref, rate_ref
        cdef double[::1] xv
        t, x_before, rate, _ = self.impacts[size - 1]
        t_ref, rate_ref = t, rate
        if self.floor:
            t_ref, _, rate_ref, _ = self.impacts[size - 2]
            x = c.project(t, x_before)
        else:
            x = np.array(<double[:c.n]> self._star(m - 1))
        xv = x
        if limit and e > 0.0:
            rest = t_ref - t + 2.0 * e * fabs(rate_ref) / (
                (1.0 - e) * -c.hddot_at(t, &xv[0])
            )
            rest = min(rest, t_end - t)
            if rest > 0.0:
                x = stepper.constrained_step(t, x, rest)
                xv = x
                t += rest
        lam = c.constrained_at(t, &xv[0], &self.dx[0])
        return t, x, lam
