# The functions of (t, x) that compiled loops call (`_functions.pyx`).

cdef class Function:
    cdef readonly Py_ssize_t n_in, n_out
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
    cdef Py_ssize_t[::1] part_of, entry_of, starts
    cdef double[::1] values


cdef object new_array(const double* x, Py_ssize_t n)
