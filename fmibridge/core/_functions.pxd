# The functions of (t, x) that compiled loops call: right-hand sides, guard
# vectors, resets. One interface, several sources (Python callables, C
# addresses, FMU calls), so every loop is written once.

cdef class Function:
    cdef readonly Py_ssize_t n_in
    cdef readonly Py_ssize_t n_out
    cdef readonly str what
    cdef int call(self, double t, const double* x, double* out) except -1


cdef class PythonVector(Function):
    cdef object fn


cdef class PythonScalars(Function):
    cdef tuple fns


cdef class CAddress(Function):
    cdef void (*fn)(double, const double*, double*) noexcept nogil
    cdef object keep


cdef class Gathered(Function):
    cdef readonly tuple parts
    cdef Py_ssize_t[::1] part_of
    cdef Py_ssize_t[::1] entry_of
    cdef double[::1] values
    cdef Py_ssize_t[::1] starts


cdef object new_array(const double* x, Py_ssize_t n)
