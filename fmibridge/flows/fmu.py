"""FMU flows: Model Exchange (the master integrates) and Co-Simulation (the FMU does).

Both take parameters, start values and inputs by FMU variable name, check them
against the model description at construction, and free the instance on
`close()`. Resets reach the FMU by setting state:
Model Exchange sets continuous states; Co-Simulation sets the state variables
where the FMU accepts it and otherwise resets the instance and re-initialises
it at the event time with the new state as start values. Saved FMU states
serve rollback when a step is halved.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from ..core.errors import FmibridgeError, FMUError
from ..core.integrators import Scheme
from ..core.system import Edge, Guard, HybridSystem, Mode
from .base import RATE_STEP, Flow, VectorField, compiled_steps
from .compiled import BLOCK, guard_sides
from .fmi import FmiInstance, FmuArchive

InputValue = float | Callable[[float], float]
MAX_EVENT_ITERATIONS = 100  # event iterations of one FMU event before giving up
MAX_SNAPSHOTS = 8  # saved FMU states kept for rollback (a halving needs two)


class _FmuFlow:
    """Shared set-up of both FMU flows: names, parameters, inputs, lifetime."""

    interface = ""

    def __init__(
        self,
        fmu: str | Path | FmuArchive,
        *,
        parameters: Mapping[str, float] | None = None,
        start: Mapping[str, float] | None = None,
        inputs: Mapping[str, InputValue] | None = None,
        states: tuple[str, ...] | None = None,
        t0: float = 0.0,
    ) -> None:
        self.archive = fmu if isinstance(fmu, FmuArchive) else FmuArchive(fmu)
        self.path = str(self.archive.path)
        self.state_names = states or self._state_names_from_description()
        self._state_vrs = [self._vr(n, "state") for n in self.state_names]
        self._inputs = self._check_inputs(inputs or {})
        settable = {
            **self._check_settable(parameters or {}, "parameter"),
            **self._check_settable(start or {}, "start value"),
        }
        self._start_reals = {
            vr: v for vr, (v, is_int) in settable.items() if not is_int
        }
        self._start_ints = {
            vr: round(v) for vr, (v, is_int) in settable.items() if is_int
        }
        self.output_names = self._readable_names()
        self._output_vrs = [self._vr(n, "output") for n in self.output_names]
        self._instance: FmiInstance | None = self.archive.instantiate(self.interface)
        try:
            self._initialize(t0)
        except BaseException:
            self.close()
            raise

    # -- names and checks ------------------------------------------------------

    def _state_names_from_description(self) -> tuple[str, ...]:
        derivatives = self.archive.description.derivatives
        if not derivatives:
            raise FmibridgeError(
                f"{self.path}: the model description lists no state derivatives; "
                f"name the state variables (`states` in the adapter file)."
            )
        return tuple(d.variable.derivative.name for d in derivatives)

    def _vr(self, name: str, role: str) -> int:
        variable = self.archive.variables.get(name)
        if variable is None:
            raise FmibridgeError(
                f"{self.path}: no variable {name!r} (used as {role}); "
                f"the FMU has {sorted(self.archive.variables)}."
            )
        return variable.vr

    def _check_settable(
        self, values: Mapping[str, float], role: str
    ) -> dict[int, tuple]:
        """Return {vr: (value, is_integer)} for values the FMU lets us set."""
        checked = {}
        for name, value in values.items():
            vr = self._vr(name, role)
            variable = self.archive.variables[name]
            if (
                variable.causality not in ("parameter", "input")
                and variable.start is None
            ):
                raise FmibridgeError(
                    f"{self.path}: {role} {name!r} cannot be set: it has causality "
                    f"{variable.causality!r} and no start value."
                )
            if variable.variability == "constant":
                raise FmibridgeError(f"{self.path}: {role} {name!r} is a constant.")
            if not np.isfinite(value):
                raise FmibridgeError(
                    f"{self.path}: {role} {name!r} must be finite, got {value!r}."
                )
            if variable.type not in ("Real", "Float64", "Integer", "Int32"):
                raise FmibridgeError(
                    f"{self.path}: {role} {name!r} has type {variable.type}; fmibridge "
                    f"sets Real/Float64 and Integer/Int32 variables."
                )
            is_int = variable.type in ("Integer", "Int32")
            if is_int and float(value) != round(value):
                raise FmibridgeError(
                    f"{self.path}: {role} {name!r} is an integer, got {value!r}."
                )
            checked[vr] = (float(value), is_int)
        return checked

    def _check_inputs(
        self, inputs: Mapping[str, InputValue]
    ) -> list[tuple[int, InputValue]]:
        checked = []
        for name, value in inputs.items():
            vr = self._vr(name, "input")
            if self.archive.variables[name].causality != "input":
                raise FmibridgeError(
                    f"{self.path}: {name!r} is not an input (causality "
                    f"{self.archive.variables[name].causality!r})."
                )
            checked.append((vr, value))
        return checked

    def _readable_names(self) -> tuple[str, ...]:
        return tuple(
            v.name
            for v in self.archive.variables.values()
            if v.type in ("Real", "Float64")
            and v.causality in ("output", "local")
            and v.name not in self.state_names
            and not v.name.startswith("der(")
        )

    def _named(self, x: np.ndarray) -> dict[str, float]:
        """Return the states x and the outputs the FMU holds now, by name."""
        values = self.instance.get_reals(self._output_vrs) if self._output_vrs else []
        return {
            **dict(zip(self.state_names, map(float, x), strict=True)),
            **dict(zip(self.output_names, map(float, values), strict=True)),
        }

    def _set_inputs(self, t: float) -> None:
        if self._inputs:
            values = [u(t) if callable(u) else u for _, u in self._inputs]
            self.instance.set_reals([vr for vr, _ in self._inputs], values)

    @property
    def instance(self) -> FmiInstance:
        if self._instance is None:
            raise FmibridgeError(f"{self.path}: the FMU instance was closed.")
        return self._instance

    @property
    def parameter_values(self) -> dict[str, float]:
        """Every real parameter's value, read from the FMU."""
        names = [
            v.name
            for v in self.archive.variables.values()
            if v.causality == "parameter" and v.type in ("Real", "Float64")
        ]
        values = self.instance.get_reals([self.archive.variables[n].vr for n in names])
        return dict(zip(names, map(float, values), strict=True))

    def describe(self) -> dict[str, str]:
        return {
            "flow": f"fmu:{self.interface}",
            "fmu": self.path,
            "fmi_version": self.archive.fmi_version,
        }

    def close(self) -> None:
        instance, self._instance = self._instance, None
        if instance is not None:
            instance.free()
        self.archive.cleanup()

    def _check_finite(self, values: np.ndarray, what: str, t: float) -> np.ndarray:
        # inf and NaN reach a sum of Python floats, which overflows to inf without
        # a warning; then np.isfinite decides. For a few values it costs a fifth.
        if not math.isfinite(sum(values.tolist())) and not np.isfinite(values).all():
            raise FMUError(
                what, "non-finite values", self.path, f"at t = {t!r}: {values.tolist()}"
            )
        return values


class ModelExchangeFlow(_FmuFlow, VectorField):
    """An FMI 2.0 / 3.0 Model Exchange FMU; the master integrates it.

    Parameters
    ----------
    fmu : path or FmuArchive
    parameters, start : mapping, optional
        Values by FMU variable name, set before initialisation.
    inputs : mapping, optional
        Real inputs by name: a constant or a function u(t), set at every
        right-hand-side evaluation (so at the integrator's stage times).
    t0 : float
        Start time.
    """

    interface = "ModelExchange"

    def _initialize(self, t0: float) -> None:
        self.instance.initialize(t0, self._start_reals, self._start_ints)
        self.instance.finish_initialization(MAX_EVENT_ITERATIONS)
        self.x0 = self.instance.get_states()
        self._z_key: tuple | None = None
        self._discrete: dict[int, int] = {}  # discrete inputs as last set in event mode
        self._blocks: tuple[np.ndarray, np.ndarray] | None = None  # steps_inside out
        self._has_varying_inputs = any(callable(u) for _, u in self._inputs)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        if self._inputs:
            self._set_inputs(t)
        return self._check_finite(self.instance.derivatives(t, x), "get derivatives", t)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h): one compiled RK step over the FMU's C calls where it can.

        The same operations as `scheme.step(self.rhs, ...)`, in one call of
        `fmu_kernels.fmu_advance`, which also leaves the event indicators at
        (t + h, x(t + h)) for the guards that the method evaluates next. Inputs
        that vary with time, or a failed FMU call, take the Python step (which
        raises the FMUError).
        """
        if self._has_varying_inputs:
            return super().advance(t, x, h, scheme)
        if self._inputs:
            self._set_inputs(t)
        instance, kernels = self.instance, _fmu_kernels()
        x = np.ascontiguousarray(x, dtype=float)
        y, z = np.empty(x.shape), np.empty(instance.nz)
        a, b, c = scheme.arrays
        outcome = kernels.fmu_advance(
            instance.c_calls, a, b, c, float(t), x, float(h), y, z
        )
        instance.forget_time()
        if outcome == kernels.STEP_FAILED:
            return super().advance(t, x, h, scheme)
        if outcome == kernels.STEP_AND_INDICATORS:
            self._z, self._z_key = z, (t + h, y.tobytes())
        return y

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        self._set_inputs(t)
        self.instance.set_time_and_states(t, x)
        return self._named(x)

    def set_discrete_inputs(
        self, t: float, x: np.ndarray, ints: Mapping[int, int]
    ) -> None:
        """Set discrete inputs through the FMU's event mode, where they changed."""
        changed = {vr: v for vr, v in ints.items() if self._discrete.get(vr) != v}
        if changed:
            self.instance.set_time_and_states(t, x)
            self.instance.event_iteration(MAX_EVENT_ITERATIONS, ints=changed)
            self._discrete.update(changed)
            self._z_key = None

    def rhs_with(self, t: float, x: np.ndarray, name: str, value: float) -> np.ndarray:
        """Return dx/dt with the real input `name` at `value` for this call only."""
        vr = self._vr(name, "input")
        held = dict(self._inputs).get(vr, 0.0)
        self._set_inputs(t)
        self.instance.set_reals([vr], [value])
        try:
            return self._check_finite(
                self.instance.derivatives(t, x), "get derivatives", t
            )
        finally:
            self.instance.set_reals([vr], [held(t) if callable(held) else held])

    def event_indicator(self, i: int) -> Callable[[float, np.ndarray], float]:
        """Return g(t, x) = the FMU's i-th event indicator."""

        def indicator(t: float, x: np.ndarray) -> float:
            key = (t, x.tobytes())
            if key != self._z_key:  # one FMU call serves every indicator at (t, x)
                if self._inputs:
                    self._set_inputs(t)
                self._z = self._check_finite(
                    self.instance.event_indicators(t, x), "get event indicators", t
                )
                self._z_key = key
            return float(self._z[i])

        indicator.__name__ = f"event_indicator_{i}"
        indicator.fmu_flow, indicator.indicator_index = self, i  # for steps_inside
        return indicator

    def steps_inside(
        self,
        guards,
        t,
        x,
        h,
        t_end,
        scheme,
        max_steps,
        reach_tol,
        locate_tol=None,
        max_iter=0,
    ):
        """Take the steps between events in one compiled loop over the FMU's C calls.

        Offered (else None) when every guard is one of this FMU's own event
        indicators (`event_indicator`) and no input is a function of time. The
        loop (`fmu_kernels.fmu_flight`) stops before a failed FMU call, so the
        method's own step then raises the FMUError. With `locate_tol` it
        narrows the crossing step after the block as `CompiledFlow` does
        (`_kernels.locate`), and returns no bracket if an FMU call fails there.
        """
        index = self._indicator_index(guards)
        if index is None or self._has_varying_inputs:
            return None
        instance = self.instance
        self._set_inputs(t)  # constants, set once as rhs would at every call
        if self._blocks is None:
            self._blocks = (np.empty(BLOCK), np.empty((BLOCK, len(self.state_names))))
        ts, xs = self._blocks
        x = np.ascontiguousarray(x, dtype=float)
        x_lo, g, ends = np.empty(len(x)), np.empty((2, len(guards))), np.empty(3)
        a, b, c = scheme.arrays
        try:
            n = _fmu_kernels().fmu_flight(
                instance.c_calls,
                index,
                instance.nz,
                guard_sides(guards),
                a,
                b,
                c,
                float(t),
                x,
                float(h),
                float(t_end),
                int(min(max_steps, BLOCK)),
                float(reach_tol),
                0.0 if locate_tol is None else float(locate_tol),
                int(max_iter),
                RATE_STEP * float(h),
                ts,
                xs,
                x_lo,
                g,
                ends,
            )
        finally:  # the loop set the FMU's time and states behind Python's caches
            instance.forget_time()
            self._z_key = None
        return compiled_steps(t, x, ts, xs, n, x_lo, g, ends)

    def _indicator_index(self, guards) -> np.ndarray | None:
        """Return the indicator number of each guard, or None if one is not ours."""
        index = []
        for guard in guards:
            if getattr(guard.fn, "fmu_flow", None) is not self:
                return None
            index.append(guard.fn.indicator_index)
        return np.array(index, dtype=np.int64)

    def event_update(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the FMU's event mode at (t, x) and return its continuous state after."""
        self._set_inputs(t)
        self.instance.set_time_and_states(t, x)
        self.instance.event_iteration(MAX_EVENT_ITERATIONS)
        self._z_key = None
        return self.instance.get_states()


class CoSimulationFlow(_FmuFlow, Flow):
    """An FMI 2.0 / 3.0 Co-Simulation FMU; the FMU integrates itself.

    `advance` is repeatable: the FMU state at each point the master may return
    to is saved (get/set FMU state), so a halved step restarts from it. A
    point that was never reached (a reset) is entered by setting the state
    variables, or where the FMU refuses that, by fmiReset and
    re-initialisation at that time with the new state as start values.

    Raises
    ------
    FMUError
        If the FMU cannot get and set its state (`canGetAndSetFMUstate`).
    """

    interface = "CoSimulation"

    def _initialize(self, t0: float) -> None:
        if not self.archive.capability("CoSimulation", "canGetAndSetFMUstate"):
            flag = (
                "canGetAndSetFMUstate"
                if self.archive.fmi_version == "2.0"
                else "canGetAndSetFMUState"
            )
            raise FMUError(
                flag,
                "false",
                self.path,
                "fmibridge needs it to undo a Co-Simulation step when a crossing is "
                "halved; use the Model Exchange interface or re-export the FMU with it",
            )
        self.instance.initialize(t0, self._start_reals, self._start_ints)
        self.x0 = np.array(self.instance.get_reals(self._state_vrs), dtype=float)
        self._snapshots: OrderedDict[tuple, object] = OrderedDict()
        self._at: tuple = (t0, self.x0.tobytes())
        self._can_set_states: bool | None = None

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        self.goto(t, x)
        self._set_inputs(t)
        self.instance.do_step(t, h)
        y = np.array(self.instance.get_reals(self._state_vrs), dtype=float)
        self._at = (t + h, y.tobytes())
        return self._check_finite(y, "doStep", t + h)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        self.goto(t, x)
        return self._named(x)

    def advance_with(
        self, t: float, x: np.ndarray, h: float, name: str, value: float
    ) -> np.ndarray:
        """Return x(t + h) with the real input `name` at `value` for this step only."""
        vr = self._vr(name, "input")
        held = dict(self._inputs).get(vr, 0.0)
        self.goto(t, x)
        self._set_inputs(t)
        self.instance.set_reals([vr], [value])
        try:
            self.instance.do_step(t, h)
            y = np.array(self.instance.get_reals(self._state_vrs), dtype=float)
        finally:
            self.instance.set_reals([vr], [held(t) if callable(held) else held])
        self._at = (t + h, y.tobytes())
        return self._check_finite(y, "doStep", t + h)

    def set_discrete_inputs(
        self, t: float, x: np.ndarray, ints: Mapping[int, int]
    ) -> None:
        """Set discrete inputs (step mode) before the next doStep from (t, x)."""
        self.goto(t, x)
        self.instance.set_ints(list(ints), list(ints.values()))

    def goto(self, t: float, x: np.ndarray) -> None:
        """Put the FMU at (t, x): restore a saved state, or enter a reset state."""
        key = (t, x.tobytes())
        if key != self._at:
            if key in self._snapshots:
                self.instance.set_state(self._snapshots[key])
            else:
                self._enter(t, x)
            self._at = key
        if key not in self._snapshots:
            self._snapshots[key] = self.instance.get_state()
            while len(self._snapshots) > MAX_SNAPSHOTS:
                self.instance.free_state(self._snapshots.popitem(last=False)[1])

    def _enter(self, t: float, x: np.ndarray) -> None:
        same_time = [k for k in self._snapshots if k[0] == t]
        if same_time and self._can_set_states is not False:
            self.instance.set_state(self._snapshots[same_time[-1]])
            try:
                self.instance.set_reals(self._state_vrs, x)
                self._can_set_states = True
                return
            except FMUError:
                self._can_set_states = False
        self._reinitialize(t, x)

    def _reinitialize(self, t: float, x: np.ndarray) -> None:
        try:
            self.instance.reset()
        except FMUError as exc:
            raise FMUError(
                exc.function,
                exc.status,
                self.path,
                "fmibridge cannot apply a reset: the FMU accepts neither setting its "
                "state variables nor fmiReset",
            ) from None
        states = dict(zip(self._state_vrs, map(float, x), strict=True))
        self.instance.initialize(t, {**self._start_reals, **states}, self._start_ints)

    def close(self) -> None:
        if self._instance is not None:
            for snapshot in getattr(self, "_snapshots", {}).values():
                self._instance.free_state(snapshot)
            self._snapshots = OrderedDict()
        super().close()


@functools.cache
def _fmu_kernels():
    """Import the compiled FMU loop on first use (numba loads it from its cache)."""
    from . import fmu_kernels

    return fmu_kernels


FLOW_CLASSES = {"ModelExchange": ModelExchangeFlow, "CoSimulation": CoSimulationFlow}
INTERFACE_NAMES = {
    "me": "ModelExchange",
    "cs": "CoSimulation",
    "ModelExchange": "ModelExchange",
    "CoSimulation": "CoSimulation",
}


def open_fmu(
    fmu: str | Path, interface: str | None = None, **options
) -> ModelExchangeFlow | CoSimulationFlow:
    """Open an FMU as a flow: 'me' (Model Exchange, preferred) or 'cs'.

    Examples
    --------
    >>> flow = open_fmu("fmus/build/BouncingBall.fmu", "me")  # doctest: +SKIP
    """
    archive = FmuArchive(fmu)
    if interface is None:
        interface = archive.interfaces[0] if archive.interfaces else "ModelExchange"
    if interface not in INTERFACE_NAMES:
        archive.cleanup()
        raise FmibridgeError(f"`interface` must be 'me' or 'cs', got {interface!r}.")
    return FLOW_CLASSES[INTERFACE_NAMES[interface]](archive, **options)


def fmu_event_edges(flow: Flow, mode: str) -> tuple[Edge, ...]:
    """Return a Model Exchange FMU's event indicators as self-loops of `mode`.

    Each is an 'either' guard (FMI indicators may cross both ways) whose reset
    runs the FMU's event mode, applied just beyond the surface where the FMU's
    own `when` conditions hold. Other flows have none: a Co-Simulation FMU
    handles its events inside doStep.
    """
    if not isinstance(flow, ModelExchangeFlow):
        return ()
    return tuple(
        Edge(
            Guard(flow.event_indicator(i), "either", reset_at="beyond"),
            mode,
            flow.event_update,
            name=f"fmu_event_{i}",
        )
        for i in range(flow.instance.nz)
    )


def fmu_system(
    fmu: str | Path, interface: str | None = None, **options
) -> HybridSystem:
    """Return an exported FMU with its own events as a one-mode HybridSystem.

    Its events are those of `fmu_event_edges`.
    """
    flow = open_fmu(fmu, interface, **options)
    return HybridSystem(
        [Mode("model", flow, fmu_event_edges(flow, "model"))],
        "model",
        flow.x0,
        t0=options.get("t0", 0.0),
        parameters=flow.parameter_values,
        name=Path(fmu).stem,
    )
