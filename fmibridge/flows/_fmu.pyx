"""A Model Exchange FMU's C functions (`flows._fmi.FmiFunctions`), called
directly: its derivatives, event indicators and outputs as Functions of (t, x)
for the compiled loops; a non-finite value raises the flow's FMUError.

Every evaluation at (t, x) sets the point first (`FmuCalls.set_point`): the
continuous inputs at t (`FmuInputs`), the time and the states. The point is
kept while nothing else touches the FMU (`touched`), so the guards, indicators
and outputs of one FMU cost one set of calls per point.
"""

from libc.math cimport NAN, isfinite
from libc.string cimport memcmp, memcpy

import numpy as np

from ..core._functions cimport Function
from ._fmi cimport FmiFunctions
from ._programs cimport ProgramFunction

from ..core.errors import FmibridgeError, FMUError


cdef class FmuCalls:
    """The C functions `fmi` of one Model Exchange instance, called at points."""

    def __init__(self, FmiFunctions fmi, Py_ssize_t nx, Py_ssize_t nz, str path):
        self.fmi, self.nx, self.nz, self.path = fmi, nx, nz, path
        self.is_closed = False
        self.inputs = None
        self.t_set = NAN
        self.x, self.x_at = np.zeros(max(nx, 1)), np.zeros(max(nx, 1))
        self.at_point, self.point_id = False, 0

    def attach(self, FmuInputs inputs):
        """Set the flow's continuous inputs at every point (None: none)."""
        self.inputs = inputs
        self.touched()

    def touched(self):
        """Something else called the FMU: the point must be set again."""
        self.at_point = False
        self.point_id += 1

    def close(self):
        """The instance was freed: every later call raises instead of calling."""
        self.is_closed = True
        self.touched()

    cdef int check_open(self) except -1:
        if self.is_closed:
            raise FmibridgeError(f"{self.path}: the FMU instance was closed.")
        return 0

    def forget_time(self):
        """Something else set the FMU's time: set it again at the next call."""
        self.t_set = NAN
        self.touched()

    def note_time(self, double t):
        """Something else set the FMU's time to t (an FMI 1.0 initialization)."""
        self.t_set = t
        self.touched()

    cdef int set_point(self, double t, const double* x) except -1:
        """Put the FMU at (t, x) with its inputs at t, unless it is there."""
        cdef size_t size = self.nx * sizeof(double)
        if self.at_point and t == self.t_at and memcmp(x, &self.x_at[0], size) == 0:
            return 0
        self.check_open()
        self.at_point = False
        self.point_id += 1
        if self.inputs is not None:
            self.inputs.set(t, self)
        self.set_time_and_states_c(t, x)
        self.t_at, self.at_point = t, True
        if self.nx:
            memcpy(&self.x_at[0], x, size)
        return 0

    cdef int set_time_and_states_c(self, double t, const double* x) except -1:
        """setTime (where t is not the FMU's time already) and setContinuousStates."""
        self.check_open()
        if t != self.t_set:  # RK stages and guards share times (c = 1/2, 1/2; t + h)
            self.fmi.set_time(t)
            self.t_set = t
        if self.nx:
            memcpy(&self.x[0], x, self.nx * sizeof(double))
        return self.fmi.set_states(&self.x[0], self.nx)

    def set_time_and_states(self, double t, x):
        """Set the time (unless the FMU has it) and the states x (no inputs)."""
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        if xs.shape[0] != self.nx:
            raise ValueError(f"{self.nx} states expected, got {xs.shape[0]}.")
        self.touched()
        self.set_time_and_states_c(t, &xs[0] if self.nx else &self.x[0])

    def derivatives(self, double t, x):
        """Return dx/dt at (t, x) as the FMU holds its inputs now."""
        cdef double[::1] out = np.empty(max(self.nx, 1))
        self.set_time_and_states(t, x)
        self.fmi.get_derivatives(&out[0], self.nx)
        return np.asarray(out)[: self.nx]

    def event_indicators(self, double t, x):
        """Return the event indicators at (t, x) as the FMU holds its inputs now."""
        cdef double[::1] out = np.empty(max(self.nz, 1))
        self.set_time_and_states(t, x)
        self.fmi.get_indicators(&out[0], self.nz)
        return np.asarray(out)[: self.nz]

    def set_inputs(self, double t):
        """Set the flow's continuous inputs at t."""
        self.check_open()
        if self.inputs is not None:
            self.inputs.set(t, self)
        self.touched()


cdef class FmuInputs:
    """Continuous inputs set at each point: `vrs` from `sources`, then others(t)."""

    def __init__(self, vrs, sources, others=None):
        self.vrs = np.array(vrs, dtype=np.uint32).reshape(-1)
        self.values = np.zeros(max(len(self.vrs), 1))
        self.sources = tuple(
            float(s) if isinstance(s, int | float) else s for s in sources
        )
        self.others = others

    cdef int set(self, double t, FmuCalls calls) except -1:
        cdef Py_ssize_t k, n = self.vrs.shape[0]
        for k in range(n):
            source = self.sources[k]
            if isinstance(source, float):
                self.values[k] = source
            elif isinstance(source, Function):
                (<Function> source).call(t, NULL, &self.values[k])
            else:
                self.values[k] = float(source(t))
        if n:
            calls.fmi.set_reals(&self.vrs[0], n, &self.values[0])
        if self.others is not None:
            self.others(t)
        return 0


def check_finite(values, str what, str path, double t):
    """Return `values` (the FMU's `what` at t); a non-finite one raises FMUError."""
    cdef double[::1] v = np.ascontiguousarray(values, dtype=float).reshape(-1)
    _check_finite(&v[0] if v.shape[0] else NULL, v.shape[0], what, path, t)
    return values


cdef int _check_finite(const double* values, Py_ssize_t n, str what, str path,
                       double t) except -1:
    cdef Py_ssize_t i
    for i in range(n):
        if not isfinite(values[i]):
            listed = [values[k] for k in range(n)]
            raise FMUError(what, "non-finite values", path, f"at t = {t!r}: {listed}")
    return 0


cdef class FmuRhs(Function):
    """dx/dt = the FMU's derivatives at (t, x), its inputs at t."""

    def __init__(self, FmuCalls calls, str path):
        super().__init__(calls.nx, calls.nx, f"the FMU {path}")
        self.calls, self.path = calls, path
        self.dx = np.zeros(max(calls.nx, 1))

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef double* dx = out if out != NULL else &self.dx[0]
        self.calls.set_point(t, x if x != NULL else &self.calls.x[0])
        self.calls.fmi.get_derivatives(dx, self.n_out)
        return _check_finite(dx, self.n_out, "get derivatives", self.path, t)


cdef class FmuIndicators(Function):
    """The FMU's event indicators at (t, x), its inputs at t: read once per point."""

    def __init__(self, FmuCalls calls, str path):
        super().__init__(calls.nx, calls.nz, f"the event indicators of {path}")
        self.calls, self.path = calls, path
        self.z = np.zeros(max(calls.nz, 1))
        self.has_z = False

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef FmuCalls calls = self.calls
        calls.set_point(t, x if x != NULL else &calls.x[0])
        if not (self.has_z and self.z_point == calls.point_id):
            self.has_z = False
            calls.fmi.get_indicators(&self.z[0], self.n_out)
            _check_finite(&self.z[0], self.n_out, "get event indicators", self.path, t)
            self.has_z, self.z_point = True, calls.point_id
        if self.n_out:
            memcpy(out, &self.z[0], self.n_out * sizeof(double))
        return 0


cdef class FmuProgram(ProgramFunction):
    """Programs over V = [t, x, FMU outputs `out_vrs`, constants] at (t, x)."""

    def __init__(self, FmuCalls calls, programs, failures, v, out_vrs,
                 Py_ssize_t first_output, str what):
        super().__init__(programs, failures, calls.nx, v, what)
        self.calls = calls
        self.out_vrs = np.array(out_vrs, dtype=np.uint32).reshape(-1)
        self.first_output = first_output

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t n = self.out_vrs.shape[0]
        self.calls.set_point(t, x if x != NULL else &self.calls.x[0])
        self.v[0] = t
        if self.n_in:
            memcpy(&self.v[1], x, self.n_in * sizeof(double))
        if n:
            self.calls.fmi.get_reals(&self.out_vrs[0], n, &self.v[self.first_output])
        return self.run_all(t, out)


cdef double table_value(const double* ts, const double* us, Py_ssize_t n,
                        double t, bint held, bint after) noexcept nogil:
    """An input table's value at t (`input_table.InputTable.value`)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    cdef double w
    while lo < hi:  # the first row beyond t (at or beyond t: not `after`)
        mid = (lo + hi) // 2
        if ts[mid] > t or (ts[mid] == t and not after):
            hi = mid
        else:
            lo = mid + 1
    if held or lo == 0 or lo == n:
        return us[lo - 1 if lo > 0 else 0]
    w = (t - ts[lo - 1]) / (ts[lo] - ts[lo - 1])
    return (1.0 - w) * us[lo - 1] + w * us[lo]


def input_value(const double[::1] ts, const double[::1] us, double t, bint held,
                bint after=False):
    """`table_value` of a table of one or more rows, for Python."""
    return table_value(&ts[0], &us[0], ts.shape[0], t, held, after)
