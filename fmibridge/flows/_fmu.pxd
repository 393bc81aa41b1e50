# A Model Exchange FMU's C functions, called directly by the compiled loops.

from ..core._functions cimport Function
from ._fmi cimport FmiFunctions
from ._programs cimport ProgramFunction


cdef class FmuCalls:
    cdef readonly FmiFunctions fmi
    cdef readonly Py_ssize_t nx
    cdef readonly Py_ssize_t nz
    cdef str path
    cdef bint is_closed
    cdef FmuInputs inputs
    cdef double t_set
    cdef double[::1] x
    # the point: the FMU at (t_at, x_at), its inputs at t_at, untouched since
    cdef bint at_point
    cdef double t_at
    cdef double[::1] x_at
    cdef unsigned long point_id
    cdef int check_open(self) except -1
    cdef int set_time_and_states_c(self, double t, const double* x) except -1
    cdef int set_point(self, double t, const double* x) except -1


cdef class FmuInputs:
    cdef unsigned int[::1] vrs
    cdef double[::1] values
    cdef tuple sources
    cdef object others
    cdef int set(self, double t, FmuCalls calls) except -1


cdef class FmuRhs(Function):
    cdef FmuCalls calls
    cdef str path
    cdef double[::1] dx


cdef class FmuIndicators(Function):
    cdef FmuCalls calls
    cdef str path
    cdef double[::1] z
    cdef unsigned long z_point
    cdef bint has_z


cdef class FmuProgram(ProgramFunction):
    cdef FmuCalls calls
    cdef unsigned int[::1] out_vrs
    cdef Py_ssize_t first_output


cdef double table_value(const double* ts, const double* us, Py_ssize_t n,
                        double t, bint held, bint after) noexcept nogil
