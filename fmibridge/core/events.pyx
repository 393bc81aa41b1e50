"""Event logic, once for every method: crossings, Illinois, secants and dips.

- `crossed`: does a step from g0 to g1 fire a guard of a direction;
  `stays_inside`: does a step keep every guard strictly inside;
- Illinois regula falsi on a bracketed sign change (`Illinois`, driven by the
  caller: `illinois_start`, `illinois_propose`, `illinois_narrow`,
  `illinois_done`; `illinois` drives it from Python). A projection onto a
  surface narrows to a value instead of a width: the plain secant
  (`illinois_secant`), its stop `illinois_close`, and `illinois_mirror` for a
  trial where the function is undefined (Relaxation's guard point);
- `secant_fraction`: where the secant of g crosses zero inside a bracket;
- `dips` and `hermite_minimum`: does a guard dip beyond its surface and come
  back inside one step, and where (the step's cubic Hermite interpolant).

A guard's direction is its side: +1 falling (g > 0 inside), -1 rising, 0 either.

References
----------
Dowell and Jarratt, BIT 11 (1971), the Illinois method. Hairer, Norsett and
Wanner, Solving ODEs I, Sec. II.6 (dense output, cubic Hermite interpolation).
"""

from libc.math cimport NAN, fabs, isfinite, isnan, sqrt

# A start value below this fraction of |f| at the far end counts as zero: the
# start lies on the surface to round-off (1e-16 after a reset, against 1e-3).
cdef double _SURFACE_RTOL = 1e-10
SURFACE_RTOL = _SURFACE_RTOL
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
    """True if a step from g0 to g1 fires a guard of this side.

    A falling guard fires when the step ends below zero and g decreased over it:
    the classic g0 >= 0 > g1, and also a guard slightly beyond already and going
    deeper (a second contact in the same instant); one left beyond by a reset but
    moving back in (a ball just bounced) does not fire.
    """
    cdef bint falling = g1 < 0.0 and g1 < g0
    cdef bint rising = g1 > 0.0 and g1 > g0
    if side > 0.0:
        return falling
    if side < 0.0:
        return rising
    return (g0 >= 0.0 and falling) or (g0 <= 0.0 and rising)


cdef bint stays_inside(const double* sides, const double* g0, const double* g1,
                       Py_ssize_t m) noexcept nogil:
    """True if every guard ends strictly inside its domain, having started inside
    or on its surface (a reset leaves the state there); an 'either' guard keeps
    its sign strictly (from zero it fires)."""
    cdef Py_ssize_t i
    for i in range(m):
        if not isfinite(g1[i]):
            return False
        if sides[i] > 0.0:
            if not (g0[i] >= 0.0 and g1[i] > 0.0):
                return False
        elif sides[i] < 0.0:
            if not (g0[i] <= 0.0 and g1[i] < 0.0):
                return False
        elif not g0[i] * g1[i] > 0.0:
            return False
    return True


cdef double bracket_sign(double side, double g_start, double g_end) noexcept nogil:
    """The sign that makes a guard positive inside, for a bracket of its step:
    for 'either', the sign of g at the start, or from zero against the end (the
    step's side is beyond)."""
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
    """True if ends with these values bracket a root as Illinois needs:
    hi_f < 0 <= lo_f, lo_f below zero by round-off of the surface allowed
    (SURFACE_RTOL of abs(hi_f): a reset's state one ulp beyond it)."""
    return hi_f < 0.0 and lo_f >= -_SURFACE_RTOL * abs(hi_f)


cdef Illinois illinois_start(double lo, double lo_f, double hi, double hi_f,
                             double width) noexcept nogil:
    """The state of a bracket [lo, hi] to narrow to `width`; a start within
    round-off of the surface (a reset's state) counts as on it."""
    cdef Illinois s
    cdef bint on_surface = lo_f <= _SURFACE_RTOL * abs(hi_f)
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
    """The next trial abscissa, width/2 inside the bracket.

    The secant of the ends (their values halved by Illinois). From a surface
    point (lo.f == 0: a curve leaving a surface and coming back, the next bounce
    after an impact) the root in (lo, hi) of the parabola through the surface
    point and two more (the ends, or hi and the hi before it while lo is still
    on the surface): exact for a flight under constant acceleration; the middle
    where it has none. A root found exactly (lo.f == 0 off the surface): step
    past it.
    """
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
    """Where the secant through the ends, with their values as Illinois uses
    them (halved), crosses zero; unclamped (`illinois_propose` keeps it inside
    the bracket; a caller narrowing to a value tolerance tests it itself)."""
    return s.lo + (s.hi - s.lo) * s.f_lo / (s.f_lo - s.f_hi)


cdef bint illinois_close(const Illinois* s, double f_tol) noexcept nogil:
    """True once the domain-side end lies within f_tol of zero: the stop of a
    projection onto a surface, where the value counts and not the width."""
    return fabs(s.lo_f) <= f_tol


cdef void illinois_mirror(Illinois* s, double sigma) noexcept nogil:
    """Move hi to a trial where the function is undefined, for a projection that
    narrows to a value tolerance (`illinois_close`): its value as the secant uses
    it is lo's mirrored (-f_lo), so the next secant is the bracket's middle and
    the ones after stay secants. (`illinois_narrow` bisects instead until hi has
    a value again.)"""
    s.hi, s.hi_f, s.f_hi, s.side = sigma, NAN, -s.f_lo, 0.0


cdef bint illinois_narrow(Illinois* s, double sigma, double f) noexcept nogil:
    """Replace the end on the trial's side by (sigma, f); True if it was lo.

    A non-finite f counts as beyond (the function is undefined there; the next
    trial bisects). The other end's value as the secant uses it is halved when
    the same end moved twice in a row (Illinois).
    """
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
    """The sign that makes a guard positive inside over a step from g0 to g1,
    for dip detection: for 'either', the side it starts on (from zero, the side
    it ends on)."""
    if side != 0.0:
        return side
    if g0 != 0.0:
        return 1.0 if g0 > 0.0 else -1.0
    return 1.0 if g1 >= 0.0 else -1.0


cdef bint dips(double s, double g0, double r0, double g1, double r1) noexcept nogil:
    """True if the guard (signed by s) is inside at both ends, approaching at the
    start and receding at the end: it has a minimum inside the step, which may
    lie beyond its surface. g and r are its values and rates at the two ends."""
    return s * g0 >= 0.0 and s * g1 > 0.0 and s * r0 < 0.0 < s * r1


cdef double hermite_minimum(double s, double g0, double r0, double g1, double r1,
                            double hs, double* value) noexcept nogil:
    """Return u, the minimum in [0, 1] of the cubic Hermite interpolant p of s g
    over a step of length hs (u the fraction of the step); write p(u) to value.

    p(u) = a u^3 + b u^2 + c u + d matches the values and rates at both ends;
    with p'(0) < 0 < p'(1) (`dips`) p' has one root in (0, 1), taken in the
    form that does not cancel.
    """
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


# -- from Python --------------------------------------------------------------


cdef class End:
    """One end of a bracket: the abscissa, the function's value, and what else the
    evaluation produced (a state, guard values) for the caller. Frozen (its
    fields read-only), compared by its fields."""

    cdef double _sigma
    cdef double _f
    cdef object _data

    def __init__(self, double sigma, double f, object data=None):
        self._sigma = sigma
        self._f = f
        self._data = data

    @property
    def sigma(self):
        """The abscissa."""
        return self._sigma

    @property
    def f(self):
        """The function's value at `sigma`."""
        return self._f

    @property
    def data(self):
        """What else the evaluation produced, for the caller (or None)."""
        return self._data

    def __repr__(self):
        return f"End(sigma={self.sigma!r}, f={self.f!r}, data={self.data!r})"

    def __eq__(self, other):
        if type(other) is not End:
            return NotImplemented
        return (self.sigma, self.f, self.data) == (other.sigma, other.f, other.data)

    __hash__ = None  # as a frozen dataclass's hash of its fields: data may be an array


def illinois(fun, lo, hi, *, double width, long max_iter):
    """Narrow [lo, hi] (Ends, lo.f >= 0 > hi.f) by Illinois regula falsi until
    hi - lo <= width or max_iter trials; fun(sigma) returns an End. Returns the
    final (lo, hi)."""
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


def fires(direction, double g0, double g1):
    """True if a step from g0 to g1 fires a guard of this direction."""
    return crossed(SIDES[direction], g0, g1)
