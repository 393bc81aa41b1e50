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
    # the growth of the estimates (`add`): the relative size above which a step
    # counts, the last estimate's norm and its step, where the growth began, the
    # last step's growth and the steps in a row that grew
    cdef double threshold
    cdef double last
    cdef double last_t
    cdef double last_h
    cdef double grown_from
    cdef double growth
    cdef long n_growing
    cdef bint add(self, double t1, double h, const double* x1,
                  const double* err) noexcept
    cdef bint _grows(self, double t1, double h, double size,
                     double relative) noexcept
    cdef void add_strip(self, double t, double eps, const double* rate) noexcept
