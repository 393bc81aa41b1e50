"""Coupled systems: several components joined by connections are one flow.

The whole is one `Flow` whose states are the components' states, named
`component.variable`: a `CoupledModelExchange` vector field where the master
integrates every component (the connections evaluated at every RK stage),
else a `cosim_master.CoupledCoSimulation` (communication steps).

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

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..core._functions import Function
from ..core.errors import FmibridgeError
from ..core.guards import Edge, Guard
from ..core.units import UnitDefinition
from ._coupled import CoupledRhs
from .base import Flow, VectorField
from .components import ModelExchangeComponent, as_component
from .cosim_master import Communication, CoupledCoSimulation
from .coupling import Connection, CoupledParts, Coupling


class CoupledModelExchange(CoupledParts, VectorField):  # type: ignore[override]  # is_terminated: read from the components
    """Components the master integrates together: one vector field, its dx/dt
    one compiled `Function` (`_coupled.CoupledRhs`)."""

    def __init__(self, coupling: Coupling) -> None:
        super().__init__(coupling)
        parts = [  # each component, put at its point where its outputs are read
            component.part(where.start, bool(outputs))
            for component, where, (outputs, _) in zip(
                self.components, self._slices, coupling.outputs_of, strict=True
            )
        ]
        names = ", ".join(c.name for c in self.components)
        what = f"the coupled system of {names}"
        self._rhs = CoupledRhs(parts, coupling.steps, coupling.outputs, what)

    def rhs_function(self) -> Function:
        """Return dx/dt of every component, its inputs propagated first."""
        return self._rhs

    @property
    def calls_each_step(self) -> bool:
        """True where an FMU needs completedIntegratorStep."""
        return bool(self._completing)

    def with_inputs(
        self, names: Sequence[str]
    ) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
        """Return rhs(t, x, u): dx/dt with the free inputs `names` at u.

        The inputs (`component.variable`, connected to nothing) take the values u
        for that evaluation only and are 0 otherwise, as a contact force is applied
        through each body's force input (Or and Ames, eq. 5).

        Raises
        ------
        FmibridgeError
            Naming the variable: unknown, no input, or driven by a connection.
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
        k, variable, port = self.coupling.port_of(name, where)
        if port.causality != "input":
            raise FmibridgeError(
                f"{where}: {name} has causality {port.causality!r}; a force input "
                f"must be an input."
            )
        if (k, variable) in self.coupling.source_of:
            raise FmibridgeError(
                f"{where}: {name} is driven by a connection; a force input must be "
                f"free. Without one, completion runs by projection: give the "
                f"[constraint] `coordinate` (the state the gap is measured along) "
                f"and `mass` (the effective mass along it) instead of `forces`."
            )
        return self.components[k].writer([variable])

    def put_at(self, t: float, x: np.ndarray) -> None:
        """Put every component at (t, x), connections propagated."""
        self.rhs(t, x)

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded variables at the sample (t, x)."""
        return self._recorded(t, x), ()

    def event_edges(self, mode: str) -> tuple[Edge, ...]:
        """Return the Model Exchange FMUs' own event indicators as self-loops
        ('either' guards, as `fmu.fmu_event_edges`), connections propagated first."""
        return tuple(
            self._event_edge(k, component, i, mode)
            for k, component in enumerate(self.components)
            if isinstance(component, ModelExchangeComponent)
            for i in range(component.flow.instance.nz)
        )

    def _event_edge(
        self, k: int, component: ModelExchangeComponent, i: int, mode: str
    ) -> Edge:

        def indicator(t: float, x: np.ndarray) -> float:
            parts = self.parts(x)
            self.coupling.evaluate(t, parts)
            return float(component.flow.instance.calls.event_indicators(t, parts[k])[i])

        def update(t: float, x: np.ndarray) -> np.ndarray:
            parts = self.parts(x)
            self.coupling.evaluate(t, parts)
            parts[k] = component.flow.event_update(t, parts[k])
            return np.concatenate(parts)

        name = f"{component.name}.fmu_event_{i}"
        indicator.__name__ = name
        return Edge(
            Guard(indicator, "either", reset_at="beyond"),
            mode,
            update,
            name,
            discrete_change=component.flow.event_changed_discrete,
        )


def couple(
    components: Mapping[str, object],
    connections: Iterable[Connection | tuple[str, str]],
    *,
    communication: Communication | None = None,
    t0: float = 0.0,
    units: Mapping[str, UnitDefinition] | None = None,
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
        The co-simulation master's options, where a component steps itself;
        Jacobi with held inputs by default.
    t0 : float
        Start time, where an algebraic loop is first solved.
    units : mapping, optional
        {unit: UnitDefinition} for units the components leave undefined.

    Returns
    -------
    CoupledModelExchange or CoupledCoSimulation
        The flow; its `x0` is the components' initial states.

    Raises
    ------
    FmibridgeError
        Naming the component and variable, for every bad input `Coupling` checks,
        and `loops.AlgebraicLoopError` for a loop with no solution at (t0, x0).
    """
    try:  # on an error, the FMU parts are closed here
        built = [as_component(name, part) for name, part in components.items()]
        links = [
            c if isinstance(c, Connection) else Connection(*c) for c in connections
        ]
        coupling = Coupling(built, links, units)
        flow: CoupledModelExchange | CoupledCoSimulation
        if all(c.integrates for c in built):
            flow = CoupledModelExchange(coupling)
        else:
            flow = CoupledCoSimulation(coupling, communication or Communication())
        coupling.check_loops(t0, flow.parts(flow.x0))
    except BaseException:
        for part in components.values():
            if isinstance(part, Flow):
                part.close()
        raise
    return flow
