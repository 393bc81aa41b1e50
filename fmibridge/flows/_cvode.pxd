from ..core._functions cimport Function


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
    cdef public object state
    cdef readonly long n_checks
    cdef readonly str jacobian_note
    cdef bint drop_jacobian
    cdef double[::1] check_x
    cdef double[::1] check_f
    cdef double[::1] check_j

    cdef int restart(self, double t, const double* x) except -1
    cdef int step(self, double t_stop, double* x) except -100
    cdef int dense(self, double t, double* out) except -1
    cdef int slope(self, double t, double* out) except -1
    cdef int take_counts(self) except -1
    cdef long failures(self) noexcept
    cdef int check_jacobian(self, double t, const double* x, const double* f,
                            double* out) except -1


cdef class CvodeStepper:
    cdef readonly Cvode cvode
    cdef readonly Function rhs
    cdef readonly Py_ssize_t n
    cdef readonly double rtol
    cdef public double h_next
    cdef public long n_rejected
    cdef readonly double t0
    cdef readonly double h_step
    cdef readonly bint has_step
    cdef double[::1] x0
    cdef double[::1] x1
    cdef double[::1] probe
    cdef double[::1] point
    cdef double[::1] end
    cdef long n_stalled

    cdef double step(self, double t, const double* x, double h_max, const double* k1,
                     double* out) except? -1.0
    cdef int dense(self, double t, double* out) except -1
    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1
    cdef int slope(self, double t, const double* x, double* out) except -1
    cdef bint continues(self, double t, const double* x) except -1
    cdef int anchor(self, double t, const double* x, double h,
                    const double* x1) except -1
    cdef bint on_curve(self, double t, const double* x) except -1
