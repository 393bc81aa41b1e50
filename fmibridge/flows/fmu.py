"""FMU flows: Model Exchange (the master integrates) and Co-Simulation (the FMU does).

Both take parameters, start values and inputs by FMU variable name, checked at
construction. Resets set the continuous states (Model Exchange), or the state
variables where the FMU accepts it, else reset and re-initialise the FMU at the
event time (Co-Simulation); saved FMU states serve rollback. Both run the FMU's
own events as FMI asks: time events, event indicators (`fmu_event_edges`) and
completedIntegratorStep with event iteration (Model Exchange), early return in
FMI 3 Event Mode (Co-Simulation). `terminateSimulation` ends the run.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import warnings
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Generic, NoReturn, TypeGuard, TypeVar, cast

import numpy as np

from ..core._functions import Function
from ..core.errors import (
    FlowTerminated,
    FmibridgeError,
    FmibridgeWarning,
    FMUError,
    ReplayRefused,
    did_you_mean,
)
from ..core.integrators import Scheme
from ..core.numbers import finite, is_real, positive
from ..core.records import TIME_RTOL
from ..core.system import HybridSystem, Mode
from ._cosim import FmuStepper, Readings, keep_last
from ._fmi import FmiFunctions
from ._fmu import FmuIndicators, FmuInputs, FmuProgram, FmuRhs, check_finite
from ._programs import values_with_constants
from ._stepper import Stepper
from .base import Flow, UndoPlan, VectorField
from .fmi import CoSimulationInstance, FmiInstance, ModelExchangeInstance, StepEnd
from .fmu_archive import INTS, NUMERIC_TYPES, FmuArchive, Variable

if TYPE_CHECKING:
    from ..core.guards import Edge
    from .input_table import InputTable

    InputValue = float | Callable[[float], float] | InputTable
InstanceT = TypeVar("InstanceT", bound=FmiInstance)
MAX_EVENT_ITERATIONS = 100  # event iterations of one FMU event before giving up
MAX_SNAPSHOTS = 8  # saved FMU states kept for rollback (a halving needs two)
SAVES_TIMED = 8  # an FMU's first saves timed, for their cost (`save_cost`)
MAX_RECORDED = 64  # step ends whose recorded outputs are kept for the samples
MAX_JOURNAL = 100_000  # calls kept to replay an FMU without state saving (~30 MB)
MAX_EVENTS_PER_STEP = 10_000  # FMU events inside one Co-Simulation step (Zeno?)
JUMP_RTOL = 1e-12  # an input jump this near (relative) to an event's time is its own
# a state read by value reference and its entry in the state vector are one value;
# this leaves a tool that keeps its states scaled (by a nominal) its round-off
STATE_RTOL = 1e-12
REAL_TYPES = ("Real", "Float64", "Float32")
C_REALS = ("Real", "Float64")  # the types the C get and set of reals read and write
FMI1_UNDEFINED_VR = 0xFFFFFFFF  # fmiUndefinedValueReference: no variable (FMI 1.0)
# the Co-Simulation instance's calls that change the FMU, replayed after a reset
JOURNALLED = "initialize _set_start set_reals set_ints do_step handle_event".split()


def _stored_range(fmi_type: str, fmi_version: str) -> tuple[float, float, str] | None:
    """(lowest, highest, what) of the floats `fmi_type`'s setter keeps; None: all."""
    enumeration = "Int64" if fmi_version == "3.0" else "Int32"  # fmi3SetInt64
    name = {"Integer": "Int32", "Enumeration": enumeration}.get(fmi_type, fmi_type)
    if name == "Float32":
        most = float(np.finfo(np.float32).max)
        return -most, most, f"C float, at most {most:g} in magnitude"
    if name not in INTS:
        return None
    info = np.iinfo(name.lower())  # the largest float64 below max + 1 is in range
    highest = float(np.nextafter(float(info.max) + 1.0, 0.0))
    return float(info.min), highest, f"{name}, {info.min} to {info.max}"


def _element_names(variables: Sequence[Variable]) -> tuple[str, ...]:
    return tuple(n for v in variables for n in v.element_names)


def _is_discrete(variable: Variable) -> bool:
    """True for an input that changes only at events (not a continuous real)."""
    return variable.variability == "discrete" or variable.type not in REAL_TYPES


_INPUT_TABLE = f"{__package__}.input_table"


def _is_table(value: object) -> TypeGuard[InputTable]:
    """isinstance(value, InputTable), not loading `flows.input_table` if unloaded."""
    module = sys.modules.get(_INPUT_TABLE)
    return module is not None and isinstance(value, module.InputTable)


class _Reader:
    """Reads variables, one call per FMI type: C gets where it can, else fmpy's."""

    def __init__(self, instance: FmiInstance, variables: Sequence[Variable]) -> None:
        self._instance = instance
        groups: dict[str, list[Variable]] = {}
        for variable in variables:
            groups.setdefault(variable.type, []).append(variable)
        self._calls = [
            (t, [v.vr for v in vs], sum(v.size for v in vs)) for t, vs in groups.items()
        ]
        # the calls read the values type by type: each value's place among them
        kinds = [list(groups).index(v.type) for v in variables for _ in range(v.size)]
        self._take = np.argsort(np.argsort(kinds, kind="stable"), kind="stable")
        scalars = all(not v.shape for v in variables)
        reals = scalars and len(self._calls) == 1 and self._calls[0][0] in C_REALS
        self._ports = instance.real_ports(self._calls[0][1]) if reals else None
        direct = scalars and not reals and bool(self._calls)
        self._readings = self.direct_readings() if direct else None

    def direct_readings(self) -> Readings:
        """Its variables read by their C gets (scalars)."""
        getters = [(*self._instance.c_getter(t), vrs) for t, vrs, _ in self._calls]
        return Readings(self._instance.functions, getters, self._take)

    def read(self) -> np.ndarray:
        if self._instance._fmu is not None:  # not freed
            if self._ports is not None:
                return self._ports.get()
            if self._readings is not None:
                self._instance._touched()  # as a get through fmpy notes it
                return self._readings.values()
        values: list[float] = []
        for fmi_type, vrs, n in self._calls:
            values.extend(self._instance.get_values(fmi_type, vrs, n))
        return np.array(values, dtype=float)[self._take]


class _FmuFlow(Generic[InstanceT]):
    """Shared set-up of both FMU flows: names, parameters, inputs, lifetime."""

    interface = ""
    _next_time = math.inf  # the FMU's next time event (Model Exchange)

    def __init__(
        self,
        fmu: str | Path | FmuArchive,
        *,
        parameters: Mapping[str, object] | None = None,
        start: Mapping[str, object] | None = None,
        inputs: Mapping[str, InputValue] | None = None,
        states: tuple[str, ...] | None = None,
        outputs: Sequence[str] | None = (),
        t0: float | None = None,
        tolerance: float | None = None,
    ) -> None:
        self.archive = fmu if isinstance(fmu, FmuArchive) else FmuArchive(fmu)
        self.path = str(self.archive.path)
        self._instance: InstanceT | None = None
        self._passed = (math.nan, math.nan)  # (state time, input jump run there)
        try:
            self._set_up(parameters, start, inputs, states, outputs)
            experiment = self.archive.experiment  # read only where not given
            if t0 is None:
                t0 = 0.0 if experiment.start is None else experiment.start
            self.t0 = finite("t0", t0)
            if tolerance is not None:  # never a NaN or negative one to its solver
                tolerance = positive("tolerance", tolerance)
            self._tolerance = experiment.tolerance if tolerance is None else tolerance
            self._instance = self.archive.instantiate(self.interface)
            self._bind_readers()
            self._initialize(self.t0)
        except BaseException:
            self.close()
            raise

    def _set_up(self, parameters, start, inputs, states, outputs) -> None:
        self._states_given, self._outputs = states is not None, outputs
        names = self.archive.state_names if states is None else states
        self._take_states([self._variable(n, "state") for n in names])
        checked = self._check_inputs(inputs or {})
        tables = {vr: vu for vr, vu in checked.items() if _is_table(vu[1])}
        # continuous real inputs: set at every evaluation
        self._inputs = {vr: vu for vr, vu in checked.items() if not _is_discrete(vu[0])}
        self._discrete_inputs = {  # held constant: set in Initialization Mode only
            vr: (v.type, u)
            for vr, (v, u) in checked.items()
            if _is_discrete(v) and vr not in tables
        }
        self._discrete_tables = {  # set at their jumps (time events)
            vr: vu for vr, vu in tables.items() if _is_discrete(vu[0])
        }
        self._driven = {**self._inputs, **self._discrete_tables}  # set in a run
        self._jumps = np.empty(0)  # the tables' jumps: their module is loaded if any
        if tables:
            from .input_table import jump_times

            self._jumps = jump_times([(u, _is_discrete(v)) for v, u in tables.values()])
        self._start = {
            **self._check_settable(parameters or {}, "parameter"),
            **self._check_settable(start or {}, "start value"),
        }
        variables = self.archive.variables.values()
        self.units: Mapping[str, str] = {
            n: v.unit for v in variables if v.unit for n in v.element_names
        }

    def _take_states(self, variables: list[Variable]) -> None:
        """Take `variables` as the states; outputs are the other variables."""
        self._state_variables = variables
        self.state_names = _element_names(variables)
        found = self._readable(("output", "local"), REAL_TYPES)
        self._readable_variables = [v for v in found if not v.name.startswith("der(")]
        self.output_names = _element_names(self._readable_variables)
        if self._outputs is None:  # every output
            self._recorded_variables = self._readable(("output",), NUMERIC_TYPES)
        else:
            self._recorded_variables = [
                self._variable(n, "output to record") for n in self._outputs
            ]
        for v in self._recorded_variables:
            if not v.is_numeric:
                raise FmibridgeError(
                    f"{self.path}: {v.name!r} has type {v.type}; a Result records "
                    f"numbers only."
                )
        self.recorded_names = _element_names(self._recorded_variables)

    def _variable(self, name: str, role: str) -> Variable:
        variable = self.archive.variables.get(name)
        if variable is None:
            raise FmibridgeError(
                f"{self.path}: no variable {name!r} (used as {role}); "
                f"the FMU has {sorted(self.archive.variables)}."
            )
        return variable

    def _readable(self, causalities, types) -> list[Variable]:
        """Variables of these causalities and types that are not states."""
        states = {v.name for v in self._state_variables}
        return [
            v
            for v in self.archive.variables.values()
            if v.type in types and v.causality in causalities and v.name not in states
        ]

    def _check_settable(
        self, values: Mapping[str, object], role: str
    ) -> dict[int, tuple[str, object]]:
        """Return {vr: (type, value)} for values the FMU lets us set."""
        checked = {}
        for name, value in values.items():
            variable = self._variable(name, role)
            if variable.causality not in ("parameter", "input") and (
                variable.start_text is None
            ):
                raise FmibridgeError(
                    f"{self.path}: {role} {name!r} cannot be set: it has causality "
                    f"{variable.causality!r} and no start value."
                )
            if variable.variability == "constant":
                raise FmibridgeError(f"{self.path}: {role} {name!r} is a constant.")
            checked[variable.vr] = (variable.type, self._number(variable, value, role))
        return checked

    def _number(self, variable: Variable, value: object, role: str):
        """Check a value (a number, or for an array as many) for `variable`."""
        where = f"{self.path}: {role} {variable.name!r}"
        if not variable.is_numeric:
            raise FmibridgeError(
                f"{where} has type {variable.type}; fmibridge sets numbers (the "
                f"Real, Float, Integer, Boolean and Enumeration types)."
            )
        if not is_real(value):
            raise FmibridgeError(
                f"{where} must be a number (for an array variable, numbers), got "
                f"{value!r} of type {type(value).__name__}."
            )
        values = np.ravel(np.asarray(value, dtype=float))
        if values.size != variable.size:
            raise FmibridgeError(
                f"{where} takes {variable.size} value(s), got {value!r}."
            )
        if not np.all(np.isfinite(values)):
            raise FmibridgeError(f"{where} must be finite, got {value!r}.")
        held = _stored_range(variable.type, self.archive.fmi_version)
        if held and not np.all((held[0] <= values) & (values <= held[1])):
            raise FmibridgeError(
                f"{where} is stored as {held[2]}; got {value!r}, which it "
                f"would store as another number."
            )
        if NUMERIC_TYPES[variable.type] and np.any(values != np.round(values)):
            raise FmibridgeError(f"{where} is an integer, got {value!r}.")
        if variable.type == "Boolean" and not set(values.tolist()) <= {0.0, 1.0}:
            raise FmibridgeError(f"{where} is a Boolean (0 or 1), got {value!r}.")
        return values.tolist() if variable.shape else values[0]

    def _check_inputs(self, inputs: Mapping[str, InputValue]) -> dict:
        """Return {vr: (variable, value)} for inputs: numbers, or u(t) if Real."""
        checked = {}
        for name, value in inputs.items():
            variable = self._variable(name, "input")
            if variable.causality != "input":
                raise FmibridgeError(
                    f"{self.path}: {name!r} is not an input (causality "
                    f"{variable.causality!r})."
                )
            if callable(value) and (_is_discrete(variable) or variable.shape):
                raise FmibridgeError(
                    f"{self.path}: input {name!r} is {variable.variability} "
                    f"{variable.type}; a function of time drives continuous scalar "
                    f"real inputs only (give a number, or a table: it is held)."
                )
            if _is_table(value) and variable.shape:
                raise FmibridgeError(
                    f"{self.path}: input {name!r} is an array; a table drives "
                    f"scalar inputs only."
                )
            if _is_table(value):
                for u in np.unique(value.u).tolist():
                    self._number(variable, u, "input")
            elif not callable(value):
                value = self._number(variable, value, "input")
            checked[variable.vr] = (variable, value)
        return checked

    def _bind_readers(self) -> None:
        self._states_reader = _Reader(self.instance, self._state_variables)
        self._output_reader = _Reader(self.instance, self._readable_variables)
        self._record_reader = _Reader(self.instance, self._recorded_variables)

    def _named(self, x: np.ndarray) -> dict[str, float]:
        """Return the states x and the outputs the FMU holds now, by name."""
        values = self._output_reader.read() if self.output_names else ()
        return {
            **dict(zip(self.state_names, map(float, x), strict=True)),
            **dict(zip(self.output_names, map(float, values), strict=True)),
        }

    def _recorded_values(self) -> dict[str, float]:
        values = self._record_reader.read()
        return dict(zip(self.recorded_names, values.tolist(), strict=True))

    def _values(self, inputs: Mapping, t: float) -> dict:
        """{vr: (type, value at t)} of `inputs` {vr: (variable, u)} (`_value_at`)."""
        return {
            vr: (v.type, self._value_at(u, t, held=_is_discrete(v)))
            for vr, (v, u) in inputs.items()
        }

    def _value_at(self, u: InputValue, t: float, *, held: bool) -> object:
        """An input's value at t (a table's after its jump where it ran at t)."""
        if _is_table(u):
            t_state, t_jump = self._passed
            if t == t_state:
                return u.value(t_jump, held=held, after=True)
            return u.value(t, held=held)
        return u(t) if callable(u) else u

    def _initialize_at(self, t: float, start: Mapping) -> None:
        """Initialize the FMU at t with `start` and every input at t."""
        self._passed = (t, t)  # a jump at the start time has happened
        values = self._values(self._inputs, t)
        for vr, (variable, u) in self._inputs.items():  # functions u(t), once
            if callable(u):
                self._number(variable, values[vr][1], "the value u(t0) of input")
        values |= {**self._discrete_inputs, **self._values(self._discrete_tables, t)}
        self.instance.initialize(t, start, self._tolerance, values)

    def _next_jump(self) -> float:
        k = np.searchsorted(self._jumps, self._passed[1], side="right")
        return float(self._jumps[k]) if k < len(self._jumps) else math.inf

    def _pass_jump(self, t: float) -> None:
        """Mark a table's jump at t (to round-off) as run: t's values are after it."""
        t_jump = self._next_jump()
        if abs(t_jump - t) <= JUMP_RTOL * max(1.0, abs(t)):
            self._passed = (t, t_jump)

    def next_event_time(self) -> float:
        """Return the FMU's next time event or an input table's next jump."""
        return min(self._next_time, self._next_jump())

    def _held_input(self, name: str) -> tuple[int, Callable[[float], float]]:
        """The value reference of a real input and its value u(t) as set now."""
        vr = self._variable(name, "input").vr
        held = self._inputs.get(vr, (None, 0.0))[1]
        return vr, lambda t: cast(float, self._value_at(held, t, held=False))

    @property
    def instance(self) -> InstanceT:
        """The FMU's instance (closed: an error)."""
        if self._instance is None:
            raise FmibridgeError(f"{self.path}: the FMU instance was closed.")
        return self._instance

    @property
    def parameter_values(self) -> dict[str, float]:
        """Every scalar real parameter's value, read from the FMU."""
        variables = [
            v for v in self._readable(("parameter",), REAL_TYPES) if not v.shape
        ]
        values = _Reader(self.instance, variables).read()
        return dict(zip([v.name for v in variables], values.tolist(), strict=True))

    def describe(self) -> dict[str, str]:
        return {
            "flow": f"fmu:{self.interface}",
            "fmu": self.path,
            "fmi_version": self.archive.declared_version,
        }

    def _initialize(self, t0: float) -> None:
        raise NotImplementedError

    def close(self) -> None:
        instance, self._instance = self._instance, None
        if instance is not None:
            instance.free()
        self.archive.cleanup()


class ModelExchangeFlow(_FmuFlow[ModelExchangeInstance], VectorField):
    """An FMI 2.0 / 3.0 Model Exchange FMU; the master integrates it.

    Parameters
    ----------
    fmu : path or FmuArchive
    parameters, start : mapping, optional
        Values by FMU variable name, set before initialisation (a list for an
        array).
    inputs : mapping, optional
        Inputs by name: a number (held), for a continuous real input a
        function u(t) set at every right-hand-side evaluation (so at the
        integrator's stage times), or an `InputTable` (linear for continuous
        real inputs, held for the others; its jumps are time events).
    outputs : sequence of str or None
        Variables the Result records at each sample (None: every output).
    t0, tolerance : float, optional
        Start time and the tolerance passed to the FMU; default: the FMU's
        DefaultExperiment (else 0 and none).
    """

    interface = "ModelExchange"
    _changed_discrete = False  # by the last event iteration

    def _initialize(self, t0: float) -> None:
        self._initialize_at(t0, self._start)
        self._absorb(self.instance.finish_initialization(MAX_EVENT_ITERATIONS))
        self._check_state_order()
        self.x0 = self.instance.get_states()
        self._check_state_values(self.x0)
        self._discrete: dict[int, object] = {}  # discrete inputs as last set
        self._python_inputs = self._attach_inputs()
        self._rhs_function = FmuRhs(self.instance.calls, self.path)  # `rhs_function`
        self._indicators = FmuIndicators(self.instance.calls, self.path)

    def _attach_inputs(self) -> list[str]:
        """Attach the continuous inputs (`_fmu.FmuInputs`); return those Python sets."""
        direct = {  # scalars of the types the C set takes: their sources
            vr: self._input_source(u)
            for vr, (v, u) in self._inputs.items()
            if v.type in C_REALS and not v.shape
        }
        others = {vr: vu for vr, vu in self._inputs.items() if vr not in direct}

        def set_others(t: float) -> None:
            self.instance._set_start(self._values(others, t))

        if self._inputs:
            sources = list(direct.values())
            inputs = FmuInputs(list(direct), sources, set_others if others else None)
            self.instance.calls.attach(inputs)
        return [
            v.name
            for vr, (v, _) in self._inputs.items()
            if vr in others or not isinstance(direct[vr], float | Function)
        ]

    def _input_source(self, u: InputValue) -> object:
        """A number, a Function of t (`engine_entry`), or a Python u(t)."""
        if _is_table(u):
            return lambda t: self._value_at(u, t, held=False)
        if not callable(u):
            return float(cast(float, u))  # a number: a table returned above
        entry = getattr(u, "engine_entry", None)
        found = entry(0) if entry is not None else None
        if found is not None and found[1] == 0 and found[0].n_out == 1:
            return found[0]
        return u

    def _check_state_order(self) -> None:
        """Follow FMI 1.0's state order (fmiGetStateValueReferences); refuse others."""
        reported = self.instance.state_references()
        if reported is None or reported == [v.vr for v in self._state_variables]:
            return
        variables = [self._state_variable(k, vr) for k, vr in enumerate(reported)]
        if not self._states_given and None not in variables:
            self._take_states(cast(list[Variable], variables))
            self._bind_readers()
            return
        names = [v.name if v else vr for v, vr in zip(variables, reported, strict=True)]
        raise FmibridgeError(
            f"{self.path}: the FMU's state vector is {names}, not "
            f"{list(self.state_names)}; name the states in that order (`states`)."
        )

    def _state_variable(self, k: int, vr: int) -> Variable | None:
        """State k's variable (vr's first; fmiUndefinedValueReference: `state[k+1]`)."""
        variables = self.archive.variables
        if vr != FMI1_UNDEFINED_VR:
            return next((v for v in variables.values() if v.vr == vr), None)
        name = f"state[{k + 1}]"
        while name in variables:
            name = "_" + name
        return Variable(name, vr, "Real", "local", "continuous", None)

    def _check_state_values(self, x: np.ndarray) -> None:
        """Refuse x unless the states read by value reference hold it (FMI 2/3)."""
        if self.archive.fmi_version == "1.0":
            return
        by_reference = self._states_reader.read()
        if by_reference.shape == x.shape and np.allclose(
            x, by_reference, rtol=STATE_RTOL, atol=0.0, equal_nan=True
        ):
            return
        start = (
            f"{self.path}: after initialisation the state vector "
            f"(GetContinuousStates) is {x.tolist()}, but the states "
            f"{list(self.state_names)} hold {by_reference.tolist()}"
        )
        if self.state_names != self.archive.state_names:  # named by the caller
            raise FmibridgeError(f"{start}; name them in the state vector's order.")
        listed = [d.variable.name for d in self.archive.description.derivatives]
        raise FmibridgeError(
            f"{start}: the model description lists its Derivatives {listed} in "
            f"another order than its state vector; the FMU is malformed (export "
            f"it again)."
        )

    def _absorb(self, info) -> None:
        self._next_time = info.next_time
        self.is_terminated = self.is_terminated or info.terminate

    def _set_inputs(self, t: float) -> None:
        self.instance.calls.set_inputs(t)

    def jacobian_function(self) -> Function | None:
        """Return df/dx from the FMU's directional derivatives (`fmu_jacobian`)."""
        if "_jacobian" not in self.__dict__:
            from .fmu_jacobian import fmu_jacobian  # where CVODE runs only

            self._jacobian = fmu_jacobian(self)
        return self._jacobian

    def state_nominals(self) -> np.ndarray:
        """Return each state's nominal value (1 where the FMU gives none)."""
        from .fmu_jacobian import state_nominals  # where CVODE runs only

        return state_nominals(self)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return the states and the FMU's outputs at (t, x), by name."""
        self._set_inputs(t)
        self.instance.calls.set_time_and_states(t, x)
        return self._named(x)

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded outputs at (t, x); an ended FMU keeps its values."""
        if not self.recorded_names:
            return {}, ()
        if not self.is_terminated:  # after terminateSimulation it stays in Event Mode
            self._set_inputs(t)
            self.instance.calls.set_time_and_states(t, x)
        return self._recorded_values(), ()

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run a time event: the FMU's own, an input table's jump, or both."""
        self._pass_jump(t)
        return self.event_update(t, x)

    def step_completed(self, t: float, x: np.ndarray) -> bool:
        """Call completedIntegratorStep where the FMU needs it; True: event now."""
        if not self.instance.needs_completed_step or self.is_terminated:
            return False
        self._set_inputs(t)
        enter, terminate = self.instance.completed_step(t, x)
        self.is_terminated = self.is_terminated or terminate
        return enter and not terminate

    def set_discrete_inputs(
        self, t: float, x: np.ndarray, ints: Mapping[int, int]
    ) -> None:
        """Set discrete inputs through the FMU's event mode, where they changed."""
        changed = {vr: v for vr, v in ints.items() if self._discrete.get(vr) != v}
        if changed:
            self.instance.calls.set_time_and_states(t, x)
            typed = {vr: (self.instance._int, v) for vr, v in changed.items()}
            self._absorb(self.instance.event_iteration(MAX_EVENT_ITERATIONS, typed))
            self._discrete.update(changed)

    def rhs_with(self, t: float, x: np.ndarray, name: str, value: float) -> np.ndarray:
        """Return dx/dt with the real input `name` at `value` for this call only."""
        vr, held = self._held_input(name)
        self._set_inputs(t)
        self.instance.set_reals([vr], [value])
        try:
            derivatives = self.instance.calls.derivatives(t, x)
            return check_finite(derivatives, "get derivatives", self.path, t)
        finally:
            self.instance.set_reals([vr], [held(t)])

    def event_indicator(self, i: int) -> Callable[[float, np.ndarray], float]:
        """Return g(t, x) = the FMU's i-th event indicator; its `engine_entry(n)`
        is entry i of all of them as one Function (`flows._fmu.FmuIndicators`)."""
        function = self._indicators

        def indicator(t: float, x: np.ndarray) -> float:
            return float(function(t, x)[i])

        indicator.__name__ = f"event_indicator_{i}"
        # read with getattr (`flows.compiled.engine_entry`, completion's contact)
        vars(indicator).update(
            engine_entry=lambda n: (function, i) if n == function.n_in else None,
            fmu_flow=self,
            indicator_index=i,
        )
        return indicator

    def expression_function(self, program, constants, failure, what: str):
        """Return `program` over t, the states, the FMU's scalar real outputs and
        `constants` as a Function of (t, x) (`flows._fmu.FmuProgram`); None
        where it reads another name."""
        found = super().expression_function(program, constants, failure, what)
        if found is not None:
            return found
        nx = len(self.state_names)
        places = {"t": 0, **{n: 1 + i for i, n in enumerate(self.state_names)}}
        outputs = [
            n for n in program.names if n not in places and n in self.output_names
        ]
        variables = [self.archive.variables.get(n) for n in outputs]
        if any(v is None or v.type not in C_REALS or v.shape for v in variables):
            return None
        places.update({name: 1 + nx + k for k, name in enumerate(outputs)})
        v = values_with_constants(program, places, constants)
        if v is None:
            return None
        vrs = [cast(Variable, variable).vr for variable in variables]
        programs, calls = [program.bound(places)], self.instance.calls
        return FmuProgram(calls, programs, [failure], v, vrs, 1 + nx, what)

    def describe(self) -> dict[str, str]:
        """Return the provenance entries, with the inputs set from Python."""
        calls = "C functions called directly"
        if self._python_inputs:
            calls += f"; inputs set from Python: {', '.join(self._python_inputs)}"
        return {**super().describe(), "fmu_calls": calls}

    def event_update(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the FMU's event mode at (t, x) (input tables at t); return x after."""
        self._set_inputs(t)
        before = self.instance.calls.event_indicators(t, x)
        tables = self._values(self._discrete_tables, t)
        self._absorb(self.instance.event_iteration(MAX_EVENT_ITERATIONS, tables))
        x_after = self.instance.get_states()
        # an FMU that ended the run stays in Event Mode: nothing to read there
        self._changed_discrete = self.is_terminated or not np.array_equal(
            before, self.instance.calls.event_indicators(t, x_after)
        )
        return x_after

    def event_changed_discrete(self) -> bool:
        """True if the last event iteration changed the event indicators."""
        return self._changed_discrete


class CoSimulationFlow(_FmuFlow[CoSimulationInstance], Flow):
    """An FMI 1.0, 2.0 or 3.0 Co-Simulation FMU; the FMU integrates itself.

    `advance` is repeatable: the FMU state is saved before the steps a run may
    undo (`plan_undo`); the origin and the points a reset entered are entered
    again by the same calls (`anchored`). An FMI 3 FMU with Event Mode returns
    early at its own events, each run where it stopped and logged as
    `fmu_event`. In a run without guards, the compiled loops take the steps
    (`_cosim.FmuStepper`) where they can; `describe` says which path ran. An
    FMU that cannot save its state is stepped forward only (`forward_only`) and
    returns to a point it passed by a reset and a replay of its calls since its
    last initialisation (`n_replays`; dropped past MAX_JOURNAL calls or a
    doStep called in C, until the next initialisation).

    Raises
    ------
    ReplayRefused
        Where a step must be undone and the FMU can neither get and set its
        state nor reset.
    """

    interface = "CoSimulation"
    # False: every step is `advance`, never the compiled loops' (`stepper`)
    compiled_steps: ClassVar[bool] = True
    n_replays = 0  # resets and replays that returned the FMU to a point
    n_state_saves = 0  # FMU states saved since `plan_undo`
    save_cost = 0.0  # a save's thread CPU seconds, the least of the first SAVES_TIMED
    _saves_timed = 0
    _journal: list[tuple[Callable, tuple]] | None = None  # calls since initialisation
    _generation = 0  # initialisations so far: a mark holds in its own
    _busy = False  # in a journalled call, or a replay
    _snap = 0.0  # times within this of self._at's are the same time
    _can_set_states: bool | None = None
    _may_undo: UndoPlan | None = None  # None: every step may be undone
    _undoes_none = False  # the run's plan undoes no step (no guards)
    _steps = "python (no compiled loop took them)"  # `describe`

    def _initialize(self, t0: float) -> None:
        self._can_save = self.archive.capability("CoSimulation", "canGetAndSetFMUstate")
        if not self._can_save:
            for name in JOURNALLED:
                setattr(self.instance, name, self._journalled(name))
        # point -> (journal generation, length, outputs) where the FMU was there
        self._marks: OrderedDict[tuple, tuple[int, int, bytes]] = OrderedDict()
        self._initialize_at(t0, self._start)
        self.x0 = self._states_reader.read()
        self.reports_events = self.instance.uses_event_mode  # FMI 3 Event Mode
        self._snapshots: OrderedDict[tuple, object] = OrderedDict()
        self._at: tuple = (t0, self.x0.tobytes())
        self._origin = self._at  # where the first initialisation put it
        # the points a reset and initialisation entered (`anchored`)
        self._anchors: OrderedDict[tuple, None] = OrderedDict()
        self._events: tuple[tuple, tuple] = (self._at, ())  # of the last step
        self._left: deque[tuple] = deque(maxlen=MAX_SNAPSHOTS)  # unsaved step starts
        # x bytes -> (t, snap, recorded outputs) at the ends of the last steps
        self._recorded_at: OrderedDict[bytes, tuple] = OrderedDict()

    def _journalled(self, name: str) -> Callable:
        """The instance's call `name`, kept in the journal where not inside one."""
        call = getattr(self.instance, name)

        def record(*args):
            busy, self._busy = self._busy, True
            try:
                result = call(*args)  # a call the FMU refused changed nothing
            finally:
                self._busy = busy
            if not busy and name == "initialize":  # the journal starts anew
                self._journal = []
                self._generation += 1
            if not busy and self._journal is not None:
                self._journal.append((call, args))
                if len(self._journal) > MAX_JOURNAL:
                    self._journal = None
            return result

        return record

    def plan_undo(self, may_undo: UndoPlan) -> None:
        """Save the FMU state before a step only where may_undo(t, x, h); called
        once at a run's start, it frees the states an earlier run saved."""
        self._may_undo, self.n_state_saves = may_undo, 0
        self._undoes_none = not getattr(may_undo, "guards", True)
        self._left.clear()
        self._free_snapshots()
        self._anchors.clear()

    def _free_snapshots(self) -> None:
        if self._instance is not None:
            for snapshot in getattr(self, "_snapshots", {}).values():
                self._instance.free_state(snapshot)
        self._snapshots = OrderedDict()

    @property
    def forward_only(self) -> bool:
        """True where a return to a point the FMU left costs a replay."""
        return not self._can_save

    def stepper(self, scheme: Scheme) -> Stepper:
        """Return the FMU's steps for the compiled loops (`_cosim.FmuStepper`)."""
        refused = "compiled steps off" if not self.compiled_steps else self._refusal()
        if refused is not None:
            self._steps = f"python ({refused})"
            return super().stepper(scheme)
        self._steps = "compiled"
        calls = (self.instance.functions, [v.vr for v in self._state_variables])
        sources = [  # the inputs as (vr, times, values, held), a number as one row
            (vr, u.t, u.u, _is_discrete(v))
            if _is_table(u)
            else (vr, np.zeros(1), np.array([u], dtype=float), _is_discrete(v))
            for vr, (v, u) in self._driven.items()
        ]
        readings = self._record_reader.direct_readings()
        return FmuStepper(self, calls, scheme, readings, sources, TIME_RTOL)

    def _refusal(self) -> str | None:
        """Why the compiled loops cannot take the FMU's steps (None: they can)."""
        if any(v.type not in C_REALS or v.shape for v in self._state_variables):
            return "states other than scalar reals"
        if any(v.shape for v in self._recorded_variables):
            return "recorded outputs that are arrays"
        if any(
            v.type not in C_REALS
            or v.shape
            or not (isinstance(u, int | float) or _is_table(u))
            for v, u in self._driven.values()
        ):
            return "inputs other than tables and numbers of scalar reals"
        return None

    @property
    def steps_in_blocks(self) -> bool:
        """True where the steps are compiled and the run undoes none."""
        return self._undoes_none and self._steps == "compiled"

    def describe(self) -> dict[str, str]:
        """Return the provenance entries, with the path that took the steps."""
        steps = self._steps
        if steps == "compiled" and not self._undoes_none:
            steps = "python (the run may undo steps: guards)"
        return {**super().describe(), "steps": steps}

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h): doStep from (t, x), saved first if it may be undone."""
        may_undo = self._may_undo is not None and self._may_undo(t, x, h)
        self.goto(t, x)
        if may_undo:
            self.keep()
        elif self._may_undo is not None:
            self._left.append(self._at)
        self._set_inputs(t)
        return self._step(t, h)

    def _set_inputs(self, t: float) -> None:
        if self._driven:
            self.instance._set_start(self._values(self._driven, t))

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run an input table's jump at t: the inputs after it are set right
        before the doStep from t, with no read in between (Dymola's FMUs take a
        read after the set as the event and meet the jump late), unless a
        recorded output feeds through from a table (`FmuArchive.feedthrough`)."""
        self._pass_jump(t)
        if self.reports_events:  # FMI 3 Event Mode: the jump is an event there
            self.goto(t, x)
            inputs = self._values(self._driven, t)
            info = self.instance.handle_event(MAX_EVENT_ITERATIONS, inputs)
            self.is_terminated = self.is_terminated or info.terminate
            self._recorded_at.clear()
            y = self._states_reader.read()
            self._at = (t, y.tobytes())
            return check_finite(y, "fmi3UpdateDiscreteStates", self.path, t)
        if self._reads_jumps:
            self.goto(t, x)
            self._set_inputs(t)
            self._recorded_at.clear()  # outputs that feed through now differ
        return x

    @functools.cached_property
    def _reads_jumps(self) -> bool:
        """True if a recorded output may depend directly on an input table."""
        tables = {v.name for v, u in self._driven.values() if _is_table(u)}
        return bool(tables) and any(
            (inputs := self.archive.feedthrough(v.name)) is None or inputs & tables
            for v in self._recorded_variables
        )

    def _step(self, t: float, h: float, first: StepEnd | None = None) -> np.ndarray:
        """doStep to t + h with the FMU's own events (`first`: a C doStep's end)."""
        t_now, t_end = t, t + h
        events: list[tuple] = []  # `_fmu_event`'s
        for _ in range(MAX_EVENTS_PER_STEP):
            end = first or self.instance.do_step(t_now, t_end - t_now)
            first = None
            if end.event_needed:
                events.append(self._fmu_event(end.t))
            if end.terminate or self.is_terminated:
                self._terminate(end.t, tuple(events))
            if end.t >= t_end:
                y = self._states_reader.read()
                self._at, self._snap = (t_end, y.tobytes()), TIME_RTOL * h
                self._events = (self._at, tuple(events))
                if self.recorded_names:
                    point = (t_end, self._snap, self._recorded_values())
                    keep_last(self._recorded_at, self._at[1], point, MAX_RECORDED)
                return check_finite(y, "doStep", self.path, t_end)
            t_now = end.t
        raise FMUError(
            "doStep",
            "too many events",
            self.path,
            f"more than {MAX_EVENTS_PER_STEP} FMU events between t = {t!r} and "
            f"{t_end!r} (Zeno?)",
        )

    def finish_step(
        self, t: float, h: float, ended: tuple | None, y: np.ndarray
    ) -> np.ndarray:
        """Finish the step from t of h whose doStep `_cosim.FmuStepper` called:
        `ended` (status, eventHandlingNeeded, terminateSimulation, earlyReturn,
        last successful time) goes on as `_step`; None: it completed at y."""
        if ended is None:
            self.stepped(t + h, y, h)
            return check_finite(y, "doStep", self.path, t + h)
        return self._step(t, h, self.instance.step_end(t, h, ended))

    def _terminate(self, t: float, events: tuple = ()) -> NoReturn:
        """Raise FlowTerminated at t, where the FMU ended the simulation."""
        x = self._states_reader.read()
        self._at, self._snap = (t, x.tobytes()), 0.0
        self._events = (self._at, events)
        raise FlowTerminated(t, x)

    def stepped(self, t_end: float, y: np.ndarray, h: float) -> None:
        """Note a compiled step (`_cosim`) to (t_end, y), unsaved and unjournaled."""
        if self._may_undo is not None:
            self._left.append(self._at)
        self._journal = None
        self._at, self._snap = (t_end, y.tobytes()), TIME_RTOL * h

    def compiled_calls(self) -> FmiFunctions | None:
        """Return the FMU's C calls for the master's compiled step (None: none)."""
        in_python = self.reports_events or self._driven or self.recorded_names
        if in_python or not self._can_save or self._refusal() is not None:
            return None
        return self.instance.functions

    def _fmu_event(self, t: float) -> tuple:
        """Run the event doStep stopped for at t; name None: silent (`observe`)."""
        x_before, before = self._states_reader.read(), self._recorded_values()
        info = self.instance.handle_event(MAX_EVENT_ITERATIONS)
        self.is_terminated = self.is_terminated or info.terminate
        x_after, after = self._states_reader.read(), self._recorded_values()
        same = np.array_equal(x_before, x_after) and before == after
        return (t, None if same else "fmu_event", x_before, x_after, before, after)

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded outputs at (t, x), and the FMU's own events in the
        step that ended there (once)."""
        key, events = self._events
        events = events if key == self._at and self._is_at((t, x.tobytes())) else ()
        if events:
            self._events = (key, ())
        if not self.recorded_names:
            return {}, events
        t_end, snap, recorded = self._recorded_at.get(x.tobytes(), (t, -1.0, None))
        if recorded is None or abs(t - t_end) > snap:
            self.goto(t, x)
            recorded = self._recorded_values()
        return recorded, events

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return the states and the FMU's outputs at (t, x), by name."""
        self.goto(t, x)
        return self._named(x)

    def advance_with(
        self, t: float, x: np.ndarray, h: float, name: str, value: float
    ) -> np.ndarray:
        """Return x(t + h) with the real input `name` at `value` for this step only."""
        vr, held = self._held_input(name)
        self.goto(t, x)
        self.keep()  # a probe: the run returns to (t, x)
        self._set_inputs(t)
        self.instance.set_reals([vr], [value])
        try:
            return self._step(t, h)
        finally:
            self.instance.set_reals([vr], [held(t)])

    def set_discrete_inputs(
        self, t: float, x: np.ndarray, ints: Mapping[int, int]
    ) -> None:
        """Set discrete inputs (step mode) before the next doStep from (t, x)."""
        self.goto(t, x)
        self.instance.set_ints(list(ints), list(ints.values()))
        self._recorded_at.clear()  # outputs that feed through now differ

    def goto(self, t: float, x: np.ndarray) -> None:
        """Put the FMU at (t, x): restore a saved state, or enter a reset state
        (a time within TIME_RTOL of the step of where the FMU is is the same)."""
        key = (t, x.tobytes())
        if not self._is_at(key):
            if key in self._snapshots:
                self.instance.set_state(self._snapshots[key])
            elif self.anchored(key):
                self._reenter(t, x)
            elif self._marks.get(key, (-1,))[0] == self._generation:  # a replay
                self._replay(key, x)
            else:
                if key in self._left and self._can_save:
                    warnings.warn(
                        f"{self.path}: a step from t = {t!r} was undone that no "
                        f"saved FMU state covers (its guard's crossing was not "
                        f"foreseen); the FMU re-enters t = {t!r} by a reset, exact "
                        f"only where its state variables are its whole state.",
                        FmibridgeWarning,
                        stacklevel=1,
                    )
                self._enter(t, x)
            self._at = key
        if self._may_undo is None:
            self.keep()

    def keep(self) -> None:
        """Save the FMU state where it is (where the FMU can), for `goto`."""
        key = self._at
        if self._can_save and key not in self._snapshots:
            timed = self._saves_timed < SAVES_TIMED  # the first saves are timed
            start = time.thread_time() if timed else 0.0
            state = self.instance.get_state()
            if timed:
                spent = time.thread_time() - start
                first = self._saves_timed == 0
                self.save_cost = spent if first else min(self.save_cost, spent)
                self._saves_timed += 1
            self.n_state_saves += 1
            free = self.instance.free_state
            keep_last(self._snapshots, key, state, MAX_SNAPSHOTS, False, free)
        elif self._journal is not None:  # a length at which the FMU was at key
            generation, _, outputs = self._marks.get(key, (-1, 0, b""))
            if generation != self._generation and not self._state_variables:
                outputs = self._output_reader.read().tobytes()  # stateless: its mark
            mark = (self._generation, len(self._journal), outputs)
            keep_last(self._marks, key, mark, MAX_SNAPSHOTS, False)

    def _replay(self, key: tuple, x: np.ndarray) -> None:
        """Return to `key` (at x) by a reset and a replay of the journal to its mark."""
        reset, (_, n, outputs) = self.instance.reset_name, self._marks[key]
        cannot = "fmibridge cannot return this Co-Simulation FMU to a point it left"
        if self._journal is None:
            raise ReplayRefused(
                reset,
                "journal dropped",
                self.path,
                f"{cannot}: it cannot save its state, and its calls since the last "
                f"initialisation (more than {MAX_JOURNAL}) are no longer kept to "
                f"replay (nor past a doStep called in C, in a run without guards)",
            )
        self._reset(
            f"{cannot}: it can neither save its state nor reset to replay its steps",
            ReplayRefused,
        )
        self._journal = self._journal[:n]
        self._busy = True
        try:
            for call, args in self._journal:
                call(*args)
        finally:
            self._busy = False
        self.n_replays += 1
        if not (
            np.array_equal(self._states_reader.read(), x)
            and (outputs == b"" or self._output_reader.read().tobytes() == outputs)
        ):
            raise FMUError(
                reset,
                "replay differs",
                self.path,
                f"replaying this FMU's calls up to t = {key[0]!r} did not give the "
                f"states and outputs it had there (its reset or its steps are not "
                f"reproducible), so it cannot be returned there without state saving",
            )

    def can_return(self, t: float, x: np.ndarray, saved: bool = False) -> bool:
        """True if `goto(t, x)` needs no reset of a point left unsaved: a saved
        state, an `anchored` point, or (unless `saved`) where the FMU is."""
        key = (t, x.tobytes())
        if self._is_at(key):
            key = self._at
            if not saved:
                return True
        return key in self._snapshots or self.anchored(key)

    def anchored(self, key: tuple) -> bool:
        """True if the point key, (t, x bytes), is the origin (of an FMU that
        saves its state) or one a reset and initialisation entered."""
        return key in self._anchors or (key == self._origin and self._can_save)

    def replay_missed(self, t_from: float, t: float, x: np.ndarray) -> None:
        """Enter (t, x) by a reset, with a warning: replaying this FMU's steps
        from t_from did not reach x (`cosim_master`)."""
        warnings.warn(
            f"{self.path}: replaying its steps from t = {t_from!r} with the inputs "
            f"it had in them did not reach the states it had at t = {t!r} (its "
            f"steps are not reproducible from its inputs); it re-enters t = {t!r} "
            f"by a reset, exact only where its state variables are its whole state.",
            FmibridgeWarning,
            stacklevel=3,
        )
        self._enter(t, x)
        self._at = (t, x.tobytes())

    def _is_at(self, key: tuple) -> bool:
        t_at, x_at = self._at
        return key[1] == x_at and abs(key[0] - t_at) <= self._snap

    def _enter(self, t: float, x: np.ndarray) -> None:
        """Enter unsaved (t, x): from a state saved at t, where the FMU is, or anew."""
        same_time = [k for k in self._snapshots if k[0] == t]
        if same_time and self._can_set_states is not False:
            self.instance.set_state(self._snapshots[same_time[-1]])
            if self._set_state_variables(x):
                return
        elif (t, x.tobytes()) == self._origin:
            self._reenter(t, x)
            return
        elif not self._can_save:  # only at the FMU's own time
            t_at = self._at[0]
            if not (abs(t - t_at) <= self._snap or t == t_at):
                raise FMUError(
                    *self.instance.no_state_saving,
                    self.path,
                    f"fmibridge needs it to return this Co-Simulation FMU from "
                    f"t = {t_at!r} to t = {t!r}, a point it did not pass recently "
                    f"(only the last {MAX_SNAPSHOTS} are replayed); use the Model "
                    f"Exchange interface or re-export the FMU with state saving",
                )
            if not self._set_state_variables(x):
                self._reinitialize(t, x)
            return
        self._reinitialize(t, x)
        keep_last(self._anchors, (t, x.tobytes()), None, MAX_SNAPSHOTS, False)

    def _reenter(self, t: float, x: np.ndarray) -> None:
        """Enter (t, x) again by the calls that entered it first (`anchored`)."""
        origin = (t, x.tobytes()) == self._origin
        if origin:
            t = self._origin[0]  # the very float of the first initialisation
            self.instance.reset()
            self._initialize_at(t, self._start)
        else:
            self._reinitialize(t, x)
        if self._states_reader.read().tobytes() == x.tobytes():
            return
        failed = (
            f"initialised again after a reset, this Co-Simulation FMU did not "
            f"take the states it took at t = {t!r} the first time, so a new "
            f"run cannot start where the first one did; open it again"
            if origin
            else f"initialised again at t = {t!r} with the same start values, this "
            f"Co-Simulation FMU did not take the states it took there the "
            f"first time, so the run cannot return there"
        )
        raise FMUError(self.instance.reset_name, "not reproducible", self.path, failed)

    def _set_state_variables(self, x: np.ndarray) -> bool:
        """Set the state variables to x; False where the FMU refuses."""
        if self._can_set_states is False:
            return False
        try:
            self.instance._set_start(self._state_values(x))
        except FMUError:
            self._can_set_states = False
            return False
        self._can_set_states = True
        return True

    def _state_values(self, x: np.ndarray) -> dict[int, tuple[str, object]]:
        values, k = {}, 0
        for v in self._state_variables:
            chunk = x[k : k + v.size].tolist()
            values[v.vr], k = (v.type, chunk if v.shape else chunk[0]), k + v.size
        return values

    def _reinitialize(self, t: float, x: np.ndarray) -> None:
        names = ", ".join(repr(v.name) for v in self._state_variables)
        self._reset(
            f"fmibridge cannot apply a reset that sets the state variables "
            f"{names} at t = {t!r}: this Co-Simulation FMU refuses them in Step "
            f"Mode and cannot be reset to take them as start values (nor "
            f"restore a saved state); a reset that sets only inputs or tunable "
            f"parameters needs none of this"
        )
        self._initialize_at(t, {**self._start, **self._state_values(x)})

    def _reset(self, refused: str, error: type[FMUError] = FMUError) -> None:
        """Reset the FMU; where it refuses, raise `error` saying `refused`."""
        try:
            self.instance.reset()
        except FMUError as exc:
            raise error(exc.function, exc.status, self.path, refused) from None

    def close(self) -> None:
        """Free the saved FMU states, the instance and the unpacked folder."""
        self._free_snapshots()
        super().close()


FLOW_CLASSES: dict[str, type[ModelExchangeFlow] | type[CoSimulationFlow]] = {
    flow.interface: flow for flow in (ModelExchangeFlow, CoSimulationFlow)
}
INTERFACE_NAMES = {"me": "ModelExchange", "cs": "CoSimulation"} | {
    name: name for name in FLOW_CLASSES
}


def open_fmu(
    fmu: str | Path | FmuArchive, interface: str | None = None, **options
) -> ModelExchangeFlow | CoSimulationFlow:
    """Open an FMU as a flow: 'me' (Model Exchange, preferred) or 'cs', with
    the flow's `options` (`parameters`, `start`, `inputs`, `outputs`, `t0`,
    `tolerance`).

    Raises
    ------
    FmibridgeError
        For an unknown `interface`, or one the FMU does not offer.

    Examples
    --------
    >>> flow = open_fmu("fmus/build/BouncingBall.fmu", "me")  # doctest: +SKIP
    """
    archive = fmu if isinstance(fmu, FmuArchive) else FmuArchive(fmu)
    if interface is None:
        offered = [i for i in archive.interfaces if i in FLOW_CLASSES]
        interface = offered[0] if offered else archive.interfaces[0]
    if interface != "ScheduledExecution":
        interface = interface_type(interface)
    archive.check_interface(interface)
    return FLOW_CLASSES[interface](archive, **options)


def interface_type(interface: object) -> str:
    """Return the interface type ('ModelExchange' or 'CoSimulation') named by
    `interface` in any case: 'me', 'cs' or FMPy's `fmi_type` names; else raise."""
    named = {name.lower(): kind for name, kind in INTERFACE_NAMES.items()}
    if isinstance(interface, str) and interface.lower() in named:
        return named[interface.lower()]
    meant = did_you_mean(str(interface), list(INTERFACE_NAMES))
    raise FmibridgeError(
        f"`interface` (FMPy's `fmi_type`) must be 'me' or 'cs' (or "
        f"'ModelExchange', 'CoSimulation'), in any case; got {interface!r}{meant}."
    )


def fmu_event_edges(flow: Flow, mode: str) -> tuple[Edge, ...]:
    """Return a Model Exchange FMU's event indicators as self-loops of `mode`:
    'either' guards whose reset, just beyond the surface, runs the FMU's event
    mode. Other flows have none (Co-Simulation handles them in doStep)."""
    if not isinstance(flow, ModelExchangeFlow):
        return ()
    from ..core.guards import (
        Edge,  # loaded where edges are: a CS run has none
        Guard,
    )

    return tuple(
        Edge(
            Guard(flow.event_indicator(i), "either", reset_at="beyond"),
            mode,
            flow.event_update,
            name=f"fmu_event_{i}",
            discrete_change=flow.event_changed_discrete,
        )
        for i in range(flow.instance.nz)
    )


def fmu_system(
    fmu: str | Path | FmuArchive, interface: str | None = None, **options
) -> HybridSystem:
    """Return an exported FMU with its own events (`fmu_event_edges`) as a
    one-mode HybridSystem recording every output (unless `outputs` says
    otherwise), its `experiment` the FMU's DefaultExperiment."""
    flow = open_fmu(fmu, interface, **{"outputs": None, **options})
    try:
        return HybridSystem(
            [Mode("model", flow, fmu_event_edges(flow, "model"))],
            "model",
            flow.x0,
            t0=flow.t0,
            parameters=flow.parameter_values,
            name=flow.archive.path.stem,
            experiment=flow.archive.experiment,
        )
    except BaseException:
        flow.close()
        raise
