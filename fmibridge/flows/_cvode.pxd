from ..core._functions cimport Function
from ._stepper cimport AdaptiveStepper


cdef class Cvode:
    cdef readonly Function rhs
    cdef readonly Function jacobian
    cdef readonly Py_ssize_t n
    cdef readonly double rtol
    cdef readonly double max_step
    cdef readonly double t
    cdef readonly double t_start
    cdef readonly str message
    cdef readonly double t_not_finite
    cdef double[::1] atol
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
    cdef readonly long n_restarts
    cdef readonly long n_checks
    cdef readonly str jacobian_note
    cdef bint drop_jacobian
    cdef double[::1] check_x
    cdef double[::1] check_f
    cdef double[::1] check_j

    cdef int restart(self, double t, const double* x) except -1
    cdef int step(self, double t_stop, double* x) except -100
    cdef int dense(self, double t, double* out) except -1
    cdef int take_counts(self) except -1
    cdef long failures(self) noexcept
    cdef int check_jacobian(self, double t, const double* x, const double* f,
                            double* out) except -1


cdef class CvodeStepper(AdaptiveStepper):
    cdef readonly Cvode cvode
    cdef double[::1] end
    cdef long n_stalled
    cdef bint has_warned

    cdef bint continues(self, double t, const double* x) except -1
