"""A flow's guard values at its last points, and the first crossing they predict.

A flow that cannot step back cheaply is approached by the quadratic through
its guards' last three points (Esposito and Kumar, eq. 12); the gap to the
line's zero estimates its error. `CrossingForecast` asks the same quadratic
whether a guard may cross a step (`methods.forecast`).

References
----------
Esposito and Kumar (2007), ACM TOMACS 17(1), eq. 12; Esposito and Kumar, ACM
TOMACS 14(4), 2004 (guards approached from the domain side).
"""

from libc.math cimport INFINITY, NAN, fabs, isfinite

import numpy as np

REACH = 4.0  # points older than REACH steps back are not used (a gap, a mode change)


cdef class GuardHistory:
    """The `m` guards' values at a flow's last POINTS points (oldest first),
    and a point after the newest known beyond a crossing (a step undone)."""

    def __init__(self, Py_ssize_t m):
        self.m, self.n, self.beyond_t = m, 0, NAN
        self.ts = np.zeros(POINTS)
        self.gs = np.zeros((POINTS, max(m, 1)))
        self.beyond_g = np.zeros(max(m, 1))

    cdef int clear(self) except -1:
        self.n, self.beyond_t = 0, NAN
        return 0

    cdef int forget_from(self, double t) except -1:
        """Forget the points at or after t (left by an undone step or a reset)."""
        while self.n and self.ts[self.n - 1] >= t:
            self.n -= 1
        return 0

    cdef int push(self, double t, const double* g) except -1:
        """Add the point (t, g) as the newest (the oldest drops out of a full one)."""
        cdef Py_ssize_t i, k
        if self.n == POINTS:
            for k in range(POINTS - 1):
                self.ts[k] = self.ts[k + 1]
                for i in range(self.m):
                    self.gs[k, i] = self.gs[k + 1, i]
            self.n -= 1
        self.ts[self.n] = t
        for i in range(self.m):
            self.gs[self.n, i] = g[i]
        self.n += 1
        if self.beyond_t <= t:  # passed
            self.beyond_t = NAN
        return 0

    cdef int set_beyond(self, double t, const double* g) except -1:
        """Keep (t, g), after the newest point, as the point beyond a crossing."""
        cdef Py_ssize_t i
        self.beyond_t = t
        for i in range(self.m):
            self.beyond_g[i] = g[i]
        return 0

    cdef Quadratic fit(self, Py_ssize_t i, double sign) noexcept:
        """Guard i times sign about the newest point in Newton's form, through
        the points before it or the point beyond (fewer: a line or a constant)."""
        cdef Quadratic q
        cdef Py_ssize_t n = self.n, k
        cdef double t, s1, g2
        q.c = q.slope = q.curv = q.s2 = 0.0
        if n == 0:
            return q
        t, q.c = self.ts[n - 1], sign * self.gs[n - 1, i]
        if self.beyond_t == self.beyond_t:
            q.s2, g2, k = self.beyond_t - t, sign * self.beyond_g[i], n - 2
        elif n >= 2:
            q.s2, g2, k = self.ts[n - 2] - t, sign * self.gs[n - 2, i], n - 3
        else:
            return q
        q.slope = (g2 - q.c) / q.s2
        if k >= 0:
            s1 = self.ts[k] - t
            q.curv = ((sign * self.gs[k, i] - q.c) / s1 - q.slope) / (s1 - q.s2)
        return q

    cdef double first_crossing(self, Py_ssize_t i, double sign,
                               double* spread) noexcept:
        """The time after the newest point, before the point beyond, at which
        guard i times sign reaches zero by `fit` (INFINITY: never); `spread`:
        the gap to the line's zero (the line alone: that zero)."""
        cdef Quadratic q = self.fit(i, sign)
        cdef bint has_beyond = self.beyond_t == self.beyond_t
        cdef double top = q.s2 if has_beyond else INFINITY
        cdef double line = _first_root(0.0, q.slope, q.c, top), quad
        if self.n < (2 if has_beyond else 3):  # two points: the line alone
            spread[0] = line
            return line
        quad = _first_root(q.curv, q.slope - q.curv * q.s2, q.c, top)
        if quad == INFINITY and line != INFINITY:
            spread[0] = line  # curving away, but the line says otherwise: trust neither
            return line
        spread[0] = fabs(quad - line) if line != INFINITY else quad
        return quad


cdef double _first_root(double a, double b, double c, double s_max) noexcept nogil:
    """The smallest root of a s^2 + b s + c in (0, s_max] (no cancellation)."""
    cdef double d, q, r1, r2, best = INFINITY
    if a == 0.0:
        if b != 0.0 and 0.0 < -c / b <= s_max:
            return -c / b
        return INFINITY
    d = b * b - 4.0 * a * c
    if d < 0.0:
        return INFINITY
    q = -0.5 * (b + (d ** 0.5 if b >= 0.0 else -(d ** 0.5)))
    r1 = q / a
    r2 = c / q if q != 0.0 else INFINITY
    if 0.0 < r1 <= s_max:
        best = r1
    if 0.0 < r2 <= s_max and r2 < best:
        best = r2
    return best


cdef class CrossingForecast:
    """`forecast(t, x, h)`: may one of `guards` cross the step of h from (t, x)?
    (The guards of every mode whose flow asks.)"""

    cdef tuple _guards
    cdef tuple fns
    cdef Py_ssize_t m
    cdef GuardHistory past  # the guards at the points asked about
    cdef double[::1] g  # the guards at the point asked about

    def __init__(self, guards):
        self._guards = tuple(guards)
        self.fns = tuple(guard.fn for guard in self._guards)
        self.m = len(self._guards)
        self.past = GuardHistory(self.m)
        self.g = np.zeros(max(self.m, 1))

    @property
    def guards(self):
        """The guards asked about."""
        return self._guards

    def __call__(self, double t, x, double h):
        """True if a guard may cross the step of h from (t, x)."""
        cdef Py_ssize_t i
        cdef double moves, end
        cdef Quadratic q
        cdef bint finite = True
        if self.m == 0:
            return False
        # a point at or after t was left by an undone step or a reset: forget it
        self.past.forget_from(t)
        for i in range(self.m):
            self.g[i] = float(self.fns[i](t, x))
            finite = finite and isfinite(self.g[i])
        self.past.push(t, &self.g[0])
        if self.past.n < POINTS or not finite:
            return True
        if t - self.past.ts[0] > REACH * fabs(h):
            return True
        for i in range(self.m):
            q = self.past.fit(i, 1.0)  # through the three points
            moves = fabs(q.slope) * h + fabs(q.curv) * (h - q.s2) * h
            end = q.c + q.slope * h + q.curv * h * (h - q.s2)
            if fabs(q.c) <= moves or (end if q.c >= 0.0 else -end) <= moves:
                return True
        return False
