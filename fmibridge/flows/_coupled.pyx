"""The right-hand side of a coupled Model Exchange system, as one `Function`.

dx/dt at (t, x) of components joined by connections (`coupled.CoupledModelExchange`):

1. every component whose ports are read is put at (t, its part of x)
   (`Part.at`: an FMU's setTime and setContinuousStates, a native block's
   point);
2. the connections are propagated in the order `coupling.Coupling` computed: a
   `Read` copies outputs of a component into the coupling's output values, a
   `Write` sets inputs from them, a `Solve` solves an algebraic loop
   (`loops.solve_loop`, in Python);
3. each component's derivatives, with its inputs as set, come from its own
   `Function` (an FMU's is its flow's `rhs_function`, a compiled flow's is
   called at its C address, a native block's called back in Python), written
   to its part of dx/dt.

Every RK stage of every method evaluates this (`Tableau.step`), so the
connections are propagated at each stage: one vector field, no co-simulation
error. An FMU's ports are read and written through its C functions (fmi2GetReal
and fmi2SetReal, or fmi3GetFloat64 and fmi3SetFloat64, which take the number of
values once more); a failed call raises the FMUError that names the function,
as the FMU's Python calls do.
"""

from ..core._functions cimport Function, new_array

import numpy as np

from .fmi import _status_error

cdef enum:
    FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures

ctypedef int (*set_time_fn)(void*, double) noexcept nogil
ctypedef int (*set_states_fn)(void*, const double*, size_t) noexcept nogil
ctypedef int (*reals2_fn)(void*, const unsigned int*, size_t, double*) noexcept nogil
ctypedef int (*reals3_fn)(void*, const unsigned int*, size_t, double*,
                          size_t) noexcept nogil


cdef class Part:
    """One component as the coupled right-hand side drives it: its states are
    x[start:start + n], its dx/dt the Function `derivatives` (with the inputs
    as set), and `at(t, x)` puts it at its part of the state."""

    cdef readonly Py_ssize_t start, n
    cdef readonly Function derivatives

    def __init__(self, Py_ssize_t start, Function derivatives):
        self.start, self.n, self.derivatives = start, derivatives.n_in, derivatives

    cdef int at(self, double t, const double* x) except -1:
        return 0

    cdef int release(self) except -1:
        """Called after each evaluation (an FMU drops its cached time)."""
        return 0


cdef class PythonPart(Part):
    """A component put at (t, x) in Python (`Component.at`), where its outputs
    are read; a component whose outputs nothing reads is not called."""

    cdef object put_at

    def __init__(self, Py_ssize_t start, Function derivatives, put_at):
        super().__init__(start, derivatives)
        self.put_at = put_at

    cdef int at(self, double t, const double* x) except -1:
        if self.put_at is not None:
            self.put_at(t, new_array(x, self.n))
        return 0


cdef class FmuPart(Part):
    """A Model Exchange FMU, put at (t, x) by setTime and setContinuousStates at
    their C addresses where its ports are read (`placed`); its derivatives
    Function sets them itself."""

    cdef object instance
    cdef bint placed
    cdef void* component
    cdef set_time_fn set_time
    cdef set_states_fn set_states

    def __init__(self, Py_ssize_t start, Function derivatives, instance,
                 bint placed):
        super().__init__(start, derivatives)
        set_time, set_states, _, _, handle = instance.c_calls.tolist()
        self.instance, self.placed = instance, placed
        self.component = <void*> <size_t> handle
        self.set_time = <set_time_fn> <size_t> set_time
        self.set_states = <set_states_fn> <size_t> set_states

    cdef int at(self, double t, const double* x) except -1:
        cdef int status
        if not self.placed:
            return 0
        status = self.set_time(self.component, t)
        if status > FMI_WARNING:
            raise _status_error(self.instance, self.instance._c_names[0], status)
        status = self.set_states(self.component, x, <size_t> self.n)
        if status > FMI_WARNING:
            raise _status_error(self.instance, self.instance._c_names[1], status)
        return 0

    cdef int release(self) except -1:
        if self.placed:  # the FMU's time was set here, behind the instance's cache
            self.instance.forget_time()
        return 0


cdef class Ports:
    """A fixed list of one component's ports, read (`get`) or set (`put`)."""

    cdef readonly Py_ssize_t n

    cdef int get(self, double* values) except -1:
        raise NotImplementedError(type(self).__name__)

    cdef int put(self, const double* values) except -1:
        raise NotImplementedError(type(self).__name__)


cdef class PythonPorts(Ports):
    """Ports through a component's Python reader or writer (`Component.reader`,
    `Component.writer`)."""

    cdef object reader, writer

    def __init__(self, Py_ssize_t n, reader=None, writer=None):
        self.n, self.reader, self.writer = n, reader, writer

    cdef int get(self, double* values) except -1:
        cdef double[::1] read = np.ascontiguousarray(self.reader(), dtype=float)
        cdef Py_ssize_t i
        for i in range(self.n):
            values[i] = read[i]
        return 0

    cdef int put(self, const double* values) except -1:
        self.writer(new_array(values, self.n))
        return 0


cdef class FmuPorts(Ports):
    """Real variables of an FMU, got and set at the C addresses of its
    get/set functions (FMI 3's take the number of values once more)."""

    cdef object instance
    cdef void* component
    cdef void* get_fn
    cdef void* set_fn
    cdef bint counted
    cdef unsigned int[::1] vrs
    cdef double[::1] buffer

    def __init__(self, instance, vrs):
        self.instance = instance
        self.n = len(vrs)
        self.vrs = np.array(list(vrs) or [0], dtype=np.uintc)
        self.buffer = np.zeros(max(self.n, 1))
        get_fn, set_fn, counted = instance.c_reals.tolist()
        self.component = <void*> <size_t> instance.c_calls.tolist()[4]
        self.get_fn, self.set_fn = <void*> <size_t> get_fn, <void*> <size_t> set_fn
        self.counted = counted != 0

    cdef int _call(self, void* fn, double* values, Py_ssize_t which) except -1:
        cdef int status
        cdef size_t n = self.n
        if self.counted:
            status = (<reals3_fn> fn)(self.component, &self.vrs[0], n, values, n)
        else:
            status = (<reals2_fn> fn)(self.component, &self.vrs[0], n, values)
        if status > FMI_WARNING:
            raise _status_error(
                self.instance, self.instance.real_functions[which], status
            )
        return 0

    cdef int get(self, double* values) except -1:
        return self._call(self.get_fn, values, 0) if self.n else 0

    cdef int put(self, const double* values) except -1:
        cdef Py_ssize_t i
        if self.n:
            for i in range(self.n):
                self.buffer[i] = values[i]
            self._call(self.set_fn, &self.buffer[0], 1)
        return 0


cdef class Step:
    """One step of the coupling's plan at a point (see the module docstring)."""

    cdef int run(self, double t, double* outputs) except -1:
        raise NotImplementedError(type(self).__name__)


cdef class Read(Step):
    """outputs[slots] = the ports' values."""

    cdef Ports ports
    cdef Py_ssize_t[::1] slots
    cdef double[::1] values

    def __init__(self, Ports ports, slots):
        self.ports = ports
        self.slots = np.asarray(slots, dtype=np.intp)
        self.values = np.zeros(max(ports.n, 1))

    cdef int run(self, double t, double* outputs) except -1:
        cdef Py_ssize_t i
        self.ports.get(&self.values[0])
        for i in range(self.ports.n):
            outputs[self.slots[i]] = self.values[i]
        return 0


cdef class Write(Step):
    """The ports set to outputs[slots]."""

    cdef Ports ports
    cdef Py_ssize_t[::1] slots
    cdef double[::1] values

    def __init__(self, Ports ports, slots):
        self.ports = ports
        self.slots = np.asarray(slots, dtype=np.intp)
        self.values = np.zeros(max(ports.n, 1))

    cdef int run(self, double t, double* outputs) except -1:
        cdef Py_ssize_t i
        for i in range(self.ports.n):
            self.values[i] = outputs[self.slots[i]]
        return self.ports.put(&self.values[0])


cdef class Solve(Step):
    """An algebraic loop, solved in Python (`coupling._Loop.solve`): it reads
    and writes the same output values."""

    cdef object loop

    def __init__(self, loop):
        self.loop = loop

    cdef int run(self, double t, double* outputs) except -1:
        self.loop.solve(t)
        return 0


cdef class CoupledRhs(Function):
    """dx/dt of the coupled system (see the module docstring).

    Parameters
    ----------
    parts : sequence of Part
        The components, in the order of their states in x.
    steps : sequence of Step
        The coupling's plan.
    outputs : ndarray
        The coupling's output values (`Coupling.outputs`), shared with Python.
    what : str
        The flow, as errors name it.
    """

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
        try:
            for part in self.parts:
                part.at(t, x + part.start)
            for step in self.steps:
                step.run(t, outputs)
            for part in self.parts:
                part.derivatives.call(t, x + part.start, out + part.start)
        finally:
            for part in self.parts:
                part.release()
        return 0
