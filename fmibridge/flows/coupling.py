"""The connections of a coupled system: checked, ordered and propagated.

Components are joined by connections from outputs to inputs. `Coupling` checks
them once (names, causality, units, one source per input), orders the reads
and writes so that each output is read after the inputs it depends on directly
(`loops.strongly_connected` over the ports), and `evaluate` propagates them at a
point, solving algebraic loops (`loops.solve_loop`). `CoupledParts` is what
both coupled flows share: the states of all components, concatenated and named
`component.variable`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.errors import FmibridgeError
from ..core.units import Definitions, described, same_unit
from ._coupled import Step, propagate
from .base import Flow
from .components import Component, Port
from .loops import check_loop, is_loop, solve_loop, strongly_connected

SOURCE_CAUSALITIES = ("output", "state", "local")  # what may drive an input


@dataclass(frozen=True)
class Connection:
    """An output (or state) of one component drives an input of another.

    Names are `component.variable`, split at the first dot.
    """

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


@dataclass(frozen=True)
class _Node:
    """A port in the evaluation graph: an output read or an input set."""

    is_output: bool
    component: int
    variable: str


class Coupling:
    """Components and their connections, checked, with an evaluation plan
    (module docstring); `outputs` holds the connected outputs' values.

    Raises
    ------
    FmibridgeError
        Naming the component and variable: an unknown one, a connection from an
        input or into an output, a unit mismatch, an input connected twice.
    """

    def __init__(
        self,
        components: Sequence[Component],
        connections: Sequence[Connection],
        units: Definitions | None = None,
    ) -> None:
        self.units = units or {}  # definitions of units the components leave open
        self.components = tuple(components)
        self.index = {c.name: k for k, c in enumerate(self.components)}
        seen: dict[tuple[int, str], str] = {}  # input -> its source, once
        links = [self._check(c, seen) for c in connections]
        self.sources = list(dict.fromkeys((s, so) for s, so, _, _ in links))
        self.source_of = {
            (d, di): self.sources.index((s, so)) for s, so, d, di in links
        }
        self.outputs = np.zeros(len(self.sources))
        self.connections = tuple(connections)
        outputs = {port: k for k, port in enumerate(self.sources)}
        every = range(len(self.components))
        # per component: its connected inputs and outputs, as (names, slots)
        self.inputs_of = [_ports(self.source_of, c) for c in every]
        self.outputs_of = [_ports(outputs, c) for c in every]
        self._io = [  # per component: its writer, input slots, reader, output slots
            (c.writer(ins), np.array(at, dtype=np.intp), c.reader(outs), out_at)
            for c, (ins, at), (outs, out_at) in zip(
                self.components, self.inputs_of, self.outputs_of, strict=True
            )
        ]
        self.schedule = self._schedule()
        self.steps = [  # the schedule as `_coupled.propagate` runs it
            Step(kind, c)
            if kind == "loop"
            else Step(
                kind, self.components[c].ports(names, output=kind == "read"), slots
            )
            for kind, c, names, slots in self.schedule
        ]

    def port_of(self, name: str, where: str) -> tuple[int, str, Port]:
        """Return the component number, variable and port of `component.variable`,
        or raise naming it (`where`: what names it, for the message)."""
        component, dot, variable = str(name).partition(".")
        if not (component and dot and variable):
            raise FmibridgeError(f"{where}: {name!r} must be `component.variable`.")
        if component not in self.index:
            raise FmibridgeError(
                f"{where}: no component {component!r}; the components are "
                f"{sorted(self.index)}."
            )
        k = self.index[component]
        return k, variable, self.components[k].port(variable)

    def _check(self, connection: Connection, seen: dict) -> tuple[int, str, int, str]:
        where = f"connection {connection}"
        (s, src_var, source), (d, dst_var, target) = (
            self.port_of(name, where) for name in (connection.source, connection.target)
        )
        key = (d, dst_var)
        if key in seen:
            raise FmibridgeError(
                f"input {connection.target} is connected twice, from {seen[key]} "
                f"and from {connection.source}: an input has one source."
            )
        seen[key] = connection.source
        for port, name, allowed, role in (
            (source, connection.source, SOURCE_CAUSALITIES, "output"),
            (target, connection.target, ("input",), "input"),
        ):
            if port.causality not in allowed:
                raise FmibridgeError(
                    f"{where}: {name} is an {port.causality}, not an {role}; a "
                    f"connection leads from an output to an input."
                )
        a, b = source.unit or "", target.unit or ""
        defines_a, defines_b = (  # spellings and definitions may differ
            {**self.units, **({p.unit: p.definition} if p.definition else {})}
            for p in (source, target)
        )
        if a and b and not same_unit(a, b, defines_a, defines_b):
            raise FmibridgeError(
                f"{where}: unit mismatch, {connection.source} is in {a!r} and "
                f"{connection.target} in {b!r}{described(a, b, defines_a, defines_b)}."
            )
        return s, src_var, d, dst_var

    def _schedule(self) -> list[tuple]:
        """The steps of `evaluate` in dependency order: (kind, c, names, slots)."""
        graph: dict[_Node, list[_Node]] = {}
        for k, (c, so) in enumerate(self.sources):
            graph[_Node(True, c, so)] = [
                _Node(False, d, di) for (d, di), s in self.source_of.items() if s == k
            ]
        for d, di in self.source_of:  # an input leads to the outputs fed through by it
            graph[_Node(False, d, di)] = [
                _Node(True, c, so)
                for c, so in self.sources
                if c == d
                and (
                    (inputs := self.components[c].feedthrough(so)) is None
                    or di in inputs
                )
            ]
        steps: list = []
        for members in strongly_connected(graph):
            if is_loop(members, graph):
                steps.append(("loop", _Loop(self, members, graph), None, None))
            else:
                self._add(steps, members[0])
        return steps

    def _add(self, steps: list[tuple], node: _Node) -> None:
        """Add node's read or write to steps (to the last one of its kind and part)."""
        kind = "read" if node.is_output else "write"
        port = (node.component, node.variable)
        slot = self.sources.index(port) if node.is_output else self.source_of[port]
        if steps and steps[-1][:2] == (kind, node.component):
            steps[-1][2].append(node.variable)
            steps[-1][3].append(slot)
        else:
            steps.append((kind, node.component, [node.variable], [slot]))

    def evaluate(self, t: float, parts: Sequence[np.ndarray]) -> None:
        """Put each component at (t, part) and propagate every connection."""
        for component, x in zip(self.components, parts, strict=True):
            component.at(t, x)
        propagate(self.steps, t, self.outputs)

    def write_inputs(self, c: int, outputs: np.ndarray) -> None:
        """Set component c's connected inputs from source values `outputs`."""
        write, slots, _, _ = self._io[c]
        if len(slots):
            write(outputs[slots])

    def read_outputs(self, c: int, outputs: np.ndarray) -> None:
        """Write component c's connected outputs, read now, into `outputs`."""
        _, _, read, slots = self._io[c]
        if slots:
            outputs[slots] = read()

    def loops(self) -> list[str]:
        """The algebraic loops found, by name."""
        return [loop.name for kind, loop, _, _ in self.schedule if kind == "loop"]

    def check_loops(self, t: float, parts: Sequence[np.ndarray]) -> None:
        """Solve every loop at (t, parts) and refuse one without unique solution.

        Raises
        ------
        loops.AlgebraicLoopError
            Naming the loop's ports.
        """
        self.evaluate(t, parts)
        for kind, loop, _, _ in self.schedule:
            if kind == "loop":
                loop.check(t)


def _ports(slots: dict[tuple[int, str], int], c: int) -> tuple[list[str], list[int]]:
    """The names and slots of component c's ports among {(component, name): slot}."""
    names = [name for k, name in slots if k == c]
    return names, [slots[c, name] for name in names]


class _Loop:
    """One algebraic loop: its inputs u and the map G(u) = u."""

    def __init__(self, coupling: Coupling, members: list[_Node], graph) -> None:
        self._coupling, comps = coupling, coupling.components
        self.name = " -> ".join(
            f"{comps[n.component].name}.{n.variable}" for n in _cycle(members, graph)
        )
        writes: list[tuple] = []  # by component, then variable
        reads: list[tuple] = []
        for node in sorted(members, key=lambda n: (n.component, n.variable)):
            coupling._add(reads if node.is_output else writes, node)
        self._writes = [comps[c].writer(names) for _, c, names, _ in writes]
        self._reads = [
            (comps[c].reader(names), np.array(slots, dtype=np.intp))
            for _, c, names, slots in reads
        ]
        self._sources = [slot for step in writes for slot in step[3]]
        self._split = np.cumsum([len(step[3]) for step in writes])[:-1]
        self._u = np.zeros(len(self._sources))

    def _map(self, u: np.ndarray) -> np.ndarray:
        outputs = self._coupling.outputs
        for write, values in zip(self._writes, np.split(u, self._split), strict=True):
            write(values)
        for read, slots in self._reads:
            outputs[slots] = read()
        return outputs[self._sources]

    def solve(self, t: float) -> None:
        self._u = solve_loop(self._map, self._u, self.name, t)

    def check(self, t: float) -> None:
        """Refuse the loop if it has no unique solution where it was last solved."""
        check_loop(self._map, self._u, self.name, t)


def _unit(component: Component, variable: str) -> str | None:
    """The unit of a component's variable, or None where it declares none."""
    try:
        return component.port(variable).unit
    except FmibridgeError:
        return None


def _cycle(members: list[_Node], graph) -> list[_Node]:
    """The loop's ports in the order data flows through them, back to the first."""
    inside = set(members)
    node = min(members, key=lambda n: (not n.is_output, n.component, n.variable))
    walk = [node]
    while True:
        node = next((n for n in graph[node] if n in inside), walk[0])
        if node in walk:
            break
        walk.append(node)
    rest = sorted(inside - set(walk), key=lambda n: (n.component, n.variable))
    return [*walk, *rest, walk[0]]


class CoupledParts:
    """The states of a coupled system: each component's, concatenated."""

    def __init__(self, coupling: Coupling) -> None:
        self.coupling = coupling
        self.components = coupling.components
        self.state_names = tuple(
            f"{c.name}.{s}" for c in self.components for s in c.state_names
        )
        ends = np.cumsum([len(c.state_names) for c in self.components])
        self._slices = [slice(a, b) for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        self.x0 = np.concatenate([c.x0 for c in self.components])
        self._flows: dict[int, Flow] = {  # the components' flows, by component
            k: c.flow for k, c in enumerate(self.components) if c.flow is not None
        }
        self._completing = [  # FMUs that need completedIntegratorStep
            k
            for k, flow in self._flows.items()
            if getattr(getattr(flow, "instance", None), "needs_completed_step", False)
        ]
        self._asked: set[int] = set()  # FMUs that asked for an event after a step
        self.units: Mapping[str, str] = {  # of the states, where declared
            f"{c.name}.{s}": unit
            for c in self.components
            for s in c.state_names
            if (unit := _unit(c, s))
        }
        self.recorded_names: tuple[str, ...] = ()
        self._recorders: list[tuple[list[int], Callable]] = []

    def parts(self, x: np.ndarray) -> list[np.ndarray]:
        """Split x into the components' states."""
        return [x[s] for s in self._slices]

    def record(self, names: Sequence[str]) -> None:
        """Record the real variables `names` (`component.variable`) at every sample.

        Raises
        ------
        FmibridgeError
            Naming the variable: an unknown component or variable.
        """
        by_component: dict[int, list[tuple[int, str]]] = {}
        units = dict(self.units)
        for position, name in enumerate(names):
            k, variable, port = self.coupling.port_of(name, f"output {name!r}")
            by_component.setdefault(k, []).append((position, variable))
            if port.unit:
                units[name] = port.unit
        self._recorders = [
            (
                [position for position, _ in pairs],
                self.components[k].reader([variable for _, variable in pairs]),
            )
            for k, pairs in by_component.items()
        ]
        self.recorded_names, self.units = tuple(names), units

    def _recorded(self, t: float, x: np.ndarray) -> dict[str, float]:
        """The recorded variables at (t, x), connections propagated."""
        if not self.recorded_names:
            return {}
        self.coupling.evaluate(t, self.parts(x))
        values = np.empty(len(self.recorded_names))
        for positions, read in self._recorders:
            values[positions] = read()
        return dict(zip(self.recorded_names, values.tolist(), strict=True))

    def put_at(self, t: float, x: np.ndarray) -> None:
        """Put every component at (t, x) with the connections propagated."""
        self.coupling.evaluate(t, self.parts(x))

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Every component's states and outputs at (t, x)."""
        self.coupling.evaluate(t, self.parts(x))
        return {
            f"{c.name}.{name}": value
            for c in self.components
            for name, value in c.variables().items()
        }

    @property
    def is_terminated(self) -> bool:
        """True once an FMU component ended the simulation."""
        return any(f.is_terminated for f in self._flows.values())

    def next_event_time(self) -> float:
        """The earliest time event an FMU component has scheduled (inf: none)."""
        times = (f.next_event_time() for f in self._flows.values())
        return min(times, default=math.inf)

    def step_completed(self, t: float, x: np.ndarray) -> bool:
        """Tell the FMUs that need it a step ended; True if one asks for an event."""
        if not self._completing:
            return False
        parts = self.parts(x)
        self.put_at(t, x)
        self._asked = {
            k for k in self._completing if self._flows[k].step_completed(t, parts[k])
        }
        return bool(self._asked)

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the events the FMUs asked for, else their time events due now."""
        parts = self.parts(x)
        self.coupling.evaluate(t, parts)
        first = self.next_event_time()
        due = self._asked or {
            k for k, f in self._flows.items() if f.next_event_time() <= first
        }
        self._asked = set()
        for k in sorted(due):
            parts[k] = self._flows[k].discrete_event(t, parts[k])
        return np.concatenate(parts)

    @property
    def parameter_values(self) -> dict[str, float]:
        """Every FMU component's real parameters, named `component.parameter`."""
        return {
            f"{self.components[k].name}.{name}": value
            for k, flow in self._flows.items()
            for name, value in getattr(flow, "parameter_values", {}).items()
        }

    def describe(self) -> dict[str, str]:
        """Return the provenance entries: the coupled flow and its components."""
        return {
            "flow": f"coupled:{type(self).__name__}",
            "components": "; ".join(
                f"{c.name}={c.describe()}" for c in self.components
            ),
            "connections": ", ".join(map(str, self.coupling.connections)),
        }

    def close(self) -> None:
        """Free every component."""
        for component in self.components:
            component.close()
