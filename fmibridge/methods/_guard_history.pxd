# A flow's guard values at its last points, and the first crossing they predict
# (see _guard_history.pyx).

cpdef enum:
    POINTS = 3  # the points kept: the quadratic's three


# Guard i near the newest point, u the time since it: c + slope u + curv u (u - s2)
# through (0, c), the nearer other point at s2 and the third (curv = 0: none).
cdef struct Quadratic:
    double c
    double slope
    double curv
    double s2


cdef class GuardHistory:
    cdef readonly Py_ssize_t m, n  # guards; points held (0 to POINTS)
    cdef double[::1] ts  # the points' times, oldest first
    cdef double[:, ::1] gs  # the guards' values there
    # a point after the newest, known beyond a crossing (NAN if none)
    cdef readonly double beyond_t
    cdef double[::1] beyond_g

    cdef int clear(self) except -1
    cdef int forget_from(self, double t) except -1
    cdef int push(self, double t, const double* g) except -1
    cdef int set_beyond(self, double t, const double* g) except -1
    cdef Quadratic fit(self, Py_ssize_t i, double sign) noexcept
    cdef double first_crossing(self, Py_ssize_t i, double sign,
                               double* spread) noexcept
