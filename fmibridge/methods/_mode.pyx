"""A mode as the compiled loops take it (`compiled_mode`): its flow's stepper,
its guards as one `Function`, their rates, the block of samples for the
Recorder, and the search for a guard that dips beyond its surface in a step.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.6 (dense output, cubic
Hermite interpolation: `dip`).
"""

import numpy as np

from ..core._functions cimport Function, new_array
from ..core.events cimport dip_sign, dips, hermite_minimum

from ..core.events import SIDES
from ..core.records import COMPILED_FORMS, TIME_RTOL

# A guard's rate along the flow is a forward difference over RATE_STEP h: about
# the square root of float64's epsilon (truncation against round-off).
RATE_STEP = 2.0**-26
# At an impact (`impact_rates`): central differences over RATE_DELTA max(|x_k|, 1)
# (about the cube root of the epsilon) dotted with dx/dt, which see a body creeping
# below x's last place where a difference along the flow cannot.
RATE_DELTA = 2.0**-17
BLOCK = BLOCK_SIZE
# A step whose guard interpolant misses the guard at its minimum by more than
# COARSE_RTOL of its scale is too coarse for `dip` to trust what it does not see.
COARSE_RTOL = 0.1
cdef double _TIME_RTOL = TIME_RTOL


def compiled_mode(mode, scheme, double h, tolerance=None):
    """Return `mode` as the compiled loops take it (kept in the mode itself)."""
    forms = mode.__dict__.setdefault(COMPILED_FORMS, {})
    key = (scheme.name, h, tolerance)
    found = forms.get(key)
    if found is None:
        found = forms[key] = CompiledMode(mode, scheme, h, tolerance)
    return found


cdef class CompiledMode:
    """The mode's stepper and guards (`compiled_mode`)."""

    def __init__(self, mode, scheme, double h, tolerance=None):
        flow = mode.flow
        self.mode, self.name = mode, mode.name
        self.is_adaptive = tolerance is not None
        self.stepper = (flow.adaptive_stepper(scheme, *tolerance) if self.is_adaptive
                        else flow.stepper(scheme))
        self.n = self.stepper.n
        self.has_rhs = self.stepper.rhs is not None
        self.guards = gathered([e.guard.fn for e in mode.edges], self.n,
                               f"the guards of mode {mode.name!r}")
        self.m = self.guards.n_out
        self.sides = np.array([SIDES[e.guard.direction] for e in mode.edges],
                              dtype=float)
        self.h, self.d = h, RATE_STEP * h
        self.resets = tuple(reset_function(e.reset, self.n) if e.has_reset else None
                            for e in mode.edges)
        self.self_loop = tuple(e.target == mode.name for e in mode.edges)
        n, m = max(self.n, 1), max(self.m, 1)
        self.work_after, self.work_slope, self.z = (np.empty(n) for _ in range(3))
        self.work_g, self.work_r, self.g_ahead = (np.empty(m) for _ in range(3))
        self.ts_array = np.empty(BLOCK)
        self.xs_array = np.empty((BLOCK, n))
        self.ts, self.xs = self.ts_array, self.xs_array
        self.work = {}
        # where the mode has no guards: the stepper's recorded outputs, and its
        # flag `observe_row` (the FMU's own events)
        recorded = getattr(self.stepper, "recorded", None) if self.m == 0 else None
        flag = getattr(self.stepper, "observe_row", None) if self.m == 0 else None
        self.has_flag = flag is not None
        if self.has_flag:
            self.observe_now = flag
        self.n_out = 0 if recorded is None else len(recorded)
        if self.n_out:
            self.out_now, self.out_names = recorded, self.stepper.recorded_names
            self.os_array = np.empty((BLOCK, self.n_out))
            self.os = self.os_array

    cdef int evaluate(self, double t, const double* x, double* g) except -1:
        """Write the guards' values at (t, x) to g."""
        if self.m:
            self.guards.call(t, x, g)
        return 0

    cdef int rates(self, double t, const double* x, const double* g, double* slope,
                   double* out) except -1:
        """Write dx/dt to slope and the guards' rates to out (g: their values)."""
        cdef Py_ssize_t i
        self.stepper.slope(t, x, slope)
        for i in range(self.n):
            self.z[i] = x[i] + self.d * slope[i]
        if self.m:
            self.guards.call(t + self.d, &self.z[0], &self.g_ahead[0])
        for i in range(self.m):
            out[i] = (self.g_ahead[i] - g[i]) / self.d
        return 0

    cdef int impact_rates(self, double t, const double* x, double* out) except -1:
        """Write the guards' rates at (t, x) to out: central gradients dotted with
        dx/dt (exact for affine guards, however slowly the state moves)."""
        cdef Py_ssize_t k, i
        cdef double delta
        cdef Py_ssize_t n = max(self.n, 1), m = max(self.m, 1)
        cdef double[::1] slope = np.empty(n), z = np.empty(n)
        cdef double[::1] ahead = np.empty(m), back = np.empty(m)
        self.stepper.slope(t, x, &slope[0])
        for i in range(self.m):
            out[i] = 0.0
        for k in range(self.n):
            z[k] = x[k]
        for k in range(self.n):
            if slope[k] == 0.0:
                continue
            delta = RATE_DELTA * max(abs(x[k]), 1.0)
            z[k] = x[k] + delta
            self.evaluate(t, &z[0], &ahead[0])
            z[k] = x[k] - delta
            self.evaluate(t, &z[0], &back[0])
            z[k] = x[k]
            for i in range(self.m):
                out[i] += (ahead[i] - back[i]) / (2.0 * delta) * slope[k]
        self.evaluate(t + self.d, x, &ahead[0])
        self.evaluate(t, x, &back[0])
        for i in range(self.m):
            out[i] += (ahead[i] - back[i]) / self.d
        return 0

    cdef int keep(self, double t, const double* x, object log) except -1:
        """Keep a sample for the Recorder: in blocks, or at once to a journal."""
        cdef Py_ssize_t i
        if self.has_flag and self.observe_now[0]:  # the flow's events in the step
            self.observe_now[0] = 0
            self.flush(log)
            log.samples(np.array([t]), new_array(x, self.n).reshape(1, -1), self.name)
            return 0
        if self.n_block == BLOCK:
            self.flush(log)
        if self.n_block == 0:  # once per block: the run's Recorder may change
            self.write_through = log.is_journaled
        self.ts[self.n_block] = t
        for i in range(self.n):
            self.xs[self.n_block, i] = x[i]
        for i in range(self.n_out):
            self.os[self.n_block, i] = self.out_now[i]
        self.n_block += 1
        if self.write_through:
            self.flush(log)
        return 0

    cdef int flush(self, object log) except -1:
        """Hand the kept samples to the Recorder."""
        cdef Py_ssize_t k = self.n_block
        if not k:
            return 0
        self.n_block = 0
        ts, xs = self.ts_array[:k].copy(), self.xs_array[:k, :self.n].copy()
        if self.n_out:  # read where each sample was taken: no `observe`
            outputs = {name: self.os_array[:k, j].copy()
                       for j, name in enumerate(self.out_names)}
            log.read_samples(ts, xs, self.name, outputs)
        else:
            log.samples(ts, xs, self.name)
        return 0

    cdef bint may_dip(self, const double* g0, const double* r0, bint has_slope,
                      const double* g1, const double* r1) noexcept:
        """False where `dip` would find nothing in the step from g0 to g1."""
        cdef Py_ssize_t i
        cdef double s
        for i in range(self.m):
            s = dip_sign(self.sides[i], g0[i], g1[i])
            if s * r1[i] > 0.0:
                if not has_slope or dips(s, g0[i], r0[i], g1[i], r1[i]):
                    return True
        return False

    cdef bint dip(self, double t, const double* x, const double* g0, double* r0,
                  double* slope, bint* has_slope, double hs, const double* g1,
                  const double* r1, double* sigma, double* z, double* g_z,
                  object method, object log) except -1:
        """True for a guard that dips beyond its surface and back in the step of hs
        (a grazing impact), with sigma, z and g_z at the Hermite minimum."""
        cdef Py_ssize_t i, best = -1
        cdef double s, u, p, best_u = 0.0, best_p = 0.0, best_s = 0.0, scale, miss
        cdef bint receding = False
        for i in range(self.m):
            if dip_sign(self.sides[i], g0[i], g1[i]) * r1[i] > 0.0:
                receding = True
        if not receding:
            return False
        if not has_slope[0]:
            self.rates(t, x, g0, slope, r0)
            has_slope[0] = True
        for i in range(self.m):
            s = dip_sign(self.sides[i], g0[i], g1[i])
            if s * r1[i] > 0.0 and dips(s, g0[i], r0[i], g1[i], r1[i]):
                u = hermite_minimum(s, g0[i], r0[i], g1[i], r1[i], hs, &p)
                if best < 0 or p < best_p:
                    best, best_u, best_p, best_s = i, u, p, s
        if best < 0 or not 0.0 < best_u < 1.0:
            return False
        sigma[0] = best_u * hs
        self.stepper.advance(t, x, sigma[0], slope, z)
        self.evaluate(t + sigma[0], z, g_z)
        scale = max(abs(g0[best]), abs(g1[best]), abs(g_z[best]))
        miss = abs(best_p - best_s * g_z[best])
        if miss > COARSE_RTOL * scale:  # the interpolant misses the guard there
            method._coarse(self.mode.edges[best], t, miss / scale, log)
        return True

    def callbacks(self):
        """Name the Python functions of the mode's flow, guards and resets."""
        from ..core._functions import PythonScalars, PythonVector

        names = []
        rhs = self.stepper.rhs
        if rhs is None:  # a stepper that calls no Python on its steps says so
            calls = getattr(self.stepper, "callbacks", None)
            names.extend(calls() if calls is not None else
                         [f"{type(self.mode.flow).__name__}.advance"])
        elif isinstance(rhs, PythonVector):
            names.append(rhs.what)
        for part in self.guards.parts:
            if isinstance(part, (PythonScalars, PythonVector)):
                names.append(part.what)
        for edge, reset in zip(self.mode.edges, self.resets):
            if reset is not None and not isinstance(reset, Function):
                names.append(f"the reset of edge {edge.name!r}")
        return names

    def guard_rates(self, double t, x):
        """The guards' rates at (t, x) (`impact_rates`); None without dx/dt."""
        if not self.has_rhs:
            return None
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        cdef double[::1] r = np.empty(max(self.m, 1))
        if self.n == 0:
            return [0.0] * self.m
        self.impact_rates(t, &xs[0], &r[0])
        return list(r[:self.m])


cpdef double reach_tol(double t_end, double h) noexcept:
    """How close to t_end a time counts as t_end: TIME_RTOL of h (or |t_end|)."""
    if h > 1.0 and h > abs(t_end):
        h = max(abs(t_end), 1.0)
    return _TIME_RTOL * h


cpdef bint reached(double t, double t_end, double h) noexcept:
    """True if t is t_end up to round-off (`reach_tol`)."""
    return t >= t_end - reach_tol(t_end, h)


def reset_function(reset, Py_ssize_t n):
    """An edge's reset: a Function where compiled, else the Python callable."""
    from ..flows.compiled import c_function, is_compiled

    if is_compiled(reset):
        return c_function(reset, "reset", n)
    return reset


def gathered(fns, Py_ssize_t n, str what):
    """Guard functions as one `Gathered` Function of (t, x): compiled forms
    (`flows.compiled.engine_entry`) as entries of shared Functions, the rest Python."""
    from ..core._functions import Gathered, PythonScalars

    if not fns:  # a mode without guards: none to look up among compiled forms
        return Gathered([], [], [], n, what)
    from ..flows.compiled import engine_entry

    part_of, entry_of, python = [], [], []
    found = {}  # id of a compiled Function: (its part, the Function)
    for fn in fns:
        entry = engine_entry(fn, n)
        if entry is None:
            python.append(fn)
            part_of.append(-1)
            entry_of.append(len(python) - 1)
        else:
            part_of.append(found.setdefault(id(entry[0]), (len(found), entry[0]))[0])
            entry_of.append(entry[1])
    parts = [function for _, function in found.values()]
    if python:
        k = len(parts)
        parts.append(PythonScalars(python, n, what))
        part_of = [k if p < 0 else p for p in part_of]
    return Gathered(parts, part_of, entry_of, n, what)
