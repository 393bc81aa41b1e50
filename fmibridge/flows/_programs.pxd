# Adapter expressions as postfix code, and the one stack machine that runs them.

from ..core._functions cimport Function


cdef class ProgramFunction(Function):
    cdef tuple programs, failures
    cdef double[::1] v
    cdef int run_all(self, double t, double* out) except -1
