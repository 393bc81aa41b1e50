# A frictionless unilateral contact's numerics (Or and Ames, eqs. 4-8, R* of
# Sec. V) on its primitives given as Functions.

from ..core._functions cimport Function
from ..core._rk cimport Tableau
from ..flows._stepper cimport Stepper


cdef class ContactFunctions:
    cdef readonly Py_ssize_t n, nq
    cdef readonly double restitution
    cdef readonly str name
    cdef bint projected
    cdef readonly Function gap, gradient, force, hessian, rhs_function, rate_function
    cdef Py_ssize_t[::1] iq, iv
    # scratch: the force map's input [x, lam] and values at lam = 0 and 1, dh,
    # H, and the states and gradients of the Hessian's central differences
    cdef double[::1] z, f0, f1, grad, hess, ahead, behind, dh_ahead, dh_behind, one

    cdef double gap_at(self, double t, const double* x) except? -1
    cdef double rate_at(self, double t, const double* x) except? -1
    cdef double curvature_at(self, double t, const double* x) except? -1
    cdef int free_at(self, double t, const double* x, double lam,
                     double* out) except -1
    cdef double hddot_at(self, double t, const double* x) except? -1
    cdef double along_at(self, double t, const double* x) except? -1
    cdef double constrained_at(self, double t, const double* x,
                               double* dx) except? -1
    cdef int project_at(self, double t, const double* x, double* out) except -1
    cdef int impact_at(self, double t, const double* x, double* out) except -1
    cdef double[::1] _state(self, x)


cdef class ProjectedStepper(Stepper):
    cdef readonly ContactFunctions contact
    cdef Tableau tableau
    cdef double[::1] work, y
