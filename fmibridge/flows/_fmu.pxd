# A Model Exchange FMU's C functions, called directly by the compiled loops.

from ..core._functions cimport Function
from ._programs cimport ProgramFunction

ctypedef int (*set_time_f)(void*, double) noexcept nogil
ctypedef int (*set_states_f)(void*, const double*, size_t) noexcept nogil
ctypedef int (*get_buffer_f)(void*, double*, size_t) noexcept nogil
ctypedef int (*reals_f)(void*, const unsigned int*, size_t, double*) noexcept nogil
ctypedef int (*counted_reals_f)(void*, const unsigned int*, size_t, double*,
                                size_t) noexcept nogil


cdef class FmuReals:
    cdef void* get_reals_fn
    cdef void* set_reals_fn
    cdef void* component
    cdef bint counts_values
    cdef tuple names
    cdef object error
    cdef int get_reals(self, const unsigned int* vrs, size_t n, double* out) except -1
    cdef int set_reals(self, const unsigned int* vrs, size_t n,
                       const double* values) except -1


cdef class FmuCalls(FmuReals):
    cdef set_time_f set_time_fn
    cdef set_states_f set_states_fn
    cdef get_buffer_f derivatives_fn
    cdef get_buffer_f indicators_fn
    cdef readonly Py_ssize_t nx
    cdef readonly Py_ssize_t nz
    cdef tuple call_names  # of FUNCTIONS, for errors
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
    cdef int get_derivatives(self, double* out) except -1
    cdef int get_indicators(self, double* out) except -1


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
