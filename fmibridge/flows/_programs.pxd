# Adapter expressions as postfix code, and the one stack machine that runs them.

from libc.stdint cimport int64_t

from ..core._functions cimport Function


cdef class Program:
    cdef readonly object code
    cdef readonly object consts
    cdef readonly tuple names
    cdef readonly tuple slots
    cdef readonly str source
    cdef const int64_t[:, ::1] _code
    cdef const double[::1] _consts
    cdef double[::1] _stack
    cdef unsigned char[::1] _ints
    cdef int run(self, const double* v, double* value, bint* is_int) except -1


cdef class ProgramFunction(Function):
    cdef tuple programs
    cdef tuple failures
    cdef double[::1] v
    cdef int run_all(self, double t, double* out) except -1
