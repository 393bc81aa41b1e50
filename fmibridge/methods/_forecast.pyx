"""`forecast.CrossingForecast`, compiled: may a guard cross the step of h from
(t, x)? See `methods.forecast` for the rule and its reference (Esposito and
Kumar, ACM TOMACS 14(4), 2004)."""

from libc.math cimport fabs, isfinite

import numpy as np

REACH = 4.0  # points older than REACH steps back are not used (a gap, a mode change)
POINTS = 3  # the points kept: two slopes give the curvature


cdef class CrossingForecast:
    """`forecast(t, x, h)`: may a guard cross the step of h from (t, x)?

    Parameters
    ----------
    guards : sequence of Guard
        The guards of the modes whose flow asks (all of them: a flow shared by
        modes saves where any of their guards may be crossed).
    """

    cdef tuple _guards
    cdef tuple fns
    cdef Py_ssize_t m, n_points
    cdef double[::1] ts  # the points' times, oldest first
    cdef double[:, ::1] gs  # the guards' values there

    def __init__(self, guards):
        self._guards = tuple(guards)
        self.fns = tuple(guard.fn for guard in self._guards)
        self.m = len(self._guards)
        self.n_points = 0
        self.ts = np.zeros(POINTS)
        self.gs = np.zeros((POINTS, max(self.m, 1)))

    @property
    def guards(self):
        """The guards asked about, as given."""
        return self._guards

    def __call__(self, double t, x, double h):
        """True if a guard may cross the step of h from (t, x)."""
        cdef Py_ssize_t i, k
        cdef double s, a, moves, end, gi, g1i, g2i, t1, t2, dt, dt1, dt2
        cdef bint finite = True
        if self.m == 0:
            return False
        # a point at or after t was left by an undone step or a reset: forget it
        while self.n_points and self.ts[self.n_points - 1] >= t:
            self.n_points -= 1
        if self.n_points == POINTS:
            for k in range(POINTS - 1):
                self.ts[k] = self.ts[k + 1]
                self.gs[k, :] = self.gs[k + 1, :]
            self.n_points -= 1
        k = self.n_points
        self.ts[k] = t
        for i in range(self.m):
            gi = float(self.fns[i](t, x))
            self.gs[k, i] = gi
            finite = finite and isfinite(gi)
        self.n_points += 1
        if self.n_points < POINTS or not finite:
            return True
        t2, t1 = self.ts[0], self.ts[1]
        if t - t2 > REACH * fabs(h):
            return True
        dt, dt1, dt2 = t - t1, t1 - t2, t - t2
        for i in range(self.m):
            gi, g1i, g2i = self.gs[2, i], self.gs[1, i], self.gs[0, i]
            s = (gi - g1i) / dt
            a = 2.0 * (s - (g1i - g2i) / dt1) / dt2
            moves = fabs(s) * h + fabs(a) * (dt + h) * h / 2.0
            end = gi + s * h + a * h * (h + dt) / 2.0  # the quadratic at t + h
            if fabs(gi) <= moves or (end if gi >= 0.0 else -end) <= moves:
                return True
        return False
