cdef class LocalErrors:
    cdef readonly Py_ssize_t n
    cdef readonly int error_order
    cdef readonly long n_estimated
    cdef double[::1] scale, worst, worst_t, worst_h, strip, strip_t
    cdef double strip_eps
    # the growth (`add`): the relative size above which a step counts, the last
    # estimate's norm and step, where the growth began, the last step's growth
    cdef double threshold, last, last_t, last_h, grown_from, growth
    cdef long n_growing  # steps in a row that grew
    cdef bint add(self, double t1, double h, const double* x1,
                  const double* err) noexcept
    cdef void add_strip(self, double t, double eps, const double* rate) noexcept
