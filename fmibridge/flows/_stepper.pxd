from ..core._functions cimport Function


cdef int copy_out(object values, double* out, Py_ssize_t n) except -1


cdef class Stepper:
    cdef readonly Py_ssize_t n
    cdef readonly Function rhs
    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1
    cdef double step(self, double t, const double* x, double h, const double* k1,
                     double* out) except? -1.0
    cdef bint estimate(self, double h, const double* f1, double* err) except -1
    cdef int slope(self, double t, const double* x, double* out) except -1


cdef class AdaptiveStepper(Stepper):
    cdef readonly double rtol, atol
    cdef public double h_next
    cdef public long n_rejected
    # the end of the span the steps go to (`propose`; -inf: not known)
    cdef readonly double t_end
    # the last accepted step: from (t0, x0) over h_step to x1; valid if has_step
    cdef readonly double t0, h_step
    cdef readonly bint has_step
    cdef double[::1] x0, x1, probe, point
    cdef int dense(self, double t, double* out) except -1
    cdef int anchor(self, double t, const double* x, double h,
                    const double* x1) except -1
    cdef bint on_curve(self, double t, const double* x) except -1
