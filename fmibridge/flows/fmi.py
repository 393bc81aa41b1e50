"""The lower FMI layer: one FMU instance, fmpy calls, statuses as FMUError.

The FMI version and interface are chosen once, by class (`Fmi1Model`,
`Fmi2Model`, `Fmi3Model`, `Fmi1Slave`, `Fmi2Slave`, `Fmi3Slave`); a version's
names are class attributes, so the upper layer (`fmu.py`) never asks which
version it drives. Each follows its standard's state machine: an FMI 3
Co-Simulation instance uses Event Mode (and early return) where the FMU
declares `hasEventMode`; FMI 1.0 has neither modes nor FMU state.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import functools
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from ..core import limits
from ..core.errors import FmibridgeError, FMUError
from ._fmi import STATUS_NAMES, Fmi1Functions, Fmi3Functions, FmiFunctions, RealPorts
from ._fmu import FmuCalls
from .fmu_archive import INTS, FmuArchive

__all__ = [
    "CoSimulationInstance",
    "FmiInstance",
    "FmuArchive",
    "ModelExchangeInstance",
    "instantiate",
]

# an FMI status as errors name it (the compiled calls' log: upper case)
STATUS_LABELS = tuple(name.lower() for name in STATUS_NAMES)
FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures
FMI2_TERMINATED, FMI2_LAST_SUCCESSFUL_TIME = 3, 2  # fmi2StatusKind values
MAX_INITIAL_ITERATIONS = 100  # event iterations after initialization (Event Mode),
# as the flows' MAX_EVENT_ITERATIONS: a model needing more has no fixed point
Start = Mapping[int, tuple[str, Any]]  # value reference -> (FMI type, value)
F = TypeVar("F", bound=Callable[..., Any])  # a method `_fmi_call` wraps
FMI1_STATUS_FUNCTIONS = ("fmi1InitializeSlave", "fmi1DoStep", "fmi1CancelStep")
# fmiTrue, fmiFalse: FMI 1.0's fmiBoolean is a char, passed as one byte (as fmpy's
# call log reads it)
FMI1_TRUE, FMI1_FALSE = b"\x01", b"\x00"
FMI1_NO_STATE = "FMI 1.0 cannot save an FMU's state"
# the C type of the values of each get (by its name's suffix), as numpy codes
C_ELEMENTS = {
    **{name: np.dtype(name.lower()).str[1:] for name in ("Float32", "Float64", *INTS)},
    "Real": "f8",
    "Integer": "i4",
}


def _fmi_call(method: F) -> F:
    """Turn fmpy's FMICallException into FMUError naming the function and file."""
    from fmpy.fmi1 import FMICallException  # imported once, not on every call

    @functools.wraps(method)
    def call(self: FmiInstance, *args, **kwargs):
        self._touched()  # the FMU may change: compiled calls set their point again
        try:
            return method(self, *args, **kwargs)
        except FMICallException as exc:
            raise _status_error(self, exc.function, exc.status) from None

    return cast(F, call)


def _status_error(instance: FmiInstance, function: str, status: int) -> FMUError:
    label = STATUS_LABELS[status] if status in range(6) else str(status)
    return FMUError(function, label, instance.path, instance.log_tail())


class EventInfo(NamedTuple):
    """What an event iteration ended with."""

    values_changed: bool = False
    terminate: bool = False
    next_time: float = math.inf  # the next time event (inf: none scheduled)


class StepEnd(NamedTuple):
    """Where a Co-Simulation doStep stopped, and why."""

    t: float
    event_needed: bool = False  # FMI 3 Event Mode: the FMU asks for an event at t
    terminate: bool = False


_PRINTS_LOG: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fmibridge_prints_fmu_log", default=False
)


@contextlib.contextmanager
def _setting(variable: contextvars.ContextVar, value: Any) -> Iterator[None]:
    """`variable` set to `value` inside the block."""
    token = variable.set(value)
    try:
        yield
    finally:
        variable.reset(token)


def printed_log(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Print the log messages of the FMUs called inside the block as they come
    (`simulate(debug_logging=True)`); error messages quote them either way."""
    return _setting(_PRINTS_LOG, enabled)


CallLogger = Callable[[str], None]
_CALL_LOGGER: contextvars.ContextVar[CallLogger | None] = contextvars.ContextVar(
    "fmibridge_fmi_call_logger", default=None
)


def logged_calls(logger: CallLogger | None) -> contextlib.AbstractContextManager[None]:
    """Give `logger` each FMI call of the FMUs instantiated inside the block, in
    FMPy's format (`simulate(fmi_call_logger=...)`)."""
    return _setting(_CALL_LOGGER, logger)


_INSTANCES: dict[str, FmiInstance] = {}  # live instances by name, for log routing


def _route_message(env, instance_name, status, category, message) -> None:
    """Give an FMI 1.0 / 2.0 log message to its instance, else print it."""
    text = message.decode("utf-8", "replace") if message else ""
    instance = _INSTANCES.get(
        instance_name.decode("utf-8", "replace") if instance_name else ""
    )
    if instance is not None:
        instance._log(text)
    else:
        print(f"[{STATUS_NAMES[status] if status in range(6) else status}] {text}")


@functools.cache
def _c_logger(version: str) -> Any:
    """The logger callback of FMI 1.0 or 2.0: fmpy's proxy keeps one per process."""
    module = import_module(f"fmpy.fmi{version}")
    return getattr(module, f"fmi{version}CallbackLoggerTYPE")(_route_message)


class FmiInstance:
    """One instantiated FMU. Subclasses bind one FMI version and interface."""

    interface: str = ""  # "ModelExchange" or "CoSimulation"
    calls: FmuCalls | None = None  # the C functions called directly (Model Exchange)
    functions: FmiFunctions  # the C functions the compiled loops call (`_functions`)
    # per version (`_Fmi1`, `_Fmi3`; FMI 2.0's here): fmpy's module and C prefix,
    # FMI type -> fmpy's get/set suffix, the table of C calls, the reals' and
    # integers' types, the FMU state's name in fmpy's calls, the event iteration
    version = "2"
    _access = {
        **{t: t for t in ("Real", "Integer", "Boolean", "String")},
        "Enumeration": "Integer",
    }
    c_table: type[FmiFunctions] = FmiFunctions
    _real, _int = "Real", "Integer"
    _c_boolean = "i4"  # a Boolean's C type, numpy's code: fmi2Boolean is an int
    _fmu_state = "FMUstate"
    _update = "newDiscreteStates"
    _callbacks_keyword = "callbacks"  # instantiate's
    # the function and status an FMUError names where the FMU cannot save its state
    no_state_saving = ("canGetAndSetFMUstate", "false")
    reset_name = "fmi2Reset"  # the reset's C name, for errors
    # the C calls the compiled loops make besides the reals' get and set, by
    # `_fmi.ROLES`: the suffix of their C name fmi<version><suffix>
    _c_calls: dict[str, str] = {}
    uses_event_mode = False  # FMI 3.0 Co-Simulation's Event Mode (`Fmi3Slave`)

    def __init__(self, archive: FmuArchive) -> None:
        self.path = str(archive.path)
        self.description = description = archive.description
        self.name = f"fmibridge-{id(self):x}"  # unique: routes this instance's log
        self._messages: list[str] = []
        kind = "Model" if self.interface == "ModelExchange" else "Slave"
        module = import_module(f"fmpy.fmi{self.version}")
        self._fmu = getattr(module, f"FMU{self.version}{kind}")(
            guid=description.guid,
            unzipDirectory=str(archive.unzipped()),
            modelIdentifier=archive.part(self.interface).modelIdentifier,
            instanceName=self.name,
            fmiCallLogger=_CALL_LOGGER.get(),
        )
        _INSTANCES[self.name] = self
        try:
            self._instantiate()
        except Exception as exc:  # noqa: BLE001 - fmpy: "Failed to instantiate ..."
            _INSTANCES.pop(self.name, None)
            if isinstance(exc, FMUError):
                raise
            raise FMUError(
                f"fmi{self.version}Instantiate",
                "no instance",
                self.path,
                self.log_tail() or str(exc),
            ) from None
        self.functions = self._functions()

    def _touched(self) -> None:
        """Something may change the FMU: the compiled calls set their point again."""
        if self.calls is not None:
            self.calls.touched()

    def _log(self, text: str) -> None:
        self._messages = (self._messages + [text])[-20:]  # keep the last few for errors
        if _PRINTS_LOG.get():
            print(f"[{Path(self.path).name}] {text}")

    def log_tail(self) -> str:
        """Return the FMU's last three log messages, for an error message."""
        return f"FMU log: {' | '.join(self._messages[-3:])}" if self._messages else ""

    def free(self) -> None:
        """Terminate and free the instance; safe to call twice."""
        fmu, self._fmu = self._fmu, None
        if fmu is None:
            return
        with contextlib.suppress(Exception):  # freeing goes on whatever it says
            fmu.terminate()
        fmu.freeInstance()
        _INSTANCES.pop(self.name, None)
        if self.calls is not None:
            self.calls.close()

    def _functions(self) -> FmiFunctions:
        """The instance's C calls, logged to the block's `logged_calls`."""
        real = {"get_reals": f"Get{self._real}", "set_reals": f"Set{self._real}"}
        names = {
            role: f"fmi{self.version}{suffix}"
            for role, suffix in {**real, **self._c_calls}.items()
        }
        component = self._fmu.component
        return self.c_table(
            getattr(component, "value", component),  # c_void_p or int
            {role: self.c_address(name) for role, name in names.items()},
            names,
            functools.partial(_status_error, self),
            _CALL_LOGGER.get(),
        )

    def _logger(self) -> Any:
        """The callbacks of FMI 1.0 / 2.0, their logger `_c_logger`."""
        from fmpy.logging import addLoggerProxy

        module = import_module(f"fmpy.fmi{self.version}")
        callbacks = getattr(module, f"fmi{self.version}CallbackFunctions")()
        callbacks.logger = _c_logger(self.version)
        callbacks.allocateMemory = module.defaultCallbacks.allocateMemory
        callbacks.freeMemory = module.defaultCallbacks.freeMemory
        addLoggerProxy(ctypes.byref(callbacks))  # formats printf-style arguments
        self._callbacks = callbacks  # alive while the instance lives
        return callbacks

    @_fmi_call
    def _instantiate(self) -> None:
        self._fmu.instantiate(
            loggingOn=True, **{self._callbacks_keyword: self._logger()}
        )

    def _get(self, suffix: str, vrs: list[int], n_values: int) -> list:
        return getattr(self._fmu, "get" + suffix)(vrs)

    @_fmi_call
    def get_values(self, fmi_type: str, vrs: Sequence[int], n_values: int) -> list:
        """Return the n_values scalars of the variables `vrs`, all of `fmi_type`."""
        return self._get(self._access[fmi_type], list(vrs), n_values)

    @_fmi_call
    def set_values(self, fmi_type: str, vrs: Sequence[int], values: Sequence) -> None:
        """Set the variables `vrs` of `fmi_type` to `values` (arrays flattened)."""
        convert = {"Boolean": bool, "Real": float, "Float64": float, "Float32": float}
        cast = convert.get(fmi_type, int)
        getattr(self._fmu, "set" + self._access[fmi_type])(
            list(vrs), [cast(v) for v in values]
        )

    def set_reals(self, vrs: Sequence[int], values: Sequence[float]) -> None:
        """Set real variables (Real in FMI 2.0, Float64 in FMI 3.0)."""
        self.set_values(self._real, vrs, values)

    def get_reals(self, vrs: Sequence[int]) -> list[float]:
        """Return the values of real variables."""
        return self.get_values(self._real, vrs, len(vrs))

    def set_ints(self, vrs: Sequence[int], values: Sequence[int]) -> None:
        """Set integer variables (Integer in FMI 2.0, Int32 in FMI 3.0)."""
        self.set_values(self._int, vrs, values)

    def _set_start(self, start: Start) -> None:
        """Set start values (or inputs) of any type, one call per type."""
        groups: dict[str, tuple[list, list]] = {}
        for vr, (fmi_type, value) in start.items():
            vrs, values = groups.setdefault(fmi_type, ([], []))
            vrs.append(vr)
            values.extend(np.ravel(value).tolist())
        for fmi_type, (vrs, values) in groups.items():
            self.set_values(fmi_type, vrs, values)

    @_fmi_call
    def reset(self) -> None:
        """Reset the instance to its state after instantiation (fmiReset)."""
        self._fmu.reset()

    def c_address(self, function: str) -> int:
        """Return the address of the FMU's C function fmi<version>Xxx or fmiXxx."""
        prefix = f"fmi{self.version}"
        name = prefix + function.removeprefix(prefix).removeprefix("fmi")
        address = ctypes.cast(self._fmu._functions[name], ctypes.c_void_p).value
        if address is None:
            raise FMUError(function, "missing", self.path, "a NULL function pointer")
        return address

    def c_getter(self, fmi_type: str) -> tuple[int, str, str]:
        """The C get of `fmi_type`: its address, name and values' C type (numpy's
        code; a Boolean's `_c_boolean`)."""
        access = self._access[fmi_type]
        name = f"fmi{self.version}Get{access}"
        element = C_ELEMENTS.get(access) or self._c_boolean
        return self.c_address(name), name, element

    def real_ports(self, vrs: Sequence[int]) -> RealPorts:
        """Return fast get and set of the Real variables `vrs` (`RealPorts`)."""
        return RealPorts(self.functions, vrs, self._touched)

    @_fmi_call
    def initialize(
        self,
        t0: float,
        start: Start,
        tolerance: float | None = None,
        inputs: Start | None = None,
    ) -> None:
        """Initialize at t0: set `start` values, then `inputs` in Initialization
        Mode (FMI 1.0: both before fmiInitialize or fmiInitializeSlave)."""
        self._initialize(t0, start, tolerance, inputs or {})

    def _initialize(
        self, t0: float, start: Start, tolerance: float | None, inputs: Start
    ) -> None:
        self._fmu.setupExperiment(tolerance=tolerance, startTime=t0)
        self._set_start(start)
        self._fmu.enterInitializationMode()
        self._set_start(inputs)
        self._fmu.exitInitializationMode()

    @_fmi_call
    def get_state(self) -> Any:
        """Save the FMU's state (fmiGetFMUstate)."""
        return getattr(self._fmu, f"get{self._fmu_state}")()

    @_fmi_call
    def set_state(self, state: Any) -> None:
        """Restore a saved state (fmiSetFMUstate)."""
        getattr(self._fmu, f"set{self._fmu_state}")(state)

    def free_state(self, state: Any) -> None:
        """Free a saved state (fmiFreeFMUstate)."""
        if self._fmu is not None:
            getattr(self._fmu, f"free{self._fmu_state}")(state)

    def _iterate(self, max_iterations: int) -> EventInfo:
        """Update the discrete states until the FMU needs no more."""
        changed, update = False, getattr(self._fmu, self._update)
        for _ in range(max_iterations):
            needed, terminate, _, values_changed, defined, next_time = update()
            changed |= bool(values_changed)
            if terminate or not needed:
                return EventInfo(
                    changed, bool(terminate), next_time if defined else math.inf
                )
        raise FMUError(
            self._update,
            "no fixed point",
            self.path,
            f"discrete states still changing after {max_iterations} event iterations",
        )


class _Fmi3(FmiInstance):
    version = "3"
    c_table = Fmi3Functions
    _access = {
        **{t: t for t in ("Float32", "Float64", "Boolean", "String", *INTS)},
        "Enumeration": "Int64",
    }
    _real, _int = "Float64", "Int32"
    _c_boolean = "?"  # fmi3Boolean is a C bool
    _fmu_state = "FMUState"
    _update = "updateDiscreteStates"
    no_state_saving = ("canGetAndSetFMUState", "false")
    reset_name = "fmi3Reset"

    def _logger(self):
        def log(env, status, category, message):
            self._log(message.decode("utf-8", "replace"))

        return log

    @_fmi_call
    def _instantiate(self) -> None:
        self._fmu.instantiate(loggingOn=True, logMessage=self._logger())

    def _get(self, suffix: str, vrs: list[int], n_values: int) -> list:
        return getattr(self._fmu, "get" + suffix)(vrs, n_values)

    def _initialize(
        self, t0: float, start: Start, tolerance: float | None, inputs: Start
    ) -> None:
        self._set_start(start)
        self._fmu.enterInitializationMode(tolerance=tolerance, startTime=t0)
        self._set_start(inputs)
        self._fmu.exitInitializationMode()
        if self.uses_event_mode:  # Co-Simulation: it left it in Event Mode
            self._iterate(MAX_INITIAL_ITERATIONS)
            self._fmu.enterStepMode()


class _Fmi1(FmiInstance):
    """FMI 1.0: C functions `<modelIdentifier>_fmiXxx` (fmpy's `fmi1Xxx`), no
    Initialization Mode, no FMU state."""

    version = "1"
    c_table = Fmi1Functions
    _c_boolean = "?"  # fmiBoolean is a char, fmiTrue 1: read as C's one-byte bool
    _callbacks_keyword = "functions"
    no_state_saving = ("fmiGetFMUstate", "missing")  # FMI 1.0 has no FMU state
    reset_name = "fmiResetSlave"

    def get_state(self):
        raise FMUError("fmiGetFMUstate", "missing", self.path, FMI1_NO_STATE)

    def set_state(self, state) -> None:
        raise FMUError("fmiSetFMUstate", "missing", self.path, FMI1_NO_STATE)

    def free_state(self, state) -> None:
        """FMI 1.0 has no FMU state: nothing was saved, nothing to free."""


class ModelExchangeInstance(FmiInstance):
    """Model Exchange calls: time, states, derivatives, event indicators and
    reals go straight to the FMU's C functions (`calls`, `flows._fmu.FmuCalls`)."""

    interface = "ModelExchange"
    _c_calls = {
        "set_time": "SetTime",
        "set_states": "SetContinuousStates",
        "derivatives": "GetDerivatives",
        "indicators": "GetEventIndicators",
    }
    calls: FmuCalls  # bound when instantiated
    needs_completed_step = False  # unless the FMU asks for it

    def __init__(self, archive: FmuArchive) -> None:
        super().__init__(archive)
        self.nx = self._count("numberOfContinuousStates")
        self.nz = self._count("numberOfEventIndicators")
        # one spare element: a zero-length buffer would pass NULL to the FMU
        self._x = np.zeros(self.nx + 1)
        self._px = self._x.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        self.calls = FmuCalls(self.functions, self.nx, self.nz, self.path)
        self.needs_completed_step = self.needs_completed_step or bool(
            getattr(self.description.modelExchange, "needsCompletedIntegratorStep", 0)
        )

    def _count(self, name: str) -> int:
        """The model description's `name`, if within 0 and `MAX_FMU_VECTOR`."""
        count = getattr(self.description, name)
        if not 0 <= count <= limits.MAX_FMU_VECTOR:
            raise FmibridgeError(
                f"{self.path}: {name} = {count} in modelDescription.xml is beyond "
                f"0 to {limits.MAX_FMU_VECTOR}; the FMU is malformed."
            )
        return count

    def state_references(self) -> list[int] | None:
        """The value references of the state vector, where the FMU tells them
        apart from its model description (FMI 1.0); None: it does not."""
        return None

    @_fmi_call
    def get_states(self) -> np.ndarray:
        """Return the FMU's continuous states (a copy)."""
        self._fmu.getContinuousStates(self._px, self.nx)
        return self._x[: self.nx].copy()

    @_fmi_call
    def event_iteration(
        self, max_iterations: int, ints: Start | None = None
    ) -> EventInfo:
        """Run an event with discrete inputs `ints`, back to Continuous-Time Mode."""
        self._fmu.enterEventMode()
        if ints:
            self._set_start(ints)
        return self.finish_initialization(max_iterations)

    @_fmi_call
    def finish_initialization(self, max_iterations: int) -> EventInfo:
        """Run the event iteration that follows initialization (Event Mode)."""
        info = self._iterate(max_iterations)
        if not info.terminate:
            self._fmu.enterContinuousTimeMode()
        return info

    @_fmi_call
    def completed_step(self, t: float, x: np.ndarray) -> tuple[bool, bool]:
        """Report an accepted step ending at (t, x): (enter_event_mode, terminate)."""
        self.calls.set_time_and_states(t, x)
        enter, terminate = self._fmu.completedIntegratorStep(False)
        return bool(enter), bool(terminate)

    def reset(self) -> None:
        """Reset the instance (fmiReset) and forget the time it was set to."""
        super().reset()
        self.calls.forget_time()


class Fmi2Model(ModelExchangeInstance):
    """An FMI 2.0 Model Exchange instance."""


class Fmi3Model(_Fmi3, ModelExchangeInstance):
    """An FMI 3.0 Model Exchange instance."""

    _c_calls = {
        **ModelExchangeInstance._c_calls,
        "derivatives": "GetContinuousStateDerivatives",
    }


class Fmi1Model(_Fmi1, ModelExchangeInstance):
    """An FMI 1.0 Model Exchange instance: fmiInitialize and fmiEventUpdate iterate,
    completedIntegratorStep after every step, a changed state vector refused."""

    _references: list[int] | None = None  # the state vector last read
    needs_completed_step = True  # FMI 1.0 has no flag to waive it

    def _initialize(
        self, t0: float, start: Start, tolerance: float | None, inputs: Start
    ) -> None:
        self._fmu.setTime(t0)
        self._set_start({**start, **inputs})
        self._initial = self._event_info(
            self._fmu.initialize(
                FMI1_FALSE if tolerance is None else FMI1_TRUE, tolerance or 0.0
            )
        )
        self.calls.note_time(t0)  # fmpy's setTime above

    @_fmi_call
    def finish_initialization(self, max_iterations: int) -> EventInfo:
        """Return what fmiInitialize's event iteration ended with (and finish
        it with fmiEventUpdate where it did not converge)."""
        info, self._initial = self._initial, None
        return info if info is not None else self._iterate(max_iterations)

    @_fmi_call
    def event_iteration(
        self, max_iterations: int, ints: Start | None = None
    ) -> EventInfo:
        """Set discrete inputs `ints`, run fmiEventUpdate to convergence."""
        if ints:
            self._set_start(ints)
        return self._iterate(max_iterations)

    @_fmi_call
    def completed_step(self, t: float, x: np.ndarray) -> tuple[bool, bool]:
        self.calls.set_time_and_states(t, x)
        return bool(self._fmu.completedIntegratorStep()), False

    def reset(self) -> None:
        """FMI 1.0 Model Exchange has no reset: an FMUError."""
        raise FMUError(
            "fmiReset", "missing", self.path, "FMI 1.0 Model Exchange has no reset"
        )

    @_fmi_call
    def state_references(self) -> list[int] | None:
        """The value references of the state vector (fmiGetStateValueReferences),
        kept as the ones the run integrates."""
        vrs = (ctypes.c_uint * max(self.nx, 1))()
        self._fmu.getStateValueReferences(vrs, self.nx)
        self._references = list(vrs[: self.nx])
        return self._references

    def _iterate(self, max_iterations: int) -> EventInfo:
        for _ in range(max_iterations):
            info = self._event_info(self._fmu.eventUpdate(FMI1_FALSE))
            if info is not None:
                return info
        raise FMUError(
            "fmiEventUpdate",
            "no fixed point",
            self.path,
            f"iterationConverged still false after {max_iterations} event updates",
        )

    def _event_info(self, info: tuple) -> EventInfo | None:
        """An fmiEventInfo as EventInfo (None: not converged)."""
        converged, references_changed, values_changed, terminate, timed, t_next = info
        before = self._references
        if references_changed and before is not None:
            after = self.state_references()
            if after != before:
                variables = reversed(self.description.modelVariables)  # first wins
                names = {v.valueReference: v.name for v in variables}
                raise FMUError(
                    "fmiGetStateValueReferences",
                    "states changed",
                    self.path,
                    f"at an event the FMU changed its state vector from "
                    f"{[names.get(vr, vr) for vr in before]} to "
                    f"{[names.get(vr, vr) for vr in after or ()]} "
                    f"(stateValueReferencesChanged); fmibridge integrates the "
                    f"states chosen at initialisation, so it cannot go on",
                )
        if not (converged or terminate):
            return None
        return EventInfo(
            bool(values_changed), bool(terminate), t_next if timed else math.inf
        )


class CoSimulationInstance(FmiInstance):
    """Co-Simulation calls (FMI 2.0's; FMI 1.0 and 3.0 override what differs):
    the FMU steps itself; with FMI 3.0 Event Mode, `handle_event` runs events."""

    interface = "CoSimulation"
    _c_calls = {"do_step": "DoStep"}

    def do_step(self, t: float, h: float) -> StepEnd:
        """Step from t by h; a discard with terminateSimulation ends early."""
        from fmpy.fmi1 import FMICallException

        try:
            self._fmu.doStep(t, h, noSetFMUStatePriorToCurrentPoint=False)
        except FMICallException as exc:
            return self.failed_step(exc.status, False, t)
        return StepEnd(t + h)

    def handle_event(
        self, max_iterations: int, inputs: Start | None = None
    ) -> EventInfo:
        """Run an event a step asked for, or a jump of `inputs` (FMI 3.0 only)."""
        raise NotImplementedError

    @_fmi_call
    def failed_step(self, status: int, terminate: bool, last: float) -> StepEnd:
        """The end of a doStep that did not complete: at the last successful time
        for a discard with terminateSimulation, else the FMUError of fmi2DoStep."""
        if status == 2 and self._fmu.getBooleanStatus(FMI2_TERMINATED):
            last = self._fmu.getRealStatus(FMI2_LAST_SUCCESSFUL_TIME)
            return StepEnd(last, terminate=True)
        raise _status_error(self, "fmi2DoStep", status)

    def step_end(self, t: float, h: float, ended: tuple) -> StepEnd:
        """The end of a doStep from t by h called in C; `ended` is (status,
        eventHandlingNeeded, terminateSimulation, earlyReturn, last time)."""
        status, _, terminate, _, last = ended
        return self.failed_step(status, terminate, last)


class Fmi2Slave(CoSimulationInstance):
    """An FMI 2.0 Co-Simulation instance; its events stay inside doStep."""


class Fmi1Slave(_Fmi1, CoSimulationInstance):
    """An FMI 1.0 Co-Simulation instance; its events stay inside doStep."""

    @_fmi_call
    def _instantiate(self) -> None:
        for name in FMI1_STATUS_FUNCTIONS:  # fmpy 0.3 declares them to return a
            self._fmu._functions[name].restype = ctypes.c_int  # string: it crashed
        self._fmu.instantiate(functions=self._logger(), loggingOn=True)
        if not self._fmu.component:  # fmpy does not check it for slaves
            raise FMUError(
                "fmiInstantiateSlave", "no instance", self.path, self.log_tail()
            )

    def _initialize(
        self, t0: float, start: Start, tolerance: float | None, inputs: Start
    ) -> None:
        self._set_start({**start, **inputs})
        self._fmu.initialize(tStart=t0)  # FMI 1.0 Co-Simulation takes no tolerance

    @_fmi_call
    def do_step(self, t: float, h: float) -> StepEnd:
        """Step from t by h (a new step: FMI 1.0 cannot repeat one)."""
        self._fmu.doStep(t, h, newStep=FMI1_TRUE)
        return StepEnd(t + h)

    def failed_step(self, status: int, terminate: bool, last: float) -> StepEnd:
        """The FMUError of fmi1DoStep for a doStep that did not complete: FMI 1.0
        cannot end a run early (its fmiStatusKind has no fmiTerminated)."""
        raise _status_error(self, "fmi1DoStep", status)


class Fmi3Slave(_Fmi3, CoSimulationInstance):
    """An FMI 3.0 Co-Simulation instance: with `hasEventMode`, doStep stops at
    each event (Event Mode, early return where declared) for `handle_event`."""

    @_fmi_call
    def _instantiate(self) -> None:
        part = self.description.coSimulation
        self.uses_event_mode = bool(part.hasEventMode)
        early = (
            part.mightReturnEarlyFromDoStep
            or part.canReturnEarlyAfterIntermediateUpdate
        )
        try:
            self._fmu.instantiate(
                loggingOn=True,
                logMessage=self._logger(),
                eventModeUsed=self.uses_event_mode,
                earlyReturnAllowed=self.uses_event_mode and bool(early),
            )
        except Exception:  # noqa: BLE001 - fmpy: "Failed to instantiate FMU"
            if not self.uses_event_mode:
                raise
            # Some FMUs declare hasEventMode but refuse it (the Reference Roberts):
            # then their events stay inside doStep, as in FMI 2.
            self.uses_event_mode = False
            self._fmu.instantiate(loggingOn=True, logMessage=self._logger())

    @_fmi_call
    def do_step(self, t: float, h: float) -> StepEnd:
        """Step from t by h; with early return, stop at the FMU's first event."""
        needed, terminate, early, last = self._fmu.doStep(t, h, False)
        return self.step_end(t, h, (0, needed, terminate, early, last))  # 0: fmi3OK

    def step_end(self, t: float, h: float, ended: tuple) -> StepEnd:
        """Where a doStep from t by h stopped: its last successful time where it
        returned early, else t + h."""
        status, event, terminate, early, last = ended
        if status > FMI_WARNING:
            raise _status_error(self, "fmi3DoStep", status)
        reached = last if early and last < t + h else t + h
        return StepEnd(reached, bool(event), bool(terminate))

    def failed_step(self, status: int, terminate: bool, last: float) -> StepEnd:
        """The end of a doStep that did not complete: at `last` with
        terminateSimulation, else the FMUError of fmi3DoStep."""
        if terminate and status <= FMI_WARNING:
            return StepEnd(last, terminate=True)
        if status > FMI_WARNING:
            raise _status_error(self, "fmi3DoStep", status)
        raise FMUError(
            "fmi3DoStep",
            "early return",
            self.path,
            "the FMU returned early or asked for an event without Event Mode",
        )

    @_fmi_call
    def handle_event(
        self, max_iterations: int, inputs: Start | None = None
    ) -> EventInfo:
        """Run the event doStep asked for, or a jump of `inputs` (set in Event
        Mode): Event Mode, iteration, Step Mode."""
        self._fmu.enterEventMode()
        self._set_start(inputs or {})
        info = self._iterate(max_iterations)
        if not info.terminate:
            self._fmu.enterStepMode()
        return info


INSTANCE_CLASSES = {
    (f"{c.version}.0", c.interface): c
    for c in (Fmi1Model, Fmi1Slave, Fmi2Model, Fmi2Slave, Fmi3Model, Fmi3Slave)
}


def instantiate(archive: FmuArchive, interface: str) -> FmiInstance:
    """Return a new instance of `interface` from the unpacked `archive`.

    Raises
    ------
    FmibridgeError
        If the FMU does not offer `interface`, or its binary does not load.
    FMUError
        Naming the FMU: no binary for this platform, or an instantiation the
        FMU refused (with its log).
    """
    archive.check_interface(interface)
    identifier = archive.part(interface).modelIdentifier
    import fmpy  # its platform names: the folder fmpy loads the binary from

    platform = fmpy.platform_tuple if archive.fmi_version == "3.0" else fmpy.platform
    folder = archive.unzipped() / "binaries" / platform
    library = folder / f"{identifier}{fmpy.sharedLibraryExtension}"
    if not library.is_file():
        offered = sorted(p.name for p in folder.parent.glob("*"))  # [] if none
        raise FMUError(
            "binaries",
            "missing",
            str(archive.path),
            f"no binary for this platform "
            f"(binaries/{folder.name}/{library.name}); "
            f"the FMU has {offered or 'no binaries'}",
        )
    cls, cwd = INSTANCE_CLASSES[(archive.fmi_version, interface)], os.getcwd()
    try:
        return cls(archive)
    except FmibridgeError:  # ours, FMUError too: already names what failed
        raise
    except Exception as exc:  # noqa: BLE001 - fmpy: "Failed to load shared library"
        raise _load_error(archive.path, library, exc) from None
    finally:
        os.chdir(cwd)  # fmpy changes into the binaries folder and, on failure, stays


# what the loaders say of a library that a binary needs and that is not there
# (Linux's dlopen, macOS's dyld)
MISSING_DEPENDENCY = ("cannot open shared object file", "Library not loaded")


def _load_error(path: Path, library: Path, exc: Exception) -> FmibridgeError:
    """The error of a binary that does not load, in the loader's words."""
    if isinstance(exc.__context__, OSError):
        text = str(exc.__context__)
    else:  # fmpy's own message: its last part, without the unpacked folder
        text = str(exc).rsplit(": ", 1)[-1]
    own = f"{library}: "
    reason = text.removeprefix(own).strip() or type(exc).__name__
    member = f"binaries/{library.parent.name}/{library.name}"
    if not text.startswith(own) and any(w in reason for w in MISSING_DEPENDENCY):
        remedy = (
            "a shared library it needs is missing: install it, or put its folder "
            "on the library path (LD_LIBRARY_PATH, DYLD_LIBRARY_PATH, PATH)"
        )
    else:
        remedy = "the binary is damaged or built for another platform"
    return FmibridgeError(f"{path}: cannot load {member} ({reason}); {remedy}.")
