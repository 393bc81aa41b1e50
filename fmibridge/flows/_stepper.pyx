"""A flow's steps as compiled loops take them: x(t + h) from x(t).

A flow the master integrates (a vector field) steps with a Runge-Kutta tableau on
its right-hand side `rhs`, a compiled `Function` (`FieldStepper`); a flow that
integrates itself (a Co-Simulation FMU) steps through its own `advance`, called
back in Python (`FlowStepper`), and has no `rhs`.
"""

from libc.string cimport memcpy

import numpy as np

from ..core._functions cimport Function, new_array
from ..core._rk cimport Tableau


cdef class Stepper:
    """Advance a flow's state: `advance(t, x, h, k1, out)` writes x(t + h) to out;
    k1 is dx/dt at (t, x) where known (else NULL). `rhs` is dx/dt, or None for a
    flow without it."""

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        raise NotImplementedError(type(self).__name__)


cdef class FieldStepper(Stepper):
    """One step of a Runge-Kutta tableau on the flow's right-hand side."""

    def __init__(self, Function rhs, Tableau tableau):
        self.n, self.rhs, self.tableau = rhs.n_in, rhs, tableau
        self.work = np.empty(max(tableau.work_size(rhs.n_in), 1))

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        return self.tableau.step(self.rhs, t, x, h, k1, out, &self.work[0])


cdef class FlowStepper(Stepper):
    """The flow's own `advance(t, x, h, scheme)`, called in Python."""

    def __init__(self, flow, scheme, Py_ssize_t n):
        self.n, self.rhs, self.flow, self.scheme = n, None, flow, scheme

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        cdef double[::1] y = np.ascontiguousarray(
            self.flow.advance(t, new_array(x, self.n), h, self.scheme), dtype=float
        )
        if self.n:
            memcpy(out, &y[0], self.n * sizeof(double))
        return 0
