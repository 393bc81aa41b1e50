from ._functions cimport Function


cdef class Tableau:
    cdef readonly Py_ssize_t stages
    cdef double[:, ::1] a
    cdef double[::1] b
    cdef double[::1] c
    cdef int step(self, Function f, double t, const double* x, double h,
                  const double* k1, double* out, double* work) except -1
