"""An FMU instance's C functions as the compiled loops call them, one table per
FMI version, through the function types of the standard's headers (`_fmi.pxd`).

A status above warning raises `error(name, status)`; doStep's status goes back
to its caller. Where `logger` is set (FMPy's `fmi_call_logger`), each call is
logged as FMPy logs its own: ``fmi2SetTime(c=0x55d0c3a0, time=0.5) -> OK``.

A component's ports as the compiled loops read and set them (`Ports`): an FMU
instance's Real variables through these calls (`RealPorts`), else Python's.

References
----------
FMI 2.0.4, sections 2.1.7 (get and set), 3.2.1 (Model Exchange), 4.2.2
(fmi2DoStep); FMI 3.0, sections 2.2.6, 3.2 and 4.2 (fmi3DoStep); FMI 1.0 for
Co-Simulation (fmiDoStep, fmiStatusKind).
"""

from ..core._functions cimport new_array

import numpy as np

# the roles of the calls a table holds (`_fmi.pxd`), as the lower layer names them
ROLES = ("set_time", "set_states", "derivatives", "indicators", "get_reals",
         "set_reals", "do_step")  # fmt: skip
STATUS_NAMES = ("OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING")  # as FMPy
# the C type of each Element, as numpy's code
ELEMENTS = ("f8", "f4", "i4", "u1", "i1", "i2", "u2", "u4", "i8", "u8", "?")
cdef int _LACKS = 4  # fmiFatal: the status of a call this version's table lacks


cdef list _listed(const double* values, size_t n):
    return [values[i] for i in range(n)]


cdef list _references(const unsigned int* vrs, size_t n):
    return [vrs[i] for i in range(n)]


cdef str _text(value):
    """A value as FMPy's call log writes it (an array as a list)."""
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


cdef class FmiFunctions:
    """The C functions of one instance `component` in FMI 2.0's C shapes (FMI 1.0
    and 3.0 override what differs): `addresses` and `names` by role in ROLES,
    error(name, status) a failed call's exception, logger(text) FMPy's."""

    # per Role: the names of the C function's arguments (FMPy's), the instance first
    ARGUMENTS = (
        ("c", "time"), ("c", "x", "nx"), ("c", "derivatives", "nx"),
        ("c", "eventIndicators", "ni"), ("c", "vr", "nvr", "value"),
        ("c", "vr", "nvr", "value"),
        ("c", "currentCommunicationPoint", "communicationStepSize",
         "noSetFMUStatePriorToCurrentPoint"),
    )  # fmt: skip
    # doStep's last argument, as logged: noSetFMUStatePriorToCurrentPoint
    STEP_FLAG = False

    def __init__(self, size_t component, addresses, names, error, logger=None):
        cdef int k
        self.component, self.handle = <void*> component, component
        for k in range(N_ROLES):
            self.address[k] = <void*> <size_t> addresses.get(ROLES[k], 0)
        self.names = tuple(names.get(role, "") for role in ROLES)
        self.error, self.logger = error, logger

    cdef int check(self, str name, int status) except -1:
        if status > fmi2Warning:  # = fmi1Warning = fmi3Warning: above it, failures
            raise self.error(name, status)
        return 0

    cdef int log(self, str name, int role, tuple values, int status) except -1:
        """Give the logger the call of `name` with the arguments after the
        instance (`values`; those the version's function lacks are left out)."""
        given = zip(self.ARGUMENTS[role], (hex(self.handle), *values))
        label = STATUS_NAMES[status] if 0 <= status < 6 else str(status)
        self.logger(f"{name}({', '.join(f'{a}={_text(v)}' for a, v in given)}) "
                    f"-> {label}")
        return 0

    cdef int set_time(self, double t) except -1:
        cdef int status = (<fmi2SetTimeTYPE*> self.address[SET_TIME])(self.component, t)
        if self.logger is not None:
            self.log(self.names[SET_TIME], SET_TIME, (t,), status)
        return self.check(self.names[SET_TIME], status)

    cdef int set_states(self, const double* x, size_t n) except -1:
        cdef int status = (<fmi2SetContinuousStatesTYPE*> self.address[SET_STATES])(
            self.component, x, n)
        if self.logger is not None:
            self.log(self.names[SET_STATES], SET_STATES, (_listed(x, n), n), status)
        return self.check(self.names[SET_STATES], status)

    cdef int get_derivatives(self, double* out, size_t n) except -1:
        cdef int status = (<fmi2GetDerivativesTYPE*> self.address[DERIVATIVES])(
            self.component, out, n)
        if self.logger is not None:
            self.log(self.names[DERIVATIVES], DERIVATIVES, (_listed(out, n), n), status)
        return self.check(self.names[DERIVATIVES], status)

    cdef int get_indicators(self, double* out, size_t n) except -1:
        cdef int status = (<fmi2GetEventIndicatorsTYPE*> self.address[INDICATORS])(
            self.component, out, n)
        if self.logger is not None:
            self.log(self.names[INDICATORS], INDICATORS, (_listed(out, n), n), status)
        return self.check(self.names[INDICATORS], status)

    cdef int get_reals(self, const unsigned int* vrs, size_t n, double* out) except -1:
        cdef int status
        if n == 0:
            return 0
        status = self._get_reals(vrs, n, out)
        if self.logger is not None:
            self.log(self.names[GET_REALS], GET_REALS,
                     (_references(vrs, n), n, _listed(out, n), n), status)
        return self.check(self.names[GET_REALS], status)

    cdef int set_reals(self, const unsigned int* vrs, size_t n,
                       const double* values) except -1:
        cdef int status
        if n == 0:
            return 0
        status = self._set_reals(vrs, n, values)
        if self.logger is not None:
            self.log(self.names[SET_REALS], SET_REALS,
                     (_references(vrs, n), n, _listed(values, n), n), status)
        return self.check(self.names[SET_REALS], status)

    cdef int get_values(self, Element kind, void* fn, str name,
                        const unsigned int* vrs, size_t n, void* out) except -1:
        """The get `fn` (named `name`) of n values of the C type `kind` into out."""
        cdef int status
        if n == 0:
            return 0
        status = self._get_values(kind, fn, vrs, n, out)
        if self.logger is not None:
            element = np.dtype(ELEMENTS[kind])
            values = np.frombuffer(<char[:n * element.itemsize]> <char*> out,
                                   dtype=element).tolist()
            self.log(name, GET_REALS, (_references(vrs, n), n, values, n), status)
        return self.check(name, status)

    cdef int do_step(self, double t, double h, StepEnd* end) except -1:
        """doStep from t by h: its status (unchecked), and in `end` where it ended
        (t + h where it completed, FMI 3.0's lastSuccessfulTime, else t). The
        call runs without the GIL, so that the SIGTERM watcher of
        `fmu_archive._Folders` runs (the logger callbacks, ctypes', take it back)."""
        cdef int status
        end.event = end.terminate = end.early = False
        end.last = t + h
        with nogil:
            status = self._do_step(t, h, end)
        if self.logger is not None:
            self.log(self.names[DO_STEP], DO_STEP, (t, h, self.STEP_FLAG, end.event,
                     end.terminate, end.early, end.last), status)
        return status

    # the C calls that differ by version, in FMI 2.0's C shapes
    cdef int _get_reals(self, const unsigned int* vrs, size_t n, double* out
                        ) noexcept nogil:
        return (<fmi2GetRealTYPE*> self.address[GET_REALS])(self.component, vrs, n, out)

    cdef int _set_reals(self, const unsigned int* vrs, size_t n, const double* values
                        ) noexcept nogil:
        return (<fmi2SetRealTYPE*> self.address[SET_REALS])(
            self.component, vrs, n, values)

    cdef int _get_values(self, Element kind, void* fn, const unsigned int* vrs,
                         size_t n, void* out) noexcept nogil:
        if kind == F8:
            return (<fmi2GetRealTYPE*> fn)(self.component, vrs, n, <fmi2Real*> out)
        if kind == I4:  # fmi2GetInteger, and fmi2GetBoolean (fmi2Boolean is an int)
            return (<fmi2GetIntegerTYPE*> fn)(
                self.component, vrs, n, <fmi2Integer*> out)
        return _LACKS

    cdef int _do_step(self, double t, double h, StepEnd* end) noexcept nogil:
        cdef int status = (<fmi2DoStepTYPE*> self.address[DO_STEP])(
            self.component, t, h, 0)
        if status > fmi2Warning:
            end.last = t
        return status


cdef class Fmi1Functions(FmiFunctions):
    """FMI 1.0's calls (fmi1Functions.h): FMI 2.0's C shapes but for its char
    fmiBoolean, in fmiGetBoolean and in doStep's newStep, always fmiTrue (the
    master never repeats a step: canRejectSteps may be false)."""

    # FMI 2.0's names, but `component` for get and set, and doStep's newStep
    ARGUMENTS = FmiFunctions.ARGUMENTS[:4] + (
        ("component", "vr", "nvr", "value"), ("component", "vr", "nvr", "value"),
        ("c", "currentCommunicationPoint", "communicationStepSize", "newStep"),
    )  # fmt: skip
    STEP_FLAG = 1  # newStep: fmiTrue, as FMPy logs it

    cdef int _get_values(self, Element kind, void* fn, const unsigned int* vrs,
                         size_t n, void* out) noexcept nogil:
        if kind == B1:  # fmiGetBoolean: one char per value
            return (<fmi1GetBooleanTYPE*> fn)(
                self.component, vrs, n, <fmi1Boolean*> out)
        return FmiFunctions._get_values(self, kind, fn, vrs, n, out)

    cdef int _do_step(self, double t, double h, StepEnd* end) noexcept nogil:
        cdef int status = (<fmi1DoStepTYPE*> self.address[DO_STEP])(
            self.component, t, h, fmi1True)
        if status > fmi1Warning:
            end.last = t
        return status


cdef class Fmi3Functions(FmiFunctions):
    """FMI 3.0's calls (fmi3FunctionTypes.h): gets and sets count the values,
    doStep says why it stopped."""

    ARGUMENTS = (
        ("instance", "time"), ("instance", "continuousStates", "nContinuousStates"),
        ("instance", "derivatives", "nContinuousStates"),
        ("instance", "eventIndicators", "nEventIndicators"),
        ("instance", "valueReferences", "nValueReferences", "values", "nValues"),
        ("instance", "valueReferences", "nValueReferences", "values", "nValues"),
        ("instance", "currentCommunicationPoint", "communicationStepSize",
         "noSetFMUStatePriorToCurrentPoint", "eventHandlingNeeded",
         "terminateSimulation", "earlyReturn", "lastSuccessfulTime"),
    )  # fmt: skip

    cdef int _get_reals(self, const unsigned int* vrs, size_t n, double* out
                        ) noexcept nogil:
        return (<fmi3GetFloat64TYPE*> self.address[GET_REALS])(
            self.component, vrs, n, out, n)

    cdef int _set_reals(self, const unsigned int* vrs, size_t n, const double* values
                        ) noexcept nogil:
        return (<fmi3SetFloat64TYPE*> self.address[SET_REALS])(
            self.component, vrs, n, values, n)

    cdef int _get_values(self, Element kind, void* fn, const unsigned int* vrs,
                         size_t n, void* out) noexcept nogil:
        cdef void* c = self.component
        if kind == F8:
            return (<fmi3GetFloat64TYPE*> fn)(c, vrs, n, <fmi3Float64*> out, n)
        if kind == F4:
            return (<fmi3GetFloat32TYPE*> fn)(c, vrs, n, <fmi3Float32*> out, n)
        if kind == I1:
            return (<fmi3GetInt8TYPE*> fn)(c, vrs, n, <fmi3Int8*> out, n)
        if kind == U1:
            return (<fmi3GetUInt8TYPE*> fn)(c, vrs, n, <fmi3UInt8*> out, n)
        if kind == I2:
            return (<fmi3GetInt16TYPE*> fn)(c, vrs, n, <fmi3Int16*> out, n)
        if kind == U2:
            return (<fmi3GetUInt16TYPE*> fn)(c, vrs, n, <fmi3UInt16*> out, n)
        if kind == I4:
            return (<fmi3GetInt32TYPE*> fn)(c, vrs, n, <fmi3Int32*> out, n)
        if kind == U4:
            return (<fmi3GetUInt32TYPE*> fn)(c, vrs, n, <fmi3UInt32*> out, n)
        if kind == I8:
            return (<fmi3GetInt64TYPE*> fn)(c, vrs, n, <fmi3Int64*> out, n)
        if kind == U8:
            return (<fmi3GetUInt64TYPE*> fn)(c, vrs, n, <fmi3UInt64*> out, n)
        return (<fmi3GetBooleanTYPE*> fn)(c, vrs, n, <fmi3Boolean*> out, n)

    cdef int _do_step(self, double t, double h, StepEnd* end) noexcept nogil:
        cdef fmi3Boolean event = False, terminate = False, early = False
        cdef int status = (<fmi3DoStepTYPE*> self.address[DO_STEP])(
            self.component, t, h, False, &event, &terminate, &early, &end.last)
        end.event, end.terminate, end.early = event, terminate, early
        return status


cdef class Ports:
    """A fixed list of one component's ports, read (`read`) through a Python
    `reader` or set (`write`) through a `writer` (declared in `_fmi.pxd`, for
    the loops that take them: `_coupled.Step`)."""

    def __init__(self, Py_ssize_t n, reader=None, writer=None):
        self.n, self.reader, self.writer = n, reader, writer

    cdef int read(self, double* values) except -1:
        cdef double[::1] read = np.ascontiguousarray(self.reader(), dtype=float)
        cdef Py_ssize_t i
        for i in range(self.n):
            values[i] = read[i]
        return 0

    cdef int write(self, const double* values) except -1:
        self.writer(new_array(values, self.n))
        return 0


cdef class RealPorts(Ports):
    """Real variables `vrs` of an FMU instance, got and set through its C calls
    `fmi`: by the coupled rhs, and from Python (`get`, `set`; `touched()` before
    a set, where given: the instance's compiled calls set their point again)."""

    cdef FmiFunctions fmi
    cdef unsigned int[::1] vrs
    cdef double[::1] values
    cdef object touched

    def __init__(self, FmiFunctions fmi, vrs, touched=None):
        self.fmi, self.n, self.touched = fmi, len(vrs), touched
        self.vrs = np.array(list(vrs) or [0], dtype=np.uintc)
        self.values = np.zeros(max(self.n, 1))

    cdef int read(self, double* values) except -1:
        return self.fmi.get_reals(&self.vrs[0], self.n, values)

    cdef int write(self, const double* values) except -1:
        return self.fmi.set_reals(&self.vrs[0], self.n, values)

    def get(self):
        """Return the variables' current values."""
        self.read(&self.values[0])
        return np.array(self.values[: self.n])

    def set(self, values):
        """Set the variables to `values`."""
        cdef double[::1] given = np.ascontiguousarray(values, dtype=float)
        if self.n:
            if self.touched is not None:
                self.touched()
            self.values[: self.n] = given
            self.write(&self.values[0])
