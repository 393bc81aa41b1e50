"""A Model Exchange FMU's C functions, called directly: its derivatives, event
indicators and outputs as Functions of (t, x) for the compiled loops.

The lower FMI layer (`flows.fmi`) hands over the addresses of the FMU's
setTime, setContinuousStates, getDerivatives, getEventIndicators and get and
set of reals, and its component (`FmuCalls`). FMI 1.0, 2.0 and 3.0 declare the
first four alike; FMI 3.0's get and set of reals take the number of values once
more (`counts_values`). A status above fmiWarning raises the FMUError the lower
layer raises for it (`error`), a non-finite derivative or indicator the
FMUError of the flow; nothing falls back to another path.

Every evaluation at (t, x) sets the point first (`FmuCalls.set_point`): the
flow's continuous inputs at t (`FmuInputs`: constants, adapter expressions of
t run by the stack machine, Python functions u(t) called back), the time
(skipped where the FMU has it already) and the states. The point is kept while
nothing else touches the FMU (the lower layer's `touched`, on each of its
calls), so the guards of one FMU, its indicators and its outputs, cost one set
of FMU calls per point; the indicators are read once per point.
"""

from libc.math cimport NAN, isfinite
from libc.string cimport memcmp, memcpy

import numpy as np

from ..core._functions cimport Function
from ._programs cimport ProgramFunction

from ..core.errors import FmibridgeError, FMUError

FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures
# The functions in the order FmuCalls takes their addresses and names.
FUNCTIONS = ("set_time", "set_states", "derivatives", "indicators", "get_reals",
             "set_reals")  # fmt: skip
cdef int _SET_TIME = 0, _SET_STATES = 1, _DERIVATIVES = 2, _INDICATORS = 3
cdef int _GET_REALS = 4, _SET_REALS = 5


cdef class FmuReals:
    """Get and set of an instance's reals, called directly (Model Exchange or
    Co-Simulation).

    Parameters
    ----------
    component : int
        The instance (fmiComponent, fmi3Instance).
    get_reals, set_reals : int
        The addresses of its get and set of reals.
    counts_values : bool
        True where they take nValues (FMI 3.0).
    names : (str, str)
        Their names, for errors.
    error : callable
        error(name, status) -> the exception of a failed call.
    """

    def __init__(self, size_t component, size_t get_reals, size_t set_reals,
                 bint counts_values, names, error):
        self.component = <void*> component
        self.get_reals_fn, self.set_reals_fn = <void*> get_reals, <void*> set_reals
        self.counts_values, self.names, self.error = counts_values, tuple(names), error

    cdef int get_reals(self, const unsigned int* vrs, size_t n, double* out) except -1:
        cdef int status
        cdef void* c = self.component
        if n == 0:
            return 0
        if self.counts_values:
            status = (<counted_reals_f> self.get_reals_fn)(c, vrs, n, out, n)
        else:
            status = (<reals_f> self.get_reals_fn)(c, vrs, n, out)
        if status > FMI_WARNING:
            raise self.error(self.names[0], status)
        return 0

    cdef int set_reals(self, const unsigned int* vrs, size_t n,
                       const double* values) except -1:
        cdef int status
        cdef void* c = self.component
        cdef double* data = <double*> values
        if n == 0:
            return 0
        if self.counts_values:
            status = (<counted_reals_f> self.set_reals_fn)(c, vrs, n, data, n)
        else:
            status = (<reals_f> self.set_reals_fn)(c, vrs, n, data)
        if status > FMI_WARNING:
            raise self.error(self.names[1], status)
        return 0


cdef class FmuCalls(FmuReals):
    """The C functions of one Model Exchange instance, called directly.

    Parameters
    ----------
    addresses : mapping
        The address of each of FUNCTIONS.
    component : int
        The instance's component (fmiComponent, fmi3Instance).
    counts_values : bool
        True where get and set of reals take nValues (FMI 3.0).
    nx, nz : int
        Continuous states and event indicators.
    names : sequence of str
        The FMU's name of each of FUNCTIONS, for errors.
    error : callable
        error(name, status) -> the exception of a failed call.
    path : str
        The FMU, for the error of a call after `close`.
    """

    def __init__(self, addresses, size_t component, bint counts_values, Py_ssize_t nx,
                 Py_ssize_t nz, names, error, str path):
        self.set_time_fn = <set_time_f> <size_t> addresses["set_time"]
        self.set_states_fn = <set_states_f> <size_t> addresses["set_states"]
        self.derivatives_fn = <get_buffer_f> <size_t> addresses["derivatives"]
        self.indicators_fn = <get_buffer_f> <size_t> addresses["indicators"]
        FmuReals.__init__(
            self, component, addresses["get_reals"], addresses["set_reals"],
            counts_values, (names[_GET_REALS], names[_SET_REALS]), error)
        self.nx, self.nz, self.path = nx, nz, path
        self.call_names = tuple(names)
        self.is_closed = False
        self.inputs = None
        self.t_set = NAN
        self.x, self.x_at = np.zeros(max(nx, 1)), np.zeros(max(nx, 1))
        self.at_point, self.point_id = False, 0

    # -- the point --------------------------------------------------------------

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
        cdef int status
        self.check_open()
        if t != self.t_set:  # RK stages and guards share times (c = 1/2, 1/2; t + h)
            status = self.set_time_fn(self.component, t)
            if status > FMI_WARNING:
                raise self.error(self.call_names[_SET_TIME], status)
            self.t_set = t
        if self.nx:
            memcpy(&self.x[0], x, self.nx * sizeof(double))
        status = self.set_states_fn(self.component, &self.x[0], self.nx)
        if status > FMI_WARNING:
            raise self.error(self.call_names[_SET_STATES], status)
        return 0

    # -- reads and writes at the point --------------------------------------------

    cdef int get_derivatives(self, double* out) except -1:
        cdef int status = self.derivatives_fn(self.component, out, self.nx)
        if status > FMI_WARNING:
            raise self.error(self.call_names[_DERIVATIVES], status)
        return 0

    cdef int get_indicators(self, double* out) except -1:
        cdef int status = self.indicators_fn(self.component, out, self.nz)
        if status > FMI_WARNING:
            raise self.error(self.call_names[_INDICATORS], status)
        return 0

    # -- from Python: the lower layer's calls ---------------------------------------

    def set_time_and_states(self, double t, x):
        """Set the time (unless the FMU has it) and the states x (no inputs)."""
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        if xs.shape[0] != self.nx:
            raise ValueError(f"{self.nx} states expected, got {xs.shape[0]}.")
        self.touched()
        self.set_time_and_states_c(t, &xs[0] if self.nx else &self.x[0])

    def derivatives(self, double t, x):
        """Return dx/dt at (t, x) as the FMU holds its inputs now."""
        out = np.empty(max(self.nx, 1))
        cdef double[::1] values = out
        self.set_time_and_states(t, x)
        self.get_derivatives(&values[0])
        return out[: self.nx]

    def event_indicators(self, double t, x):
        """Return the event indicators at (t, x) as the FMU holds its inputs now."""
        out = np.empty(max(self.nz, 1))
        cdef double[::1] values = out
        self.set_time_and_states(t, x)
        self.get_indicators(&values[0])
        return out[: self.nz]

    def set_inputs(self, double t):
        """Set the flow's continuous inputs at t."""
        self.check_open()
        if self.inputs is not None:
            self.inputs.set(t, self)
        self.touched()


cdef class FmuInputs:
    """A flow's continuous real inputs, set at every point.

    Parameters
    ----------
    vrs : sequence of int
        The scalar real inputs set through the C function (Real, Float64).
    sources : sequence
        Each one's value: a number, a `Function` of t (0 states, 1 value: an
        adapter's expression, run by the stack machine), or a Python u(t)
        called back.
    others : callable or None
        others(t) sets the inputs of other types (Float32, arrays), in Python.
    """

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
            calls.set_reals(&self.vrs[0], n, &self.values[0])
        if self.others is not None:
            self.others(t)
        return 0


def check_finite(values, str what, str path, double t):
    """Return `values` (what the FMU returned from `what` at t), or raise the
    FMUError that names the first non-finite one's call, time and values."""
    cdef double[::1] v = np.ascontiguousarray(values, dtype=float).reshape(-1)
    _check_finite(&v[0] if v.shape[0] else NULL, v.shape[0], what, path, t)
    return values


cdef int _check_finite(const double* values, Py_ssize_t n, str what, str path,
                       double t) except -1:
    """Raise the flow's FMUError if a value the FMU returned is not finite."""
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
        self.calls.get_derivatives(dx)
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
            calls.get_indicators(&self.z[0])
            _check_finite(&self.z[0], self.n_out, "get event indicators", self.path, t)
            self.has_z, self.z_point = True, calls.point_id
        if self.n_out:
            memcpy(out, &self.z[0], self.n_out * sizeof(double))
        return 0


cdef class FmuProgram(ProgramFunction):
    """Programs over V = [t, x, outputs, constants] at (t, x): the FMU's outputs
    `out_vrs` read into V from `first_output` on, its inputs at t."""

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
            self.calls.get_reals(&self.out_vrs[0], n, &self.v[self.first_output])
        return self.run_all(t, out)


cdef double table_value(const double* ts, const double* us, Py_ssize_t n,
                        double t, bint held, bint after) noexcept nogil:
    """An input table's value at t (n rows of times ts, values us):
    interpolated, or held from the row before; at a jump the value before it,
    or with `after` the value after (`input_table.InputTable.value`)."""
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
