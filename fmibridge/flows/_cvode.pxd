from ..core._functions cimport Function
from ._stepper cimport AdaptiveStepper


cdef class CvodeStepper(AdaptiveStepper):
    cdef Function jacobian
    cdef double t
    cdef double t_start
    cdef str message
    cdef double t_not_finite
    cdef double[::1] atols
    cdef void* mem
    cdef void* context
    cdef void* y
    cdef void* scratch
    cdef void* tolerances
    cdef void* matrix
    cdef void* solver
    cdef double* y_data
    cdef double* scratch_data
    cdef bint is_started
    cdef object error
    cdef dict totals
    cdef long n_restarts
    cdef long n_checks
    cdef str jacobian_note
    cdef bint drop_jacobian
    cdef double[::1] check_x
    cdef double[::1] check_f
    cdef double[::1] check_j
    cdef double[::1] end
    cdef long n_stalled
    cdef bint has_warned

    cdef int restart(self, double t, const double* x) except -1
    cdef int one_step(self, double t_stop, double* x) except -100
    cdef int check_jacobian(self, double t, const double* x, const double* f,
                            double* out) except -1
    cdef long failures(self) noexcept
    cdef bint continues(self, double t, const double* x) except -1
