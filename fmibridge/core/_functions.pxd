# The functions of (t, x) that compiled loops call (`_functions.pyx`).

cdef class Function:
    cdef readonly Py_ssize_t n_in, n_out
    cdef readonly str what
    cdef int call(self, double t, const double* x, double* out) except -1


cdef object new_array(const double* x, Py_ssize_t n)
