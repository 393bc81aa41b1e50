"""Components of a coupled system: states, ports (inputs and outputs) and evaluation.

A component (an FMU, a native block with ports, a vector field) tells the
coupling its variables (causality, unit, direct feedthrough) and gives fast
readers and writers of its connected ports.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from ..core._functions import PythonVector
from ..core.errors import FmibridgeError
from ..core.integrators import Scheme
from ..core.units import UnitDefinition
from ._coupled import FmuPart, Part
from ._fmi import Ports, RealPorts
from .base import Flow, VectorField
from .fmu import C_REALS, CoSimulationFlow, ModelExchangeFlow

Reader = Callable[[], np.ndarray]
Writer = Callable[[np.ndarray], None]


@dataclass(frozen=True)
class Port:
    """What a coupling needs to know of one variable: causality and unit."""

    causality: str  # "input", "output", "state", "parameter", "local", ...
    unit: str | None = None
    definition: UnitDefinition | None = None


class Component(abc.ABC):
    """One part of a coupled system. A subclass binds one kind of model: it sets
    `name`, `state_names`, `x0` and `integrates` (True: the master integrates its
    `derivatives`; False: it takes its own `step`) and implements the abstract
    methods; an integrating one may give a compiled `part` and `ports`."""

    name: str
    state_names: tuple[str, ...]
    x0: np.ndarray
    integrates: bool
    flow: Flow | None = None  # the flow behind it, whose own events the coupling runs

    @abc.abstractmethod
    def port(self, variable: str) -> Port:
        """Return the variable's causality and unit; raise if there is none."""

    def feedthrough(self, output: str) -> frozenset[str] | None:
        """Return the inputs `output` depends on directly (None: all of them)."""
        return frozenset()

    @abc.abstractmethod
    def reader(self, outputs: Sequence[str]) -> Reader:
        """Return a callable that reads `outputs` at the point of the last `at`."""

    @abc.abstractmethod
    def writer(self, inputs: Sequence[str]) -> Writer:
        """Return a callable that sets `inputs` to an array of values."""

    @abc.abstractmethod
    def at(self, t: float, x: np.ndarray) -> None:
        """Put the component at time t and state x (before reading outputs)."""

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt at (t, x) with the inputs as set (integrating kinds)."""
        raise NotImplementedError

    def step(self, t: float, x: np.ndarray, h: float) -> np.ndarray:
        """Return x(t + h) with the inputs as set, held (stepping kinds)."""
        raise NotImplementedError

    def part(self, start: int, read: bool) -> Part:
        """Return this component for the coupled rhs, its states at x[start:]."""
        n = len(self.state_names)
        what = f"the derivatives of component {self.name!r}"
        derivatives = PythonVector(self.derivatives, n, n, what)
        return Part(start, derivatives, self.at if read else None)

    def ports(self, names: Sequence[str], *, output: bool) -> Ports:
        """Return reads (`output`) or writes of these ports for the coupled rhs."""
        if output:
            return Ports(len(names), reader=self.reader(names))
        return Ports(len(names), writer=self.writer(names))

    @abc.abstractmethod
    def variables(self) -> dict[str, float]:
        """Return the states and outputs at the current point, by local name."""

    def describe(self) -> str:
        """Return what this component is, for provenance."""
        return type(self).__name__

    def close(self) -> None:  # noqa: B027 - optional hook: native parts hold nothing
        """Free the FMU instance, if any."""


class _FmuComponent(Component):
    """Ports of an FMU, from its model description."""

    flow: ModelExchangeFlow | CoSimulationFlow

    def __init__(self, name: str, flow: ModelExchangeFlow | CoSimulationFlow) -> None:
        self.name, self.flow = name, flow
        self.state_names = tuple(flow.state_names)
        self.x0 = np.array(flow.x0, dtype=float)
        self._t, self._x = flow.t0, self.x0

    def port(self, variable: str) -> Port:
        found = self.flow.archive.variables.get(variable)
        if found is None:
            raise FmibridgeError(
                f"component {self.name!r} ({self.flow.path}) has no variable "
                f"{variable!r}; its inputs are {self._named('input')} and its "
                f"outputs {self._named('output')}."
            )
        if found.type not in C_REALS or found.shape:  # read and set as C reals
            raise FmibridgeError(
                f"{self.name}.{variable} has type {found.type}"
                f"{' (an array)' if found.shape else ''}; connections join scalar "
                f"Real (Float64) variables."
            )
        causality = "state" if variable in self.state_names else found.causality
        definitions = self.flow.archive.unit_definitions
        return Port(causality, found.unit, definitions.get(found.unit or ""))

    def _named(self, causality: str) -> list[str]:
        return sorted(
            v.name
            for v in self.flow.archive.variables.values()
            if v.causality == causality
        )

    def feedthrough(self, output: str) -> frozenset[str] | None:
        return self.flow.archive.feedthrough(output)

    def reader(self, outputs: Sequence[str]) -> Reader:
        return self.flow.instance.real_ports(self._vrs(outputs)).get

    def writer(self, inputs: Sequence[str]) -> Writer:
        return self.flow.instance.real_ports(self._vrs(inputs)).set

    def _vrs(self, names: Sequence[str]) -> list[int]:
        return [self.flow.archive.variables[n].vr for n in names]

    def variables(self) -> dict[str, float]:
        return self.flow.variables(self._t, self._x)

    def describe(self) -> str:
        return f"{self.flow.interface} {self.flow.path}"

    def close(self) -> None:
        self.flow.close()


class ModelExchangeComponent(_FmuComponent):
    """A Model Exchange FMU: the master integrates it with the others."""

    integrates = True
    flow: ModelExchangeFlow

    def at(self, t: float, x: np.ndarray) -> None:
        """Put the FMU at (t, x): set its time and continuous states."""
        self.flow.instance.calls.set_time_and_states(t, x)
        self._t, self._x = t, x

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return the FMU's dx/dt at (t, x)."""
        return self.flow.rhs(t, x)

    def part(self, start: int, read: bool) -> Part:
        """Return the FMU driven by its C functions."""
        return FmuPart(start, self.flow.rhs_function(), self.flow.instance.calls, read)

    def ports(self, names: Sequence[str], *, output: bool) -> Ports:
        """Return these Real variables got or set by the FMU's C functions."""
        return RealPorts(self.flow.instance.functions, self._vrs(names))


class CoSimulationComponent(_FmuComponent):
    """A Co-Simulation FMU: it steps itself; `at` restores its saved states."""

    integrates = False
    flow: CoSimulationFlow

    def at(self, t: float, x: np.ndarray) -> None:
        """Put the FMU at (t, x): restore a saved state, or enter a reset one."""
        self.flow.goto(t, x)
        self._t, self._x = t, x

    def step(self, t: float, x: np.ndarray, h: float) -> np.ndarray:
        """Return the FMU's state after a communication step of h from (t, x)."""
        return self.flow.advance(t, x, h, _NO_SCHEME)

    def writer(self, inputs: Sequence[str]) -> Writer:
        """Set these inputs, journalled on an FMU without state saving."""
        if not self.flow.forward_only:
            return super().writer(inputs)
        vrs, instance = self._vrs(inputs), self.flow.instance
        return lambda values: instance.set_reals(vrs, [float(v) for v in values])


_NO_SCHEME: Scheme = None  # type: ignore[assignment]  # a CS FMU integrates itself


class NativeBlock(Component):
    """A native component with ports: x' = f(t, x, u), y = g(t, x, u).

    Parameters
    ----------
    f : callable
        f(t, x, u) -> dx/dt, with u the inputs in the order of `inputs`.
    state_names : sequence of str
    x0 : array_like
        Initial state.
    inputs, outputs : sequence of str
        Port names; u and y are arrays in this order.
    g : callable, optional
        g(t, x, u) -> y; needed if there are outputs.
    feedthrough : mapping, optional
        {output: inputs it depends on directly}; default: every input (FMI's
        conservative assumption).
    units : mapping, optional
        {variable: unit}, checked against the connected ports.
    name : str
        Filled in by the coupling from the component's key.
    """

    integrates = True

    def __init__(
        self,
        f: Callable[[float, np.ndarray, np.ndarray], np.ndarray],
        state_names: Sequence[str],
        x0,
        *,
        inputs: Sequence[str] = (),
        outputs: Sequence[str] = (),
        g: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None,
        feedthrough: Mapping[str, Sequence[str]] | None = None,
        units: Mapping[str, str] | None = None,
        name: str = "block",
    ) -> None:
        self.name, self._f = name, f
        # g is None only without outputs, where it is never called
        self._g = cast(Callable[[float, np.ndarray, np.ndarray], np.ndarray], g)
        self.state_names = tuple(state_names)
        self.x0 = np.array(x0, dtype=float).reshape(-1)
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)
        if not callable(f) or (self.outputs and not callable(g)):
            raise FmibridgeError(
                f"NativeBlock {name!r}: `f` must be callable, and `g` too when it "
                f"has outputs."
            )
        if len(self.x0) != len(self.state_names):
            raise FmibridgeError(
                f"NativeBlock {name!r}: `x0` has {len(self.x0)} values for states "
                f"{list(self.state_names)}."
            )
        self._feedthrough = (
            None
            if feedthrough is None
            else {k: frozenset(v) for k, v in feedthrough.items()}
        )
        self._units = dict(units or {})
        self._u = np.zeros(len(self.inputs))
        self._t, self._x = 0.0, self.x0

    def port(self, variable: str) -> Port:
        """Return `variable` as a Port: an input, an output or a state."""
        for causality, names in (
            ("input", self.inputs),
            ("output", self.outputs),
            ("state", self.state_names),
        ):
            if variable in names:
                return Port(causality, self._units.get(variable))
        raise FmibridgeError(
            f"component {self.name!r} has no variable {variable!r}; its inputs "
            f"are {list(self.inputs)}, outputs {list(self.outputs)} and states "
            f"{list(self.state_names)}."
        )

    def feedthrough(self, output: str) -> frozenset[str] | None:
        """Return the inputs `output` depends on directly (None: maybe all)."""
        if output in self.state_names:
            return frozenset()
        return None if self._feedthrough is None else self._feedthrough.get(output)

    def reader(self, outputs: Sequence[str]) -> Reader:
        """Return a function that reads these outputs (or states) at the point."""
        where = [
            (
                n in self.state_names,
                (self.state_names if n in self.state_names else self.outputs).index(n),
            )
            for n in outputs
        ]
        needs_g = not all(is_state for is_state, _ in where)

        def read() -> np.ndarray:
            # (without outputs to read, y is not read)
            y = self._g(self._t, self._x, self._u.copy()) if needs_g else self._x
            return np.array(
                [self._x[i] if is_state else y[i] for is_state, i in where], dtype=float
            )

        return read

    def writer(self, inputs: Sequence[str]) -> Writer:
        """Return a function that writes values to these inputs."""
        index = [self.inputs.index(n) for n in inputs]

        def write(values: np.ndarray) -> None:
            self._u[index] = values

        return write

    def at(self, t: float, x: np.ndarray) -> None:
        """Take (t, x) as the point its outputs and derivatives are read at."""
        self._t, self._x = t, np.asarray(x, dtype=float)

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return f(t, x, u)."""
        return np.asarray(self._f(t, x, self._u.copy()), dtype=float)

    def variables(self) -> dict[str, float]:
        """Return the states and the outputs g(t, x, u) at the point, by name."""
        values = dict(zip(self.state_names, map(float, self._x), strict=True))
        if self.outputs:
            y = self._g(self._t, self._x, self._u.copy())
            values.update(zip(self.outputs, map(float, y), strict=True))
        return values

    def describe(self) -> str:
        """Return "native block", for provenance."""
        return "native block"


class FlowComponent(NativeBlock):
    """A vector field without ports (a NativeFlow or CompiledFlow) as a component."""

    flow: VectorField

    def __init__(self, flow: VectorField, x0, name: str = "flow") -> None:
        super().__init__(
            lambda t, x, u: flow.rhs(t, x), flow.state_names, x0, name=name
        )
        self.flow = flow

    def part(self, start: int, read: bool) -> Part:
        """Return the flow's own right-hand side Function."""
        return Part(start, self.flow.rhs_function(), self.at if read else None)

    def describe(self) -> str:
        """Return the wrapped flow's class name, for provenance."""
        return type(self.flow).__name__


def as_component(name: str, part: object, x0=None) -> Component:
    """Return `part` (an FMU flow, a NativeBlock, a VectorField or a pair (vector
    field, x0)) as the component `name`.

    Raises
    ------
    FmibridgeError
        If `name` is empty or has a dot, `part` is none of these, or a vector field
        comes without `x0`.
    """
    if not isinstance(name, str) or not name or "." in name:
        raise FmibridgeError(
            f"component name {name!r} must be a non-empty string without dots."
        )
    if isinstance(part, tuple) and len(part) == 2:
        part, x0 = part
    if isinstance(part, ModelExchangeFlow):
        return ModelExchangeComponent(name, part)
    if isinstance(part, CoSimulationFlow):
        return CoSimulationComponent(name, part)
    if isinstance(part, NativeBlock):
        part.name = name
        return part
    if isinstance(part, VectorField):
        if x0 is None:
            raise FmibridgeError(
                f"component {name!r}: a {type(part).__name__} needs its initial state; "
                f"pass (flow, x0)."
            )
        return FlowComponent(part, x0, name)
    raise FmibridgeError(
        f"component {name!r}: expected an FMU flow (open_fmu), a NativeBlock or a "
        f"vector field, got {type(part).__name__}."
    )
