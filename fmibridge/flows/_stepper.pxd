from ..core._functions cimport Function
from ..core._rk cimport Tableau


cdef class Stepper:
    cdef readonly Py_ssize_t n
    cdef readonly Function rhs
    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1


cdef class FieldStepper(Stepper):
    cdef Tableau tableau
    cdef double[::1] work


cdef class FlowStepper(Stepper):
    cdef object flow
    cdef object scheme
