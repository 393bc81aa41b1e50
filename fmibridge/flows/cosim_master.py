"""The co-simulation master: a coupled system with components that step themselves.

`CoupledCoSimulation.advance(t, x, h)` is one communication step of length h:

1. every component is put at (t, its part of x): a Co-Simulation FMU restores
   the FMU state saved there (`CoSimulationFlow.goto`), so a step the method
   undoes to bracket a crossing is undone in every FMU together;
2. the connections are propagated at t, algebraic loops solved;
3. each component steps to t + h. Jacobi: all from the values at t.
   Gauss-Seidel: in order, each using the new outputs of those before it.
   Inputs are held, or extrapolated linearly from the values at the last two
   communication points (Gauss-Seidel: interpolated between t and t + h for
   the sources already stepped). A Co-Simulation FMU holds its inputs over a
   doStep, so it gets the line's value at the middle of the step (the same
   integral over the step to second order); a component the master
   integrates (Model Exchange FMU, native block) gets the line at each stage.

The extrapolation's history is kept per (t, x) reached by a step, so `advance`
stays repeatable; after a reset (a point no step reached) it restarts from
held inputs, as it must across a jump. An FMU that ends the simulation inside a
step (terminateSimulation) ends the coupled run at the step's start, the last
point where all components agree. The components' own events inside a doStep
(an FMI 3 FMU in Event Mode stops at each) are run there and logged in the
Result's event log as `component.fmu_event` once the step is accepted
(`observe`); that component's part of the state before and after is exact, the
others' parts, which are known only at communication points, are interpolated
linearly between the step's ends.

References
----------
Kübler and Schiehlen, "Two methods of simulator coupling", 2000 (Jacobi and
Gauss-Seidel schemes, extrapolated inputs). Gomes et al.,
"Co-simulation: a survey", ACM Comput. Surv. 51(3), 2018.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import Scheme
from .base import Flow, FlowTerminated
from .coupling import CoupledParts, Coupling
from .fmu import SNAP_RTOL

SCHEMES = ("jacobi", "gauss-seidel")
INPUTS = ("hold", "extrapolate")
MAX_HISTORY = 64  # communication points remembered for extrapolation (a halving
# revisits the last few; 64 covers the deepest bisection of Halving's 64 halvings)


@dataclass(frozen=True)
class Communication:
    """How the co-simulation master exchanges values between components.

    Parameters
    ----------
    scheme : {'jacobi', 'gauss-seidel'}
        Jacobi steps every component from the values at t; Gauss-Seidel steps
        them in `order`, each with the new outputs of those before it.
    inputs : {'hold', 'extrapolate'}
        Inputs held at their value at t (first order), or extrapolated
        linearly from the last two communication points (second order).
    order : tuple of str, optional
        Gauss-Seidel's order of components (default: as given to `couple`).
    """

    scheme: str = "jacobi"
    inputs: str = "hold"
    order: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise FmibridgeError(
                f"Communication: `scheme` must be one of {list(SCHEMES)}, got "
                f"{self.scheme!r}."
            )
        if self.inputs not in INPUTS:
            raise FmibridgeError(
                f"Communication: `inputs` must be one of {list(INPUTS)}, got "
                f"{self.inputs!r}."
            )
        object.__setattr__(self, "order", tuple(self.order))


class CoupledCoSimulation(CoupledParts, Flow):
    """Components coupled by communication steps; see the module docstring."""

    def __init__(self, coupling: Coupling, communication: Communication) -> None:
        super().__init__(coupling)
        self.communication = communication
        names = [c.name for c in self.components]
        order = communication.order or tuple(names)
        if sorted(order) != sorted(names):
            raise FmibridgeError(
                f"Communication: `order` must list each component once, got "
                f"{list(order)} for components {names}."
            )
        self._order = [names.index(n) for n in order]
        self._history: OrderedDict[tuple, tuple[float, np.ndarray]] = OrderedDict()
        self._last_step: tuple = ()  # (t, x, t + h, y) of the last `advance`
        self.reports_events = any(
            c.flow is not None and c.flow.reports_events for c in self.components
        )

    @property
    def forward_only(self) -> bool:
        """True where a component cannot save its state (a return replays it)."""
        return any(getattr(c.flow, "forward_only", False) for c in self.components)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return the state after one communication step of h (Jacobi or
        Gauss-Seidel, inputs held or extrapolated)."""
        parts = self.parts(x)
        self.coupling.evaluate(t, parts)
        y_t = self.coupling.outputs.copy()
        level, slope = y_t.copy(), self._slope(t, x, y_t)
        steps = list(parts)
        is_gauss_seidel = self.communication.scheme == "gauss-seidel"
        try:
            for c in self._order:
                steps[c] = self._step(c, t, parts[c], h, scheme, level, slope)
                if is_gauss_seidel:
                    self._use_new_outputs(c, t + h, steps[c], h, y_t, level, slope)
        except FlowTerminated:  # the others cannot follow it there: end at t
            raise FlowTerminated(t, x) from None
        y = np.concatenate(steps)
        if not np.all(np.isfinite(y)):
            raise FmibridgeError(
                f"coupled system: non-finite states after the communication step "
                f"from t = {t!r} with h = {h!r}: {y.tolist()} for {self.state_names}."
            )
        self._remember((t + h, y.tobytes()), (t, y_t))
        self._last_step = (t, x.copy(), t + h, y)
        return y

    def _slope(self, t: float, x: np.ndarray, y_t: np.ndarray) -> np.ndarray:
        """The extrapolation slope of each connected output (0 if held)."""
        previous = self._history.get((t, x.tobytes()))
        if self.communication.inputs == "hold" or previous is None:
            return np.zeros_like(y_t)
        t_previous, y_previous = previous
        return (y_t - y_previous) / (t - t_previous)

    def _step(self, c, t, x, h, scheme, level, slope) -> np.ndarray:
        """Step component c from (t, x) by h, its inputs on the line
        level + slope (tau - t)."""
        component, coupling = self.components[c], self.coupling
        if component.integrates:

            def f(tau: float, xc: np.ndarray) -> np.ndarray:
                component.at(tau, xc)
                coupling.write_inputs(c, level + slope * (tau - t))
                return component.derivatives(tau, xc)

            return scheme.step(f, t, x, h)
        component.at(t, x)
        coupling.write_inputs(c, level + slope * (h / 2))
        return component.step(t, x, h)

    def _use_new_outputs(self, c, t_new, x_new, h, y_t, level, slope) -> None:
        """Gauss-Seidel: let the components after c see its outputs at t_new,
        held, or on the line from their value at t (interpolation)."""
        positions = [k for k, (s, _) in enumerate(self.coupling.sources) if s == c]
        if not positions:
            return
        self.components[c].at(t_new, x_new)
        self.coupling.read_outputs(c, level)
        if self.communication.inputs == "hold":
            slope[positions] = 0.0
        else:
            slope[positions] = (level[positions] - y_t[positions]) / h
            level[positions] = y_t[positions]

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded variables at (t, x) (`record`), and the
        components' own events in the step that ended there, each as (t,
        `component.fmu_event`, x before, x after): the component's part as it
        reports it, the others' interpolated in the step."""
        recorded = self._recorded(t, x)
        if not self.reports_events or not self._last_step:
            return recorded, ()
        t_start, x_start, t_end, y = self._last_step
        if abs(t - t_end) > SNAP_RTOL * (t_end - t_start) or not np.array_equal(x, y):
            return recorded, ()
        events = []
        for component, part, where in zip(
            self.components, self.parts(x), self._slices, strict=True
        ):
            if component.flow is None or not component.flow.reports_events:
                continue
            for t_event, name, before, after, *_ in component.flow.observe(t, part)[1]:
                w = (t_event - t_start) / (t_end - t_start)
                around = x_start + w * (y - x_start)
                x_before, x_after = around.copy(), around.copy()
                x_before[where], x_after[where] = before, after
                events.append((t_event, f"{component.name}.{name}", x_before, x_after))
        return recorded, tuple(sorted(events, key=lambda event: event[0]))

    def _remember(self, key: tuple, value: tuple[float, np.ndarray]) -> None:
        self._history[key] = value
        self._history.move_to_end(key)
        while len(self._history) > MAX_HISTORY:
            self._history.popitem(last=False)

    def describe(self) -> dict[str, str]:
        """Return the provenance entries, with the communication scheme."""
        return {
            **super().describe(),
            "communication": f"{self.communication.scheme}, inputs "
            f"{self.communication.inputs}",
        }
