from ._functions cimport Function


cdef class Tableau:
    cdef readonly Py_ssize_t stages
    cdef double[:, ::1] a
    cdef double[::1] b, c
    cdef double[::1] e  # error weights, one per stage and one for f(t + h, x1)
    cdef Py_ssize_t[::1] e_stages  # the stages whose error weight is not 0
    cdef readonly int error_order
    cdef double[:, ::1] p  # continuous extension: coefficients of theta^1..
    cdef readonly Py_ssize_t degree
    # |R(-rho)| <= 1 for 0 <= rho <= stability_boundary (0: not given)
    cdef readonly double stability_boundary
    cdef int step(self, Function f, double t, const double* x, double h,
                  const double* k1, double* out, double* work) except -1
    cdef void estimate(self, Py_ssize_t n, double h, const double* slopes,
                       const double* f1, double* err) noexcept
    cdef double stiffness(self, Py_ssize_t n, double h, const double* slopes,
                          const double* f1) noexcept
    cdef void interpolate(self, Py_ssize_t n, double h, double theta,
                          const double* x, const double* slopes,
                          double* out) noexcept
