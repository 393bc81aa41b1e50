"""`forecast.CrossingForecast`, compiled: may a guard cross the step of h from
(t, x)? See `methods.forecast` for the rule and its reference (Esposito and
Kumar, ACM TOMACS 14(4), 2004)."""

from libc.math cimport fabs, isfinite

import numpy as np

from ._guard_history cimport POINTS, GuardHistory, Quadratic, quadratic_at

REACH = 4.0  # points older than REACH steps back are not used (a gap, a mode change)


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
            end = quadratic_at(q, h)
            if fabs(q.c) <= moves or (end if q.c >= 0.0 else -end) <= moves:
                return True
        return False
