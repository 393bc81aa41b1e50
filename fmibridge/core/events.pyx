"""Event logic, once for every method: crossings, Illinois, secants and dips.

`Illinois` narrows a bracketed sign change (regula falsi, driven by the
caller) or projects onto a surface; `dips` and `hermite_minimum` find a guard
that dips beyond its surface and back inside one step. A guard's side is +1
falling, -1 rising, 0 either.

References
----------
Dowell and Jarratt, BIT 11 (1971), the Illinois method. Hairer, Norsett and
Wanner, Solving ODEs I, Sec. II.6 (dense output, cubic Hermite interpolation).
"""

cimport cython
from libc.math cimport NAN, fabs, isfinite, isnan, sqrt

# A start value below this fraction of |f| at the far end lies on the surface
# to round-off (1e-16 after a reset, against 1e-3).
cdef double SURFACE_RTOL = 1e-10
# A guard's direction as the loops read it.
SIDES = {"falling": 1.0, "rising": -1.0, "either": 0.0}


cdef bint all_finite(const double* v, Py_ssize_t n) noexcept nogil:
    """True if v[:n] holds no inf or nan."""
    cdef Py_ssize_t i
    for i in range(n):
        if not isfinite(v[i]):
            return False
    return True


cdef bint same(const double* x, const double* y, Py_ssize_t n) noexcept nogil:
    """True if x[:n] and y[:n] hold the same values (nan equals nothing)."""
    cdef Py_ssize_t i
    for i in range(n):
        if x[i] != y[i]:
            return False
    return True


cdef bint crossed(double side, double g0, double g1) noexcept nogil:
    """True if a step from g0 to g1 fires a guard of this side: a falling one
    fires when the step ends below zero and g decreased (also from slightly
    beyond, going deeper; not one moving back in after a reset)."""
    cdef bint falling = g1 < 0.0 and g1 < g0
    cdef bint rising = g1 > 0.0 and g1 > g0
    if side > 0.0:
        return falling
    if side < 0.0:
        return rising
    return (g0 >= 0.0 and falling) or (g0 <= 0.0 and rising)


cdef double bracket_sign(double side, double g_start, double g_end) noexcept nogil:
    """The sign that makes a guard positive inside over a bracket: for 'either',
    that of g at the start, or from zero against the end."""
    if side != 0.0:
        return side
    if g_start != 0.0:
        return 1.0 if g_start > 0.0 else -1.0
    return -1.0 if g_end > 0.0 else 1.0


cdef double lowest(const double* signs, const double* g, Py_ssize_t m) noexcept nogil:
    """min_i signs_i g_i: the guard nearest (or deepest beyond) its surface."""
    cdef double value = signs[0] * g[0]
    cdef Py_ssize_t i
    for i in range(1, m):
        if signs[i] * g[i] < value:
            value = signs[i] * g[i]
    return value


cdef bint is_bracket(double lo_f, double hi_f) noexcept nogil:
    """True if hi_f < 0 <= lo_f, lo_f allowed SURFACE_RTOL abs(hi_f) below zero."""
    return hi_f < 0.0 and lo_f >= -SURFACE_RTOL * abs(hi_f)


cdef Illinois illinois_start(double lo, double lo_f, double hi, double hi_f,
                             double width) noexcept nogil:
    """The state of a bracket [lo, hi] to narrow to `width`."""
    cdef Illinois s
    cdef bint on_surface = lo_f <= SURFACE_RTOL * abs(hi_f)
    s.lo, s.lo_f, s.hi, s.hi_f = lo, lo_f, hi, hi_f
    s.f_lo, s.f_hi, s.side = lo_f, hi_f, 0.0
    s.before, s.before_f = NAN, NAN
    s.surface = lo if on_surface else NAN
    s.lo_is_surface = on_surface
    s.width = width
    return s


cdef bint illinois_done(const Illinois* s) noexcept nogil:
    """True once the bracket is no wider than its target width."""
    return s.hi - s.lo <= s.width


cdef double illinois_propose(const Illinois* s) noexcept nogil:
    """The next trial abscissa, width/2 inside the bracket: the secant of the
    ends (values halved by Illinois); from a surface point (the next bounce
    after an impact), the root in (lo, hi) of the parabola through it and two
    more points, exact for a flight under constant acceleration (else the
    middle); past a root found exactly."""
    cdef double lo = s.lo, hi = s.hi, sigma = 0.5 * (s.lo + s.hi)
    cdef double surface, other, other_f, s1, s2, r1, r2, q, root
    if s.lo_f == 0.0 and not s.lo_is_surface:
        sigma = lo
    elif not isnan(s.surface) and isfinite(s.hi_f):
        surface = s.surface
        if not s.lo_is_surface:
            other, other_f = lo, s.lo_f
        else:
            other, other_f = s.before, s.before_f
        s1, s2 = hi - surface, other - surface
        if isfinite(other_f) and s2 != s1 and s2 != 0.0:
            r1, r2 = s.hi_f / s1, other_f / s2
            q = (r2 - r1) / (s2 - s1)
            root = surface - (r1 - q * s1) / q if q != 0.0 else NAN
            if lo < root < hi:
                sigma = root
    elif isfinite(s.f_hi) and s.f_lo > 0.0:
        sigma = illinois_secant(s)
    if lo + 0.5 * s.width > sigma:
        sigma = lo + 0.5 * s.width
    if hi - 0.5 * s.width < sigma:
        sigma = hi - 0.5 * s.width
    return sigma


cdef double illinois_secant(const Illinois* s) noexcept nogil:
    """Where the secant through the ends (Illinois' values) crosses zero, unclamped."""
    return s.lo + (s.hi - s.lo) * s.f_lo / (s.f_lo - s.f_hi)


cdef bint illinois_close(const Illinois* s, double f_tol) noexcept nogil:
    """True once the domain-side end lies within f_tol of zero (projection)."""
    return fabs(s.lo_f) <= f_tol


cdef void illinois_mirror(Illinois* s, double sigma) noexcept nogil:
    """Move hi to a trial where the function is undefined, in a projection:
    its secant value is -f_lo, so the next secant is the bracket's middle."""
    s.hi, s.hi_f, s.f_hi, s.side = sigma, NAN, -s.f_lo, 0.0


cdef bint illinois_narrow(Illinois* s, double sigma, double f) noexcept nogil:
    """Replace the end on the trial's side by (sigma, f); True if it was lo. A
    non-finite f counts as beyond; the other end's secant value is halved when
    the same end moved twice in a row (Illinois)."""
    if not isfinite(f):
        s.hi, s.hi_f, s.f_hi, s.side = sigma, f, NAN, 0.0
        return False
    if f >= 0.0:
        s.lo, s.lo_f, s.f_lo = sigma, f, f
        if s.side == -1.0:
            s.f_hi = s.f_hi / 2
        s.side, s.lo_is_surface = -1.0, False
        return True
    s.before = s.hi
    s.before_f = s.hi_f if isfinite(s.hi_f) else NAN
    s.hi, s.hi_f, s.f_hi = sigma, f, f
    if s.side == 1.0:
        s.f_lo = s.f_lo / 2
    s.side = 1.0
    return False


cdef double secant_fraction(double a, double b) noexcept nogil:
    """Where in [0, 1] the secant from g = a to g = b crosses zero (0 where the
    signs do not differ)."""
    cdef double frac = 0.0
    if a - b != 0.0 and _sign(a) != _sign(b):
        frac = a / (a - b)
    return min(max(frac, 0.0), 1.0)


cdef inline double _sign(double v) noexcept nogil:
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


cdef double dip_sign(double side, double g0, double g1) noexcept nogil:
    """The sign that makes a guard positive inside over a step, for dips: for
    'either', the side it starts on (from zero, ends on)."""
    if side != 0.0:
        return side
    if g0 != 0.0:
        return 1.0 if g0 > 0.0 else -1.0
    return 1.0 if g1 >= 0.0 else -1.0


cdef bint dips(double s, double g0, double r0, double g1, double r1) noexcept nogil:
    """True if the guard (signed by s) is inside at both ends, approaching at
    the start and receding at the end (values g, rates r): a minimum inside."""
    return s * g0 >= 0.0 and s * g1 > 0.0 and s * r0 < 0.0 < s * r1


cdef double hermite_minimum(double s, double g0, double r0, double g1, double r1,
                            double hs, double* value) noexcept nogil:
    """Return u in [0, 1], the minimum of the cubic Hermite interpolant p of s g
    over a step hs, and write p(u) to value (p' has one root in (0, 1) where
    `dips`, taken in the form that does not cancel)."""
    cdef double d = s * g0, c = hs * s * r0, e = s * g1, f = hs * s * r1
    cdef double b = 3.0 * (e - d) - 2.0 * c - f
    cdef double a = 2.0 * (d - e) + c + f
    cdef double u, root, q, u1, u2
    if a == 0.0:
        u = -c / (2.0 * b) if b != 0.0 else 0.5
    else:
        root = sqrt(max(b * b - 3.0 * a * c, 0.0))
        q = -(b + root) if b >= 0.0 else -(b - root)
        u1 = q / (3.0 * a)
        u2 = c / q if q != 0.0 else u1
        u = u1 if 0.0 < u1 < 1.0 else u2
    u = min(max(u, 0.0), 1.0)
    value[0] = ((a * u + b) * u + c) * u + d
    return u


@cython.dataclasses.dataclass(frozen=True)
cdef class End:
    """One end of a bracket: the abscissa `sigma`, the function's value `f`
    there, and `data`, what else the evaluation produced (for the caller)."""

    sigma: float
    f: float
    data: object = None


def illinois(fun, lo, hi, *, double width, long max_iter):
    """Narrow [lo, hi] (Ends, lo.f >= 0 > hi.f) by Illinois until hi - lo <=
    width or max_iter trials; fun(sigma) returns an End. Returns (lo, hi)."""
    cdef Illinois s = illinois_start(lo.sigma, lo.f, hi.sigma, hi.f, width)
    cdef long _k
    for _k in range(max_iter):
        if illinois_done(&s):
            break
        trial = fun(illinois_propose(&s))
        if illinois_narrow(&s, trial.sigma, trial.f):
            lo = trial
        else:
            hi = trial
    return lo, hi


def bracketed(double lo_f, double hi_f):
    """True if ends with these values bracket a root as `illinois` needs."""
    return is_bracket(lo_f, hi_f)
