"""The co-simulation master: a coupled system with components that step themselves.

`CoupledCoSimulation.advance(t, x, h)` is one communication step of length h:
every component put back at (t, its part of x) by a saved state or a replay
(checked bit for bit), whichever `Costs` says is cheaper, then propagated and
stepped in one compiled step (`_cosim.CommunicationStep`). docs/coupled.md
explains the schemes and inputs.

References
----------
Kübler and Schiehlen, "Two methods of simulator coupling", 2000 (Jacobi and
Gauss-Seidel schemes, extrapolated inputs). Gomes et al.,
"Co-simulation: a survey", ACM Comput. Surv. 51(3), 2018. Griewank 1992
(checkpointing for reversal).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NoReturn, cast

import numpy as np

from ..core.errors import FlowTerminated, FmibridgeError
from ..core.integrators import Scheme
from ..core.records import TIME_RTOL
from ._cosim import (
    MAX_HISTORY,
    CommunicationStep,
    MasterStepper,
    keep_last,
    step_done,
    take_step,
)
from ._fmi import FmiFunctions
from ._stepper import Stepper
from .base import Flow, UndoPlan
from .coupling import CoupledParts, Coupling
from .fmu import C_REALS, MAX_SNAPSHOTS, CoSimulationFlow

SCHEMES = ("jacobi", "gauss-seidel")
INPUTS = ("hold", "extrapolate")
MAX_REPLAY = 32  # steps replayed at most to return to a point left unsaved
# An FMU whose save costs at most this many plain steps saves before every step
# that may be undone: Halving returns to about every other one, so the save
# costs less than the replays it spares; the margin covers the first save's
# allocation (fmi2GetFMUstate: FMI 2.0, sec. 2.1.8).
CHEAP_SAVE = 4.0


class MeasuredCosts:
    """The costs the save-or-replay decisions compare, in one unit (0: unknown),
    as the run times them (running means, `_cosim`). Any object with these four
    methods may take its place (`CoupledCoSimulation.costs`)."""

    def __init__(self, master: CoupledCoSimulation) -> None:
        self._master = master
        self._index = master.coupling.index

    def save(self, name: str) -> float:
        """A state save of the Co-Simulation FMU `name`: its CPU seconds
        (`CoSimulationFlow.save_cost`)."""
        flow = self._master.components[self._index[name]].flow
        return cast(CoSimulationFlow, flow).save_cost

    def step(self) -> float:
        """A plain communication step of the whole coupling: its wall seconds."""
        return self._master._step_cost

    def do_step(self, name: str) -> float:
        """One doStep of the FMU `name` in the compiled step: its wall seconds."""
        return float(self._master._compiled.do_step_cost[self._index[name]])

    def replay(self, name: str, n_steps: int, seconds: float) -> float:
        """A replay of n_steps by the FMU `name` that took `seconds` (wall)."""
        return seconds


Costs = MeasuredCosts  # the interface the decisions read (`MeasuredCosts`)


@dataclass
class _Saver:
    """A Co-Simulation FMU that saves its state, its saves and replays since then."""

    flow: CoSimulationFlow
    where: slice  # its part of the master's state
    name: str
    saved_at: OrderedDict[tuple, None] = field(default_factory=OrderedDict)
    rent: float = 0.0  # its replays' cost since its last save
    replayed: int = 0  # steps replayed
    # from its last save to the master: (steps, first first, their end, the save)
    path: tuple = ()

    def returns(self, t: float, x: np.ndarray, saved: bool = True) -> bool:
        """True if it can return to (t, x) (`saved`: not only is there)."""
        return self.flow.can_return(t, x[self.where], saved)


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
        for name, allowed in (("scheme", SCHEMES), ("inputs", INPUTS)):
            if getattr(self, name) not in allowed:
                raise FmibridgeError(
                    f"Communication: `{name}` must be one of {list(allowed)}, "
                    f"got {getattr(self, name)!r}."
                )
        object.__setattr__(self, "order", tuple(self.order))


class CoupledCoSimulation(CoupledParts, Flow):  # type: ignore[override]  # is_terminated: read from the components
    """Components coupled by communication steps; see the module docstring.

    Attributes
    ----------
    costs : Costs
        The costs the save-or-replay decisions compare (default: timed in the run).
    """

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
        self._extrapolates = communication.inputs == "extrapolate"
        self._gauss_seidel = communication.scheme == "gauss-seidel"
        self._history: OrderedDict[tuple, tuple[float, np.ndarray]] = OrderedDict()
        self._last_step: tuple = ()  # (t, x, t + h, y, h) of the last step
        self._end: tuple = (math.nan, 0.0, b"")  # its (t + h, h, y bytes)
        self._may_undo: UndoPlan | None = None  # None: every step may be undone
        self._undoes_none = False  # the run's plan undoes no step (no guards)
        self._saving = [  # CS FMUs
            _Saver(flow, self._slices[k], self.components[k].name)
            for k, flow in self._flows.items()
            if isinstance(flow, CoSimulationFlow)
        ]
        self._h_min = math.inf  # the shortest step taken: a located bracket
        # y bytes -> (t + h, snap, the recorded variables) at the last steps' ends
        self._recorded_at: OrderedDict[bytes, tuple] = OrderedDict()
        # (t + h, y bytes) -> (t, x, h, scheme): how the last steps got there
        self._came_from: OrderedDict[tuple, tuple] = OrderedDict()
        self._step_cost = 0.0  # wall seconds of a plain step, a running mean
        self.reports_events = any(f.reports_events for f in self._flows.values())
        self._replays = not self.reports_events  # its events are logged once
        calls = [  # their C calls where the compiled step calls them
            c.flow.compiled_calls() if isinstance(c.flow, CoSimulationFlow) else None
            for c in self.components
        ]
        self._called = {  # component -> (FMU, part): those the compiled step calls
            k: (cast(CoSimulationFlow, self.components[k].flow), self._slices[k])
            for k, call in enumerate(calls)
            if call is not None
        }
        self._compiled = _compiled_step(self, calls)
        self.costs: Costs = MeasuredCosts(self)
        self._compiled_at: list[tuple] = []  # each FMU's point after the last one
        self._saved = False  # the step being taken saved the components' states

    def stepper(self, scheme: Scheme) -> Stepper:
        """The compiled loops' steps: a `MasterStepper` where all are direct."""
        if not self._compiled.direct:
            return super().stepper(scheme)
        return MasterStepper(self, scheme, TIME_RTOL, self._record_calls())

    def _record_calls(self) -> list[tuple[int, int]]:
        """Each recorded variable as (component, vr) if all are C reals; else none."""
        calls = []
        for name in self.recorded_names:
            component, _, variable = name.partition(".")  # checked by `record`
            k = self.coupling.index[component]
            found = self._called.get(k)
            v = None if found is None else found[0].archive.variables.get(variable)
            if v is None or v.type not in C_REALS or v.shape:
                return []
            calls.append((k, v.vr))
        return calls

    @property
    def steps_in_blocks(self) -> bool:
        """True where the compiled loops may take many steps per call."""
        return not self._steps().startswith("python")

    @property
    def forward_only(self) -> bool:
        """True where a component cannot save its state."""
        return any(getattr(f, "forward_only", False) for f in self._flows.values())

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return the state after one communication step of h."""
        start, self._saved = time.perf_counter(), False
        t_end, h_end, y_end = self._end  # where every component is
        xb = x.tobytes()
        here = abs(t - t_end) <= TIME_RTOL * h_end and xb == y_end
        # back first: the forecast's guards may read the components' outputs
        replayed = 0
        if self._saving and self._replays and not here:
            replayed = self._return_to(t, x, h)
        self._h_min = min(self._h_min, h)
        may_undo = self._may_undo is not None and self._may_undo(t, x, h)
        if self._compiled.direct:  # put the components at (t, x) where they are not
            where = [flow._at for flow, _ in self._called.values()]
            if not ((here or replayed > 0) and where == self._compiled_at):
                for flow, part in self._called.values():
                    flow.goto(t, x[part])
            self._compiled_at = []
        y = take_step(self, t, x, xb, h, scheme, may_undo)
        if self.recorded_names:
            value = (t + h, TIME_RTOL * h, super()._recorded(t + h, y))
            keep_last(self._recorded_at, y.tobytes(), value, MAX_HISTORY, False)
        spent = -1.0 if replayed or self._saved else time.perf_counter() - start
        step_done(self, t, self._last_step[1], h, scheme, spent)  # x as kept
        step = self._came_from.get((t + h, self._end[2]))
        for s in self._saving:  # extend its path by this step, or drop it
            if s.path:
                steps, at, saved = s.path
                if at != (t, xb) or step is None or len(steps) >= self._replay_limit(s):
                    s.path = ()
                else:
                    s.path = (steps + [step], (t + h, self._end[2]), saved)
        return y

    def _return_to(self, t: float, x: np.ndarray, h: float) -> int:
        """Replay the components back to (t, x); the steps replayed (0: none)."""
        if self._compiled.direct:
            return self._replay_each(t, x, h)
        chain = self._chain(t, x)
        if not chain:
            return 0
        for t_k, x_k, h_k, scheme, _ in reversed(chain):
            y = take_step(self, t_k, x_k, x_k.tobytes(), h_k, scheme)
        for s in self._saving:
            s.replayed += len(chain)
        return len(chain) if np.array_equal(y, x) else 0  # 0: `goto` resets

    def _replay_each(self, t: float, x: np.ndarray, h: float) -> int:
        """Replay each component alone to (t, x); save it there where that pays."""
        step, replayed, xb = self._compiled, 0, x.tobytes()
        for c, s in enumerate(self._saving):
            if s.returns(t, x, False):
                continue
            chain = self._path_to(s, t, x, xb)
            if not chain:  # none within MAX_REPLAY: `goto` enters by a reset
                continue
            s.flow.goto(chain[0][0], chain[0][1][s.where])
            start = time.perf_counter()  # the replay's own cost: what a save spares
            done = step.replay(c, chain, np.ascontiguousarray(x))
            seconds = time.perf_counter() - start
            self._compiled_at = []
            s.replayed += done + (done < len(chain))
            if done < len(chain):
                s.flow.replay_missed(chain[0][0], t, x[s.where])
                continue
            s.flow.stepped(t, x[s.where], chain[-1][2])
            replayed += done
            if self._extrapolates:  # kept as a replay of all would (`take_step`)
                for key in [*_starts(chain[1:]), (t, xb)]:
                    if key in self._history:
                        self._history.move_to_end(key)
            s.path = (chain, (t, xb), chain[0][:2])
            # save it once the replays since its last save and the log2(h / h_min)
            # returns still expected cost a save (rent or buy; Griewank 1992)
            spent = self.costs.replay(s.name, done, seconds)
            s.rent += spent
            expected = math.log2(h / self._h_min) if h > 2.0 * self._h_min else 1.0
            if s.rent + spent * expected >= self.costs.save(s.name):
                self._keep(t, x, [s])
        return replayed

    def _path_to(self, s: _Saver, t: float, x: np.ndarray, xb: bytes) -> list[tuple]:
        """The steps, first first, that lead component s to (t, x)."""
        starts = _starts(s.path[0]) if s.path else []
        if (t, xb) in starts and s.returns(*s.path[2]):
            return s.path[0][: starts.index((t, xb))]
        return self._chain(t, x, False, self._replay_limit(s), only=s)[::-1]

    def _chain(
        self,
        t: float,
        x: np.ndarray,
        saved: bool = False,
        limit: int = MAX_REPLAY,
        only: _Saver | None = None,
    ) -> list[tuple]:
        """Steps to (t, x), last first, from where all (or `only`) return; []: none."""
        chain: list[tuple] = []
        t_end, h_end, y_end = self._end
        which = self._saving if only is None else [only]
        while True:
            key = (t, x.tobytes())
            if (  # tried at (t, x), and where the master saved, each component
                not chain  # entered by a reset it repeats, or the last step ended
                or all(
                    key in s.saved_at or s.flow.anchored((t, x[s.where].tobytes()))
                    for s in which
                )
                or (
                    not saved
                    and key[1] == y_end
                    and abs(t - t_end) <= TIME_RTOL * h_end
                )
            ) and all(s.returns(t, x, saved) for s in which):
                return chain
            step = self._came_from.get(key)
            if step is None or len(chain) == limit:
                return []
            chain.append(step)
            t, x = step[0], step[1]

    def _step_failed(
        self, failed: int, t: float, x: np.ndarray, h: float, y: np.ndarray
    ) -> NoReturn:
        """Raise for a step that did not complete (failed < 0: non-finite y)."""
        if failed < 0:
            raise FmibridgeError(
                f"coupled system: non-finite states after the communication step "
                f"from t = {t!r} with h = {h!r}: {y.tolist()} for {self.state_names}."
            )
        self._stepped(t, h, y, self._order.index(failed))
        flow = self._called[failed][0]
        status, _, terminated, _, last = self._compiled.ended
        end = flow.instance.failed_step(status, terminated, last)
        try:
            flow._terminate(end.t)
        except FlowTerminated:
            raise FlowTerminated(t, x) from None

    def _stepped(self, t: float, h: float, y: np.ndarray, n: int) -> None:
        """Tell the first n FMUs called directly that a cut step took them to y."""
        self._compiled_at = []
        for c in self._order[:n]:
            if c in self._called:
                self._called[c][0].stepped(t + h, y[self._slices[c]], h)

    def close(self) -> None:
        """Free every component."""
        self._compiled_at = []
        super().close()

    def _keep(self, t: float, x: np.ndarray, which: list[_Saver]) -> None:
        """Save the state of each component in `which` at (t, x)."""
        if not which:
            return
        self._saved, key = True, (t, x.tobytes())
        for s in which:
            s.flow.keep()
            s.rent = 0.0
            alone = self._compiled.direct and not self._cheap(s)
            s.path = ([], key, (t, x.copy())) if alone else ()
            keep_last(s.saved_at, key, None, MAX_SNAPSHOTS)

    def _should_save(self, t: float, x: np.ndarray) -> list[_Saver]:
        """The components to save before a step that may be undone."""
        everyone = self._saving
        if not self._replays:
            return everyone
        if self._compiled.direct:
            return [
                s for s in everyone if self._cheap(s) or not self._can_replay(s, t, x)
            ]
        save_cost = sum(self.costs.save(s.name) for s in everyone)
        step_cost = self.costs.step()
        limit = MAX_REPLAY  # a chain this long costs a save: no need to walk on
        if step_cost > 0.0:
            limit = min(limit, math.ceil(save_cost / step_cost))
        if limit <= 1:
            return everyone
        if all(s.returns(t, x) for s in everyone):  # saved or anchored here
            return []
        chain = len(self._chain(t, x, saved=True, limit=limit))
        return everyone if chain == 0 or chain * step_cost >= save_cost else []

    def _cheap(self, s: _Saver) -> bool:
        """True if s's save costs at most CHEAP_SAVE plain steps."""
        return self.costs.save(s.name) <= CHEAP_SAVE * self.costs.step()

    def _can_replay(self, s: _Saver, t: float, x: np.ndarray) -> bool:
        """True if s can come back to (t, x), saved or by a replay."""
        if s.returns(t, x):
            return True
        xb = x.tobytes()
        if s.path and s.path[1] == (t, xb) and s.returns(*s.path[2]):
            return True
        chain = self._chain(t, x, True, self._replay_limit(s), only=s)[::-1]
        if chain:
            s.path = (chain, (t, xb), chain[0][:2])
        return bool(chain)

    def _replay_limit(self, s: _Saver) -> int:
        """The most steps s replays: its save's cost in doSteps."""
        cost = self.costs.do_step(s.name)
        if cost <= 0.0:
            return MAX_REPLAY
        steps = self.costs.save(s.name) / cost
        return int(min(MAX_HISTORY - 1, max(MAX_REPLAY, steps)))

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the components' events at (t, x); the recorded values are stale."""
        self._recorded_at.clear()
        return super().discrete_event(t, x)

    def plan_undo(self, may_undo: UndoPlan) -> None:
        """Save the components' states only before steps may_undo(t, x, h) marks."""
        self._may_undo = may_undo
        self._undoes_none = not getattr(may_undo, "guards", True)
        self._saving = [_Saver(s.flow, s.where, s.name) for s in self._saving]
        self._h_min = math.inf
        for s in self._saving:  # the master saves their states; each frees
            s.flow.plan_undo(lambda t, x, h: False)  # those an earlier run saved

    @property
    def n_state_saves(self) -> int:
        """The FMU states the components saved since `plan_undo`."""
        return sum(s.flow.n_state_saves for s in self._saving)

    @property
    def n_steps_replayed(self) -> dict[str, int]:
        """The steps each Co-Simulation FMU replayed since `plan_undo`, by name."""
        return {s.name: s.replayed for s in self._saving}

    def _recorded(self, t: float, x: np.ndarray) -> dict[str, float]:
        """The recorded variables at (t, x), read after the step that ended there."""
        t_end, snap, recorded = self._recorded_at.get(x.tobytes(), (t, -1.0, {}))
        if abs(t - t_end) <= snap:
            return recorded
        return super()._recorded(t, x)

    def _component_step(
        self,
        c: int,
        t: float,
        x: np.ndarray,
        h: float,
        scheme: Scheme,
        level: np.ndarray,
        slope: np.ndarray,
        read: bool,
        y: np.ndarray,
    ) -> None:
        """`_cosim.CommunicationStep`'s call back: step c (`_cosim` says how)."""
        component, coupling, x_c = self.components[c], self.coupling, x[self._slices[c]]
        if component.integrates:

            def f(tau: float, xc: np.ndarray) -> np.ndarray:
                component.at(tau, xc)
                coupling.write_inputs(c, level + slope * (tau - t))
                return component.derivatives(tau, xc)

            y_c = scheme.step(f, t, x_c, h)
        else:
            component.at(t, x_c)
            coupling.write_inputs(
                c, level + slope * (h / 2) if self._extrapolates else level
            )
            y_c = component.step(t, x_c, h)
        if read:
            component.at(t + h, y_c)
            coupling.read_outputs(c, level)
        y[self._slices[c]] = y_c

    def _propagate(self, t: float, x: np.ndarray) -> np.ndarray:
        """The connected outputs, the connections propagated at (t, x)."""
        self.coupling.evaluate(t, self.parts(x))
        return self.coupling.outputs

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded variables at (t, x) and the components' own
        events in the step that ended there (the others' parts interpolated)."""
        recorded = self._recorded(t, x)
        if not self.reports_events or not self._last_step:
            return recorded, ()
        t_start, x_start, t_end, y, _ = self._last_step
        if abs(t - t_end) > TIME_RTOL * (t_end - t_start) or not np.array_equal(x, y):
            return recorded, ()
        events = []
        for k, flow in self._flows.items():
            where = self._slices[k]
            own = flow.observe(t, x[where])[1] if flow.reports_events else ()
            for t_event, name, before, after, *_ in own:
                w = (t_event - t_start) / (t_end - t_start)
                around = x_start + w * (y - x_start)
                x_before, x_after = around.copy(), around.copy()
                x_before[where], x_after[where] = before, after
                named = None if name is None else f"{self.components[k].name}.{name}"
                events.append((t_event, named, x_before, x_after))  # named None: silent
        return recorded, tuple(sorted(events, key=lambda event: event[0]))

    def describe(self) -> dict[str, str]:
        """Return the provenance entries, with the scheme and the steps' path."""
        return {
            **super().describe(),
            "communication": f"{self.communication.scheme}, inputs "
            f"{self.communication.inputs}",
            "steps": self._steps(),
        }

    def _steps(self) -> str:
        """Which path took the communication steps, and why."""
        if not self._compiled.direct:
            return "python (a component called back, or an algebraic loop)"
        if self.recorded_names and not (self._undoes_none and self._record_calls()):
            return (
                "python (recorded variables read in Python: guards, or variables "
                "other than scalar reals of the FMUs called directly)"
            )
        if not self._undoes_none:
            return "compiled where no state is saved (guards)"
        return "compiled"


def _starts(steps: list[tuple]) -> list[tuple]:
    """The points, (t, x bytes), that steps (t, x, h, ...) start from."""
    return [(step[0], step[1].tobytes()) for step in steps]


def _compiled_step(
    master: CoupledCoSimulation, calls: list[FmiFunctions | None]
) -> CommunicationStep:
    """The master's `_cosim.CommunicationStep`."""
    coupling, components = master.coupling, master.components

    def vrs(c: int, names) -> list[int]:
        if calls[c] is None:  # placeholders: the component reads and writes them
            return [0] * len(names)
        variables = cast(CoSimulationFlow, components[c].flow).archive.variables
        return [variables[name].vr for name in names]

    direct = all(call is not None for call in calls) and not coupling.loops()
    plan = [
        (0 if kind == "read" else 1, c, vrs(c, names), list(slots))
        for kind, c, names, slots in coupling.schedule
    ] if direct else None  # fmt: skip
    return CommunicationStep(
        calls,
        [vrs(c, component.state_names) for c, component in enumerate(components)],
        [(vrs(c, names), slots) for c, (names, slots) in enumerate(coupling.inputs_of)],
        [
            (vrs(c, names), slots)
            for c, (names, slots) in enumerate(coupling.outputs_of)
        ],
        plan,
        master._order,
        None if direct else master._propagate,
        master._component_step,
    )
