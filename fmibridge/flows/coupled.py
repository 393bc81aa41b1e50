"""Coupled systems: several components joined by connections are one flow.

Components (FMUs in Model Exchange or Co-Simulation, FMI 2 or 3, native blocks,
vector fields) are joined by connections from outputs to inputs
(`coupling.Coupling` checks and propagates them). To the methods the whole is
one `Flow` whose states are the components' states, concatenated and named
`component.variable`, so guards, resets and constraints may name any
component's variables:

* if the master integrates every component (Model Exchange FMUs, native
  parts), `couple` returns a `CoupledModelExchange` vector field: its
  right-hand side puts every component at (t, x), propagates the connections
  and concatenates the derivatives, so one RK step runs across all of them
  with the connections evaluated at every stage (no co-simulation error);
* otherwise a `cosim_master.CoupledCoSimulation`, which advances by
  communication steps (Jacobi or Gauss-Seidel) and saves and restores every
  component together.

Examples
--------
>>> flow = couple(  # doctest: +SKIP
...     {"plant": open_fmu("MassSpringStop.fmu", "me"),
...      "controller": open_fmu("PositionController.fmu", "me")},
...     [("plant.x", "controller.x_meas"), ("plant.v", "controller.v_meas"),
...      ("controller.F", "plant.F")])
>>> flow.state_names  # doctest: +SKIP
('plant.x', 'plant.v', 'controller.z')
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import Scheme
from ..core.system import Edge, Guard
from .base import Flow, VectorField
from .components import Component, ModelExchangeComponent, as_component
from .cosim_master import Communication, CoupledCoSimulation
from .coupling import Connection, CoupledParts, Coupling, split_name


class CoupledModelExchange(CoupledParts, VectorField):
    """Components the master integrates together: one vector field.

    dx/dt at (t, x) is each component's dx/dt after every connection was
    propagated at (t, x), so the methods' integrators see one system. Where
    every component is a Model Exchange FMU and no algebraic loop needs
    solving, `rhs` and each RK step of `advance` run compiled
    (`coupled_kernels`), calling the FMUs' C functions in the same order;
    a failed call takes the Python path, which raises the FMUError.
    """

    def __init__(self, coupling: Coupling) -> None:
        super().__init__(coupling)
        self._tables = _compiled_tables(coupling)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt of every component, its inputs propagated first."""
        if self._tables is not None:
            x = np.ascontiguousarray(x, dtype=float)
            dx = np.empty(len(x))
            is_done = _kernels().coupled_rhs(*self._tables, float(t), x, dx)
            self._forget_times()
            if is_done:
                return dx
        return self._rhs(t, x)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h): one step of `scheme`, compiled where it can be."""
        if self._tables is not None:
            x = np.ascontiguousarray(x, dtype=float)
            y, (a, b, c) = np.empty(len(x)), scheme.arrays
            is_done = _kernels().coupled_step(
                *self._tables, a, b, c, float(t), x, float(h), y
            )
            self._forget_times()
            if is_done:
                return y
        return scheme.step(self._rhs, t, x, h)

    def with_inputs(
        self, names: Sequence[str]
    ) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
        """Return rhs(t, x, u): dx/dt with the free inputs `names` at u.

        The inputs (`component.variable`, connected to nothing) take the
        values u for that evaluation only and are 0 before and after it, as a
        contact force is applied through each body's force input (Or and
        Ames, eq. 5; `methods.coupled_contact`).

        Raises
        ------
        FmibridgeError
            Naming the variable: an unknown component or variable, one that is
            no input, or an input a connection drives.
        """
        writers = [self._free_input(name) for name in names]
        zero = np.zeros(1)

        def rhs(t: float, x: np.ndarray, u: np.ndarray) -> np.ndarray:
            for write, value in zip(writers, u, strict=True):
                write(np.array([value], dtype=float))
            try:
                return self.rhs(t, x)
            finally:
                for write in writers:
                    write(zero)

        return rhs

    def _free_input(self, name: str):
        """The writer of the unconnected input `name` (`component.variable`)."""
        where = f"input {name!r}"
        component, variable = split_name(name, where)
        index = {c.name: k for k, c in enumerate(self.components)}
        if component not in index:
            raise FmibridgeError(
                f"{where}: no component {component!r}; the components are "
                f"{sorted(index)}."
            )
        k = index[component]
        causality = self.components[k].port(variable).causality
        if causality != "input":
            raise FmibridgeError(
                f"{where}: {name} has causality {causality!r}; a force input must "
                f"be an input."
            )
        if (k, variable) in self.coupling.source_of:
            raise FmibridgeError(
                f"{where}: {name} is driven by a connection; a force input must be "
                f"free."
            )
        return self.components[k].writer([variable])

    def put_at(self, t: float, x: np.ndarray) -> None:
        """Put every component at (t, x), connections propagated: one evaluation
        of the right-hand side (compiled where it can) leaves them there."""
        self.rhs(t, x)

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded variables at the sample (t, x) (`record`)."""
        return self._recorded(t, x), ()

    def _forget_times(self) -> None:
        """The kernel set the FMUs' time behind the instances' caches."""
        for component in self.components:
            component.flow.instance.forget_time()

    def _rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """dx/dt through the components' Python calls."""
        parts = self.parts(x)
        self.coupling.evaluate(t, parts)
        return np.concatenate(
            [c.derivatives(t, p) for c, p in zip(self.components, parts, strict=True)]
        )

    def event_edges(self, mode: str) -> tuple[Edge, ...]:
        """Return the Model Exchange FMUs' own event indicators as self-loops.

        As `fmu.fmu_event_edges` for one FMU: 'either' guards whose reset runs
        that FMU's event mode, applied just beyond the surface; the
        connections are propagated first, so the indicators see the inputs.
        """
        edges = []
        for k, component in enumerate(self.components):
            if isinstance(component, ModelExchangeComponent):
                for i in range(component.flow.instance.nz):
                    edges.append(self._event_edge(k, i, mode))
        return tuple(edges)

    def _event_edge(self, k: int, i: int, mode: str) -> Edge:
        component = self.components[k]

        def indicator(t: float, x: np.ndarray) -> float:
            parts = self.parts(x)
            self.coupling.evaluate(t, parts)
            return float(component.flow.instance.event_indicators(t, parts[k])[i])

        def update(t: float, x: np.ndarray) -> np.ndarray:
            parts = self.parts(x)
            self.coupling.evaluate(t, parts)
            parts[k] = component.flow.event_update(t, parts[k])
            return np.concatenate(parts)

        name = f"{component.name}.fmu_event_{i}"
        indicator.__name__ = name
        return Edge(Guard(indicator, "either", reset_at="beyond"), mode, update, name)


def _compiled_tables(coupling: Coupling) -> tuple | None:
    """The tables `coupled_kernels` runs on: FMU calls, state offsets and the
    coupling's schedule; None where a component is no Model Exchange FMU of
    FMI 2 or 3 or a loop needs solving."""
    components = coupling.components
    if not all(
        isinstance(c, ModelExchangeComponent) and c.flow.instance.is_compiled
        for c in components  # FMI 1.0 FMUs take the Python path, for now
    ) or any(kind == "loop" for kind, *_ in coupling.schedule):
        return None
    calls, counted = [], []
    for component in components:
        instance = component.flow.instance
        set_time, set_states, derivatives, _, handle = instance.c_calls.tolist()
        get_real, set_real = map(instance.c_address, instance.real_functions)
        calls.append([set_time, set_states, derivatives, get_real, set_real, handle])
        counted.append(int(instance.counts_values))
    rows, vrs, slots = [], [], []
    for kind, c, names, step_slots in coupling.schedule:
        variables = components[c].flow.archive.variables
        rows.append([0 if kind == "read" else 1, c, len(vrs), len(names)])
        vrs += [variables[n].vr for n in names]
        slots += step_slots
    sizes = [len(c.state_names) for c in components]
    return (
        np.array(calls, dtype=np.uint64),
        np.array(counted, dtype=np.int64),
        np.cumsum([0, *sizes]).astype(np.int64),
        np.array(rows, dtype=np.int64).reshape(-1, 4),
        np.array(vrs, dtype=np.uint32),
        np.array(slots, dtype=np.int64),
        coupling.outputs,
        np.zeros(max([len(n) for _, _, n, _ in coupling.schedule], default=1)),
    )


@functools.cache
def _kernels():
    """Import the compiled coupled step on first use (numba loads it from its cache)."""
    from . import coupled_kernels

    return coupled_kernels


def couple(
    components: Mapping[str, object],
    connections: Iterable[Connection | tuple[str, str]],
    *,
    communication: Communication | None = None,
    t0: float = 0.0,
) -> CoupledModelExchange | CoupledCoSimulation:
    """Join components by connections into one flow.

    Parameters
    ----------
    components : mapping
        {name: part}; a part is an FMU flow (`open_fmu`), a `NativeBlock`, or
        (vector field, x0). Names must not contain dots.
    connections : iterable
        `Connection`s or (source, target) pairs of `component.variable`.
    communication : Communication, optional
        The co-simulation master's options, used when some component steps
        itself (a Co-Simulation FMU); Jacobi with held inputs by default.
    t0 : float
        Start time, where an algebraic loop is first solved.

    Returns
    -------
    CoupledModelExchange or CoupledCoSimulation
        The flow; its `x0` is the components' initial states.

    Raises
    ------
    FmibridgeError
        Naming the component and variable, for every bad input that
        `Coupling` checks, and `loops.AlgebraicLoopError` for a loop with no
        solution at (t0, x0). The components are closed then.
    """
    built: list[Component] = []
    links_in = list(connections)
    try:
        for name, part in components.items():
            built.append(_component(name, part))
        links = [c if isinstance(c, Connection) else Connection(*c) for c in links_in]
        coupling = Coupling(built, links)
        if all(c.integrates for c in built):
            flow = CoupledModelExchange(coupling)
        else:
            flow = CoupledCoSimulation(coupling, communication or Communication())
        coupling.check_loops(t0, flow.parts(flow.x0))
    except BaseException:
        for component in built:
            component.close()
        for part in components.values():
            if isinstance(part, Flow):
                part.close()
        raise
    return flow


def _component(name: str, part: object) -> Component:
    if not isinstance(name, str) or not name or "." in name:
        raise FmibridgeError(
            f"component name {name!r} must be a non-empty string without dots."
        )
    if isinstance(part, tuple) and len(part) == 2:
        return as_component(name, *part)
    return as_component(name, part)
