"""A mode as the compiled loops take it: its flow's stepper, its guards as one
`Function`, their directions, and the guards' rates along the flow.

`compiled_mode(mode, scheme, h)` builds it once per mode, scheme and step (kept
while the mode lives). A guard's rate dg/dt is a forward difference along the
flow over d = RATE_STEP h: (g(t + d, x + d f) - g) / d (exact for affine guards);
a flow without dx/dt (Co-Simulation) has no rates.
"""

import weakref

import numpy as np

from ..core._functions cimport Function, new_array
from ..flows._stepper cimport Stepper

from ..core.events import SIDES

# A guard's rate comes from a forward difference along the flow over RATE_STEP h:
# about the square root of the float64 epsilon, which balances the difference's
# truncation against round-off (exact for affine guards).
RATE_STEP = 2.0**-26
# Accepted samples gathered before they are handed to the Recorder in one block.
BLOCK = 4096

_MODES = {}


def compiled_mode(mode, scheme, double h):
    """Return `mode` as the compiled loops take it, for this scheme and step."""
    key = (id(mode), scheme.name, h)
    found = _MODES.get(key)
    if found is None:
        found = _MODES[key] = CompiledMode(mode, scheme, h)
        weakref.finalize(mode, _MODES.pop, key, None)
    return found


cdef class CompiledMode:
    """The mode's stepper and guards (see the module docstring)."""

    def __init__(self, mode, scheme, double h):
        flow = mode.flow
        self.mode, self.name = mode, mode.name
        self.stepper = flow.stepper(scheme)
        self.n = self.stepper.n
        self.has_rhs = self.stepper.rhs is not None
        self.guards = guard_function(mode, self.n)
        self.m = self.guards.n_out
        self.sides = np.array([SIDES[e.guard.direction] for e in mode.edges], dtype=float)
        self.d = RATE_STEP * h
        self.z = np.empty(max(self.n, 1))
        self.g_ahead = np.empty(max(self.m, 1))
        self.ts = np.empty(BLOCK)
        self.xs = np.empty((BLOCK, max(self.n, 1)))
        self.n_block = 0

    cdef int evaluate(self, double t, const double* x, double* g) except -1:
        """Write the guards' values at (t, x) to g."""
        if self.m:
            self.guards.call(t, x, g)
        return 0

    cdef int rates(self, double t, const double* x, const double* g, double* slope,
                   double* out) except -1:
        """Write dx/dt at (t, x) to slope and the guards' rates there to out (g
        their values); the flow must have dx/dt."""
        cdef Py_ssize_t i
        self.stepper.rhs.call(t, x, slope)
        for i in range(self.n):
            self.z[i] = x[i] + self.d * slope[i]
        if self.m:
            self.guards.call(t + self.d, &self.z[0], &self.g_ahead[0])
        for i in range(self.m):
            out[i] = (self.g_ahead[i] - g[i]) / self.d
        return 0

    cdef int keep(self, double t, const double* x, object log) except -1:
        """Keep an accepted sample for the Recorder (handed over by `flush`)."""
        cdef Py_ssize_t i
        if self.n_block == BLOCK:
            self.flush(log)
        self.ts[self.n_block] = t
        for i in range(self.n):
            self.xs[self.n_block, i] = x[i]
        self.n_block += 1
        return 0

    cdef int flush(self, object log) except -1:
        """Hand the kept samples to the Recorder."""
        cdef Py_ssize_t k = self.n_block
        if k:
            self.n_block = 0
            log.samples(np.array(self.ts[:k]), np.array(self.xs[:k, :self.n]), self.name)
        return 0

    def values(self, double t, x):
        """The guards' values at (t, x), from Python."""
        return self.guards(t, x)


def guard_function(mode, Py_ssize_t n):
    """The mode's guards as one Function of (t, x) (`gathered`)."""
    what = f"the guards of mode {mode.name!r}"
    return gathered([edge.guard.fn for edge in mode.edges], n, what)


def gathered(fns, Py_ssize_t n, str what):
    """Guard functions as one Function of (t, x): each source evaluated once per
    point (`Gathered`). A guard function may have a compiled form
    (`flows.compiled.engine_entry`: a numba function, an adapter's expression,
    an FMU's indicator, a VectorGuard's entry), the entry `index` of a
    Function's values (a vector guard's entries share one Function); the others
    are called in Python, one call per guard."""
    from ..core._functions import Gathered, PythonScalars
    from ..flows.compiled import engine_entry

    parts, part_of, entry_of, python = [], [], [], []
    where = {}
    for fn in fns:
        entry = engine_entry(fn, n)
        if entry is None:
            python.append(fn)
            part_of.append(-1)
            entry_of.append(len(python) - 1)
            continue
        function, index = entry
        k = where.get(id(function))
        if k is None:
            k = where[id(function)] = len(parts)
            parts.append(function)
        part_of.append(k)
        entry_of.append(index)
    if python:
        k = len(parts)
        parts.append(PythonScalars(python, n, what))
        part_of = [k if p < 0 else p for p in part_of]
    return Gathered(parts, part_of, entry_of, n, what)
