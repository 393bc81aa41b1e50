cdef class LocalErrors:
    cdef readonly Py_ssize_t n
    cdef readonly int error_order
    cdef readonly long n_estimated
    cdef double[::1] scale
    cdef double[::1] worst
    cdef double[::1] worst_t
    cdef double[::1] worst_h
    cdef double[::1] strip
    cdef double[::1] strip_t
    cdef double strip_eps
    cdef void add(self, double t1, double h, const double* x1,
                  const double* err) noexcept
    cdef void add_strip(self, double t, double eps, const double* rate) noexcept
