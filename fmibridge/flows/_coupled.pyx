"""The right-hand side of a coupled Model Exchange system, as one `Function`.

dx/dt at (t, x) (`coupled.CoupledModelExchange`): every component whose ports
are read is put at (t, its part of x), the connections propagated in the order
`coupling.Coupling` computed (`Step`s), each component's derivatives taken from
its own `Function`. Every RK stage evaluates this: no co-simulation error.
"""

from ..core._functions cimport Function, new_array
from ._fmi cimport Ports
from ._fmu cimport FmuCalls

import numpy as np


cdef class Part:
    """One component as the coupled rhs drives it: states x[start:start + n],
    put at (t, x) by `put_at` in Python (None: not put, its outputs unread)."""

    cdef readonly Py_ssize_t start, n
    cdef readonly Function derivatives
    cdef object put_at

    def __init__(self, Py_ssize_t start, Function derivatives, put_at=None):
        self.start, self.n, self.derivatives = start, derivatives.n_in, derivatives
        self.put_at = put_at

    cdef int at(self, double t, const double* x) except -1:
        if self.put_at is not None:
            self.put_at(t, new_array(x, self.n))
        return 0


cdef class FmuPart(Part):
    """A Model Exchange FMU put at (t, x) through its calls where read."""

    cdef FmuCalls calls
    cdef bint placed

    def __init__(self, Py_ssize_t start, Function derivatives, FmuCalls calls,
                 bint placed):
        super().__init__(start, derivatives)
        self.calls, self.placed = calls, placed

    cdef int at(self, double t, const double* x) except -1:
        if self.placed:
            self.calls.set_point(t, x if self.n else &self.calls.x[0])
        return 0


cdef enum:
    _READ = 0
    _WRITE = 1
    _SOLVE = 2


cdef class Step:
    """One step of the coupling's plan at a point: outputs[slots] = the ports'
    values ("read"), the ports set to outputs[slots] ("write"), or an algebraic
    loop solved in Python ("loop", `coupling._Loop.solve`)."""

    cdef int kind
    cdef Ports ports
    cdef object loop
    cdef Py_ssize_t[::1] slots
    cdef double[::1] values

    def __init__(self, str kind, target, slots=()):
        self.kind = ("read", "write", "loop").index(kind)
        if self.kind == _SOLVE:
            self.loop = target
        else:
            self.ports = target
        self.slots = np.asarray(slots, dtype=np.intp)
        self.values = np.zeros(max(len(self.slots), 1))

    cdef int run(self, double t, double* outputs) except -1:
        cdef Py_ssize_t i
        if self.kind == _SOLVE:
            self.loop.solve(t)
        elif self.kind == _READ:
            self.ports.read(&self.values[0])
            for i in range(self.ports.n):
                outputs[self.slots[i]] = self.values[i]
        else:
            for i in range(self.ports.n):
                self.values[i] = outputs[self.slots[i]]
            self.ports.write(&self.values[0])
        return 0


def propagate(steps, double t, double[::1] outputs):
    """Run the coupling's `steps` at t, the connected outputs' values in
    `outputs` (`coupling.Coupling.evaluate`; `CoupledRhs` runs them itself)."""
    cdef Step step
    for step in steps:
        step.run(t, &outputs[0] if outputs.shape[0] else NULL)


cdef class CoupledRhs(Function):
    """dx/dt of the coupled system (module docstring)."""

    cdef tuple parts
    cdef tuple steps
    cdef double[::1] outputs

    def __init__(self, parts, steps, outputs, str what):
        parts = tuple(parts)
        n = sum((<Part> p).n for p in parts)
        super().__init__(n, n, what)
        self.parts, self.steps, self.outputs = parts, tuple(steps), outputs

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Part part
        cdef Step step
        cdef double* outputs = &self.outputs[0] if self.outputs.shape[0] else NULL
        for part in self.parts:
            part.at(t, x + part.start)
        for step in self.steps:
            step.run(t, outputs)
        for part in self.parts:
            part.derivatives.call(t, x + part.start, out + part.start)
        return 0
