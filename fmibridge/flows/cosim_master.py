"""The co-simulation master: a coupled system with components that step themselves.

`CoupledCoSimulation.advance(t, x, h)` is one communication step of length h:

1. every component is put at (t, its part of x): a Co-Simulation FMU restores
   the FMU state saved there (`CoSimulationFlow.goto`), so a step the method
   undoes to bracket a crossing is undone in every FMU together. The states
   are saved before the steps the run may undo (`plan_undo`: those a guard
   may cross), else before every step. Where saving costs more than stepping
   (a large FMU's get state), a point the run may return to is instead
   reached again by replaying the steps that led to it from the last saved
   one (at most MAX_REPLAY, or as many as the FMU's save costs at its own
   doStep's cost, `_replay_limit`): the same steps with the same inputs give
   the same states, bit for bit, which the replay checks. A point an FMU
   entered by a reset and initialisation (the run's start, an impact's reset
   of a state variable it takes no other way) is entered again by the same
   calls, checked on its states (`CoSimulationFlow.anchored`): it needs no
   save, and replays start from it. A coupling with
   components called back (below) saves and replays them together, by whole
   steps. Where every component is called directly, each FMU goes its own
   way: one whose save costs at most a few steps (CHEAP_SAVE) saves
   before each step the run may undo; one whose save costs more replays
   alone, each step with the inputs it had in it, checked after every step
   (where one differs, the FMU enters the point by a reset, with a warning),
   and is saved where a replay returned it once the replays there are
   expected to cost more than the save (a return means a crossing is being
   located: checkpoint placement). The costs compared are the run's timings,
   or fixed ones in their place (`CoupledCoSimulation.costs`);
2. the connections are propagated at t, algebraic loops solved;
3. each component steps to t + h. Jacobi: all from the values at t.
   Gauss-Seidel: in order, each using the new outputs of those before it.
   Inputs are held, or extrapolated linearly from the values at the last two
   communication points (Gauss-Seidel: interpolated between t and t + h for
   the sources already stepped). A Co-Simulation FMU holds its inputs over a
   doStep, so it gets the line's value at the middle of the step (the same
   integral over the step to second order); a component the master
   integrates (Model Exchange FMU, native block) gets the line at each stage.

Steps 2 and 3 are one compiled step for every coupling
(`_cosim.CommunicationStep`): each Co-Simulation FMU of FMI 2 or 3 that saves
its state, without Event Mode or inputs of its own, is called there directly
(doStep, get and set of reals); any other component (Model Exchange FMU or
native block, integrated with the scheme; an FMU the C calls cannot take) is
stepped by one Python function called back (`_component_step`). The
connections at t are propagated in C where every component is called
directly and the coupling has no algebraic loop (`CommunicationStep.direct`),
else by `coupling.evaluate` (which solves the loops), called back. A direct
coupling's steps are taken in blocks (`steps_in_blocks`): a step with nothing
to save, restore or record calls back to Python only for the guards
(`_cosim.MasterStepper`).

The extrapolation's history is kept per (t, x) reached by a step, so `advance`
stays repeatable; after a reset (a point no step reached) it restarts from
held inputs, as it must across a jump. An FMU that ends the simulation inside a
step (terminateSimulation) ends the coupled run at the step's start, the last
point where all components agree. The recorded variables are read after each
step, where the components are, so a sample never moves an FMU. The
components' own events inside a doStep
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

import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import NoReturn, Protocol, cast

import numpy as np

from ..core.errors import FlowTerminated, FmibridgeError
from ..core.integrators import Scheme
from ..core.records import TIME_RTOL
from ._cosim import (
    MAX_HISTORY,
    CommunicationStep,
    MasterStepper,
    arrived,
    step_done,
    take_step,
)
from ._stepper import Stepper
from .base import Flow, UndoPlan
from .coupling import CoupledParts, Coupling, split_name
from .fmu import C_REALS, MAX_SNAPSHOTS, CoSimulationFlow

SCHEMES = ("jacobi", "gauss-seidel")
INPUTS = ("hold", "extrapolate")
MAX_REPLAY = 32  # steps replayed at most to return to a point left unsaved
# Under the compiled step, an FMU whose save costs at most this many plain
# steps saves before every step that may be undone: Halving returns to about
# every other such step and replays the steps since the last save there, so such
# a save costs less than the replays it spares; the margin covers a first save's
# one-time cost (fmi2GetFMUstate allocates on the first save: FMI 2.0, sec. 2.1.8).
CHEAP_SAVE = 4.0


class Costs(Protocol):
    """The costs the master's save-or-replay decisions compare, in one unit;
    0 where not known yet. `MeasuredCosts` (the default) times them in the run;
    a model with fixed costs (`CoupledCoSimulation.costs`) makes the decisions,
    and so the saves and replays, the same on every machine."""

    def save(self, name: str) -> float:
        """A state save of the Co-Simulation FMU `name`."""
        ...

    def step(self) -> float:
        """A plain communication step of the whole coupling."""
        ...

    def do_step(self, name: str) -> float:
        """One doStep of the Co-Simulation FMU `name` in the compiled step."""
        ...

    def replay(self, name: str, n_steps: int, seconds: float) -> float:
        """A replay of n_steps by the FMU `name` that took `seconds` (wall)."""
        ...


class MeasuredCosts:
    """The costs as the run times them: a save's CPU seconds
    (`CoSimulationFlow.save_cost`), the running mean of a plain step's wall
    seconds (`_cosim.step_done`), the compiled step's running mean of each
    FMU's doStep (`CommunicationStep.do_step_cost`), a replay's wall seconds."""

    def __init__(self, master: CoupledCoSimulation) -> None:
        self._master = master
        names = [c.name for c in master.components]
        self._flows = {names[k]: master.components[k].flow for k in range(len(names))}
        self._index = {name: k for k, name in enumerate(names)}

    def save(self, name: str) -> float:
        """The FMU's save cost: the least CPU seconds of its first timed saves."""
        return cast(CoSimulationFlow, self._flows[name]).save_cost

    def step(self) -> float:
        """The running mean of a plain communication step's wall seconds."""
        return self._master._step_cost

    def do_step(self, name: str) -> float:
        """The running mean of the FMU's doStep in wall seconds."""
        return float(self._master._compiled.do_step_cost[self._index[name]])

    def replay(self, name: str, n_steps: int, seconds: float) -> float:
        """The replay's wall seconds, as timed."""
        return seconds


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


class CoupledCoSimulation(CoupledParts, Flow):  # type: ignore[override]  # is_terminated: read from the components
    """Components coupled by communication steps; see the module docstring.

    Attributes
    ----------
    costs : Costs
        The costs the save-or-replay decisions compare (`MeasuredCosts`: timed
        in the run). Where a run starts with fixed costs in its place, its
        saves and replays do not depend on the machine's speed.
    """

    # a run's saves and replays, per saving component (`_forget_saves`)
    _saved_at: list[OrderedDict[tuple, None]]  # the last points it was saved at
    _rent: list[float]  # its replays' wall seconds since its last save
    _h_min: float  # the shortest step taken: a located bracket
    _steps_replayed: list[int]  # since `plan_undo`
    # where known: the master's steps (first first) from the last point it
    # saved to where the master is, their starts' (t, x bytes), that end, and
    # the saved point's (t, x)
    _paths: list[tuple | None]

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
        saving = [k for k, c in enumerate(self.components) if hasattr(c.flow, "keep")]
        self._saving = [  # CS FMUs
            cast(CoSimulationFlow, self.components[k].flow) for k in saving
        ]
        self._saving_slices = [self._slices[k] for k in saving]
        self._saving_names = [self.components[k].name for k in saving]  # `costs`
        self._forget_saves()
        # y bytes -> (t + h, snap, the recorded variables) at the last steps' ends
        self._recorded_at: OrderedDict[bytes, tuple] = OrderedDict()
        # (t + h, y bytes) -> (t, x, h, scheme): how the last steps got there
        self._came_from: OrderedDict[tuple, tuple] = OrderedDict()
        self._step_cost = 0.0  # wall seconds of a plain step, a running mean
        self._replays = not any(  # an FMU's own events are logged once, as run
            c.flow is not None and c.flow.reports_events for c in self.components
        )
        self.reports_events = any(
            c.flow is not None and c.flow.reports_events for c in self.components
        )
        calls = [
            flow.compiled_calls() if isinstance(flow, CoSimulationFlow) else None
            for flow in (c.flow for c in self.components)
        ]
        self._called = {  # component -> (FMU, part): those the compiled step calls
            k: (cast(CoSimulationFlow, c.flow), where)
            for k, (c, where, call) in enumerate(
                zip(self.components, self._slices, calls, strict=True)
            )
            if call is not None
        }
        self._compiled = _compiled_step(self, calls)
        self.costs: Costs = MeasuredCosts(self)
        self._compiled_at: list[tuple] = []  # each FMU's point after the last one
        self._saved = False  # the step being taken saved the components' states
        self._here = False  # the step starts where the last one ended

    def stepper(self, scheme: Scheme) -> Stepper:
        """The master's steps for the compiled loops: its plain steps taken
        without Python (`_cosim.MasterStepper`) where every component is
        called directly, the recorded variables read in C after each step
        where they are scalar reals of those components (`_record_calls`),
        else `advance`."""
        if not self._compiled.direct:
            return super().stepper(scheme)
        n = len(self.state_names)
        recorded = self._record_calls()
        return MasterStepper(self, self._compiled, scheme, n, TIME_RTOL, recorded)

    def _record_calls(self) -> list[tuple[int, int]]:
        """Each recorded variable as (component, value reference), where every
        one is a scalar real of a component called directly; else none."""
        calls = []
        for name in self.recorded_names:
            component, variable = split_name(name, f"output {name!r}")
            k = [c.name for c in self.components].index(component)
            found = self._called.get(k)
            v = None if found is None else found[0].archive.variables.get(variable)
            if v is None or v.type not in C_REALS or v.shape:
                return []
            calls.append((k, v.vr))
        return calls

    @property
    def steps_in_blocks(self) -> bool:
        """True where the compiled loops may take many steps per call: every
        component is called directly (`_cosim`), and no sample asks `observe`
        (nothing recorded, or read in C in a run that undoes no step)."""
        return self._compiled.direct and (
            not self.recorded_names
            or (self._undoes_none and bool(self._record_calls()))
        )

    @property
    def forward_only(self) -> bool:
        """True where a component cannot save its state (a return replays it)."""
        return any(getattr(c.flow, "forward_only", False) for c in self.components)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return the state after one communication step of h (Jacobi or
        Gauss-Seidel, inputs held or extrapolated)."""
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
        self._here = here or replayed > 0
        y = self._advance(t, x, h, scheme, may_undo)
        self._here = False
        if self.recorded_names:
            recorded = super()._recorded(t + h, y)
            self._recorded_at[y.tobytes()] = (t + h, TIME_RTOL * h, recorded)
            while len(self._recorded_at) > MAX_HISTORY:
                self._recorded_at.popitem(last=False)
        plain = not replayed and not self._saved
        spent = time.perf_counter() - start if plain else -1.0
        step_done(self, t, self._last_step[1], h, scheme, spent)  # x as kept
        if any(self._paths):
            self._follow((t, xb), (t + h, self._end[2]))
        return y

    def _follow(self, start: tuple, end: tuple) -> None:
        """Extend each component's path (`_paths`) by the master's step from
        start to end, both (t, x bytes); forget one it does not continue or
        that grew past `_replay_limit`."""
        step = self._came_from.get(end)
        for c, path in enumerate(self._paths):
            if path is None:
                continue
            steps, starts, at, saved = path
            if at != start or step is None or len(steps) >= self._replay_limit(c):
                self._paths[c] = None
            else:
                self._paths[c] = (steps + [step], starts + [start], end, saved)

    def _return_to(self, t: float, x: np.ndarray, h: float) -> int:
        """Put the components back at (t, x) where they left it unsaved, before
        a step of h: each alone (`_replay_each`) where every component is
        called directly, else all together by replaying the master's steps
        from a point they all saved. Return the number of steps replayed (0:
        none needed, or none possible: `goto` then enters (t, x) by a reset).
        The caller checked that (t, x) is not where the last step ended."""
        if self._compiled.direct:
            return self._replay_each(t, x, h)
        chain = self._chain(t, x)
        if not chain:
            return 0
        for t_k, x_k, h_k, scheme, _ in reversed(chain):
            y = self._advance(t_k, x_k, h_k, scheme, False)
        for c in range(len(self._saving)):
            self._steps_replayed[c] += len(chain)
        if not np.array_equal(y, x):  # then `goto` enters (t, x) by a reset
            return 0
        return len(chain)

    def _replay_each(self, t: float, x: np.ndarray, h: float) -> int:
        """Return each component that saved no state at (t, x) there by
        replaying its own steps from the last point it saved (`_path_to`), each
        with the inputs it had in it (`_cosim.CommunicationStep.replay`): the
        same inputs give the same states, bit for bit, which the replay
        checks after every step (one that differs: the component enters (t,
        x) by a reset, with a warning). The others are restored by `goto`.
        Save a replayed component there where that pays
        (`_save_after_replay`). Return the steps replayed."""
        step = cast(CommunicationStep, self._compiled)
        replayed, xb = 0, x.tobytes()
        for c, (flow, where) in enumerate(
            zip(self._saving, self._saving_slices, strict=True)
        ):
            if flow.can_return(t, x[where]):
                continue
            chain, starts = self._path_to(c, t, x, xb)
            if not chain:  # none within MAX_REPLAY: `goto` enters by a reset
                continue
            flow.goto(chain[0][0], chain[0][1][where])
            start = time.perf_counter()  # the replay's own cost: what a save spares
            done = step.replay(c, chain, np.ascontiguousarray(x))
            seconds = time.perf_counter() - start
            self._compiled_at = []
            self._steps_replayed[c] += done + (done < len(chain))
            if done < len(chain):
                flow.replay_missed(chain[0][0], t, x[where])
                continue
            flow.stepped(t, x[where], chain[-1][2])
            replayed += done
            if self._extrapolates:  # kept as a replay of all would (`_remember`)
                for key in [*starts[1:], (t, xb)]:
                    if key in self._history:
                        self._history.move_to_end(key)
            self._paths[c] = (chain, starts, (t, xb), chain[0][:2])
            spent = self.costs.replay(self._saving_names[c], done, seconds)
            if self._save_after_replay(c, spent, h):
                self._keep(t, x, [c])
        return replayed

    def _path_to(
        self, c: int, t: float, x: np.ndarray, xb: bytes
    ) -> tuple[list[tuple], list[tuple]]:
        """The steps (first first) and their starts' (t, x bytes) that lead
        component c to (t, x) (xb: x's bytes) from the last point it saved:
        on its path (`_paths`) where that passed (t, x), else as `_steps_back`
        finds them; none where no such point is within `_replay_limit` steps."""
        path = self._paths[c]
        if path is not None and (t, xb) in path[1] and self._kept(c, path[3]):
            j = path[1].index((t, xb))
            return path[0][:j], path[1][:j]
        return self._steps_back(c, t, x, saved=False)

    def _steps_back(
        self, c: int, t: float, x: np.ndarray, saved: bool
    ) -> tuple[list[tuple], list[tuple]]:
        """The steps (first first) and their starts' (t, x bytes) that lead
        component c to (t, x) from the nearest point it can return to
        (`_chain`, within `_replay_limit` steps); none where there is none."""
        chain = self._chain(t, x, saved, self._replay_limit(c), only=c)[::-1]
        return chain, [(step[0], step[1].tobytes()) for step in chain]

    def _kept(self, c: int, point: tuple) -> bool:
        """True if component c still keeps its state saved at point (t, x)."""
        t, x = point
        return self._saving[c].can_return(t, x[self._saving_slices[c]], True)

    def _save_after_replay(self, c: int, spent: float, h: float) -> bool:
        """Whether to save component c, just returned by a replay that cost
        `spent` (`costs`), before a step of h. Each later return of the search
        replays these steps again unless c is saved here, so save once the
        replays since its last save (`_rent`) and those still expected cost a
        save (rent or buy; checkpointing for reversal, Griewank 1992): a search
        halving h down to the last bracket (`_h_min`) returns log2(h / h_min)
        more times; before a first search, once. Where it saves none, the rent
        stays below the save's cost less this replay's, so between two saves
        the replays cost less than a save and one replay."""
        self._rent[c] += spent
        expected = math.log2(h / self._h_min) if h > 2.0 * self._h_min else 1.0
        save_cost = self.costs.save(self._saving_names[c])
        return self._rent[c] + spent * expected >= save_cost

    def _chain(
        self,
        t: float,
        x: np.ndarray,
        saved: bool = False,
        limit: int = MAX_REPLAY,
        only: int | None = None,
    ) -> list[tuple]:
        """The steps (t_k, x_k, h_k, scheme, inputs), last first, that lead to
        (t, x) from the nearest point every component (`only`: that one) can
        return to (`saved`: without replaying); [] where (t, x) is one or
        none is within `limit`. Past (t, x), only the points where the master
        saved each of them (`_keep`) or entered it by a reset it repeats
        (`CoSimulationFlow.anchored`: the origin, an impact's reset), or
        where its last step left them, are tried."""
        chain: list[tuple] = []
        t_end, h_end, y_end = self._end
        which = range(len(self._saving)) if only is None else (only,)
        saved_at = [
            (self._saved_at[c], self._saving[c], self._saving_slices[c]) for c in which
        ]
        came_from = self._came_from
        for k in range(limit + 1):
            key = (t, x.tobytes())
            if (  # tried at (t, x), and where the master saved, each component
                k == 0  # entered by a reset it repeats, or the last step ended
                or _in_each(key, x, saved_at)
                or (
                    not saved
                    and key[1] == y_end
                    and abs(t - t_end) <= TIME_RTOL * h_end
                )
            ) and all(
                self._saving[c].can_return(t, x[self._saving_slices[c]], saved)
                for c in which
            ):
                return chain
            step = came_from.get(key)
            if step is None or k == limit:
                return []
            chain.append(step)
            t, x = step[0], step[1]
        return []

    def _advance(
        self, t: float, x: np.ndarray, h: float, scheme: Scheme, may_undo: bool
    ) -> np.ndarray:
        """The communication step of h from (t, x) (`_cosim.take_step`); the
        components' states saved first if it may be undone, unless replaying
        costs less (`_should_save`). The components are put at (t, x) by the
        propagation at t (`coupling.evaluate`), or where every one is called
        directly, by `goto` unless the last step left them there."""
        if self._compiled.direct:
            where = [flow._at for flow, _ in self._called.values()]
            if not (self._here and where == self._compiled_at):
                for flow, part in self._called.values():
                    flow.goto(t, x[part])
            self._compiled_at = []
        y = take_step(self, t, x, x.tobytes(), h, scheme, may_undo)
        self._arrived(t, x, h, y)
        return y

    def _step_failed(
        self, failed: int, t: float, x: np.ndarray, h: float, y: np.ndarray
    ) -> NoReturn:
        """Raise for a step from (t, x) of h that did not complete:
        FlowTerminated at t where component `failed` ended the simulation in it
        (the others cannot follow it there), else the FMUError of its doStep;
        FmibridgeError for non-finite states y (failed < 0)."""
        step = self._compiled
        if failed < 0:
            raise self._non_finite(t, h, y)
        self._stepped(t, h, y, self._order.index(failed))
        flow = self._called[failed][0]
        end = flow.instance.failed_step(
            step.failed_status, step.terminated, step.last_time
        )
        try:
            flow._terminate(end.t)
        except FlowTerminated:
            raise FlowTerminated(t, x) from None

    def _stepped(self, t: float, h: float, y: np.ndarray, n: int) -> None:
        """Tell the FMUs called directly among the first n components in the
        order that a step from t of h cut short after them took them to y."""
        self._compiled_at = []
        for c in self._order[:n]:
            if c in self._called:
                self._called[c][0].stepped(t + h, y[self._slices[c]], h)

    def _non_finite(self, t: float, h: float, y: np.ndarray) -> FmibridgeError:
        """The error of a communication step from t of h that ended at the
        non-finite states y."""
        return FmibridgeError(
            f"coupled system: non-finite states after the communication step "
            f"from t = {t!r} with h = {h!r}: {y.tolist()} for {self.state_names}."
        )

    def _arrived(self, t: float, x: np.ndarray, h: float, y: np.ndarray) -> None:
        """Tell the master and the FMUs called directly where the step from
        (t, x) of h left them (`_cosim.arrived`)."""
        arrived(self, t, x.copy(), h, y)

    def close(self) -> None:
        """Free every component (the compiled step then refuses to call them)."""
        self._compiled_at = []
        super().close()

    def _keep(self, t: float, x: np.ndarray, which: list[int] | None = None) -> None:
        """Save the state of each component in `which` (default: all) at (t, x),
        where it is (`CoSimulationFlow.keep`)."""
        which = list(range(len(self._saving))) if which is None else which
        if not which:
            return
        self._saved, key = True, (t, x.tobytes())
        for c in which:
            flow = self._saving[c]
            flow.keep()
            self._rent[c] = 0.0
            alone = self._compiled.direct and not self._cheap(c)
            self._paths[c] = ([], [], key, (t, x.copy())) if alone else None
            saved_at = self._saved_at[c]
            saved_at[key] = None
            saved_at.move_to_end(key)
            if len(saved_at) > MAX_SNAPSHOTS:
                saved_at.popitem(last=False)

    def _should_save(self, t: float, x: np.ndarray) -> list[int]:
        """The components to save before a step that may be undone. A coupling
        with components called back replays them together, by whole steps:
        all, unless they can come back by replaying fewer steps than their
        saves cost. Where every component is called directly, each replays
        alone (`_replay_each`): each whose save costs at most
        CHEAP_SAVE steps (or was never timed), and each that could not come
        back by replaying (no point it saved within MAX_REPLAY steps); the
        others save where their returns show it pays (`_save_after_replay`)."""
        everyone = list(range(len(self._saving)))
        if not self._replays:
            return everyone
        if self._compiled.direct:
            return [
                c for c in everyone if self._cheap(c) or not self._can_replay(c, t, x)
            ]
        save_cost = sum(self.costs.save(name) for name in self._saving_names)
        step_cost = self.costs.step()
        limit = MAX_REPLAY  # a chain this long costs a save: no need to walk on
        if step_cost > 0.0:
            limit = min(limit, math.ceil(save_cost / step_cost))
        if limit <= 1:
            return everyone
        if all(
            flow.can_return(t, x[where], True)
            for flow, where in zip(self._saving, self._saving_slices, strict=True)
        ):  # each saved here, or entered it by a reset it repeats
            return []
        chain = len(self._chain(t, x, saved=True, limit=limit))
        return everyone if chain == 0 or chain * step_cost >= save_cost else []

    def _cheap(self, c: int) -> bool:
        """True if component c's save costs at most CHEAP_SAVE plain steps
        (`costs`; so too a save not yet timed)."""
        name = self._saving_names[c]
        return self.costs.save(name) <= CHEAP_SAVE * self.costs.step()

    def _can_replay(self, c: int, t: float, x: np.ndarray) -> bool:
        """True if component c can come back to (t, x): it saved its state
        there or entered it by a reset it repeats, or it replays its steps from
        such a point at most `_replay_limit` steps before: its path (`_paths`)
        ends there, else a walk back (`_steps_back`) finds one, which becomes
        its path (the steps after this one extend it)."""
        if self._saving[c].can_return(t, x[self._saving_slices[c]], True):
            return True
        path, xb = self._paths[c], x.tobytes()
        if path is not None and path[2] == (t, xb) and self._kept(c, path[3]):
            return True
        chain, starts = self._steps_back(c, t, x, saved=True)
        if not chain:
            return False
        self._paths[c] = (chain, starts, (t, xb), chain[0][:2])
        return True

    def _replay_limit(self, c: int) -> int:
        """The most steps component c replays to return to a point: as many
        as its save costs at its own doStep's cost (`CommunicationStep.
        do_step_cost`), at least MAX_REPLAY and fewer than the steps the master
        remembers (MAX_HISTORY)."""
        name = self._saving_names[c]
        cost = self.costs.do_step(name)
        if cost <= 0.0:
            return MAX_REPLAY
        steps = self.costs.save(name) / cost
        return int(min(MAX_HISTORY - 1, max(MAX_REPLAY, steps)))

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the components' events at (t, x) (`CoupledParts`); the
        variables recorded after the step that ended there are stale."""
        self._recorded_at.clear()
        return super().discrete_event(t, x)

    def plan_undo(self, may_undo: UndoPlan) -> None:
        """Save the components' states before a step only where may_undo(t, x,
        h) (`_should_save`); the components never save on their own."""
        self._may_undo = may_undo
        self._undoes_none = not getattr(may_undo, "guards", True)
        self._forget_saves()
        for flow in self._saving:  # each frees the states an earlier run saved
            flow.plan_undo(_never)

    def _forget_saves(self) -> None:
        """Start a run's saves and replays afresh (`plan_undo`): none saved, none
        replayed, no path kept, no bracket located."""
        n = len(self._saving)
        self._saved_at = [OrderedDict() for _ in range(n)]
        self._rent, self._h_min = [0.0] * n, math.inf
        self._steps_replayed, self._paths = [0] * n, [None] * n

    @property
    def n_state_saves(self) -> int:
        """The FMU states the components saved since `plan_undo`."""
        return sum(flow.n_state_saves for flow in self._saving)

    @property
    def n_steps_replayed(self) -> dict[str, int]:
        """The steps each Co-Simulation FMU replayed since `plan_undo` to return
        to a point it left unsaved, by component name."""
        names = [c.name for c in self.components if hasattr(c.flow, "keep")]
        return dict(zip(names, self._steps_replayed, strict=True))

    def _recorded(self, t: float, x: np.ndarray) -> dict[str, float]:
        """The recorded variables at (t, x): read after the step that ended
        there, else with the components put there."""
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
        """Component c's part of the communication step from (t, x) of h, called
        back by `_cosim.CommunicationStep` for a component it does not call
        directly: its inputs on the line level + slope (tau - t), at each stage
        of `scheme` for a component the master integrates, at the middle of the
        step for one that steps itself (held over its step, the same integral
        to second order; Kübler and Schiehlen 2000). Where `read`
        (Gauss-Seidel), its connected outputs at t + h are read into level.
        Its states at t + h are written to its part of y."""
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
        """The connected outputs with the connections propagated at (t, x), the
        algebraic loops solved (`coupling.evaluate`), for `_cosim`."""
        self.coupling.evaluate(t, self.parts(x))
        return self.coupling.outputs

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the recorded variables at (t, x) (`record`), and the
        components' own events in the step that ended there, each as (t,
        `component.fmu_event`, x before, x after): the component's part as it
        reports it, the others' interpolated in the step."""
        recorded = self._recorded(t, x)
        if not self.reports_events or not self._last_step:
            return recorded, ()
        t_start, x_start, t_end, y, _ = self._last_step
        if abs(t - t_end) > TIME_RTOL * (t_end - t_start) or not np.array_equal(x, y):
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
                named = None if name is None else f"{component.name}.{name}"  # silent
                events.append((t_event, named, x_before, x_after))
        return recorded, tuple(sorted(events, key=lambda event: event[0]))

    def _remember(self, key: tuple, value: tuple[float, np.ndarray]) -> None:
        """Keep the outputs at the step's start for the extrapolation from its end."""
        self._history[key] = value
        self._history.move_to_end(key)
        while len(self._history) > MAX_HISTORY:
            self._history.popitem(last=False)

    def describe(self) -> dict[str, str]:
        """Return the provenance entries, with the communication scheme and
        which path took the steps (`_steps`)."""
        return {
            **super().describe(),
            "communication": f"{self.communication.scheme}, inputs "
            f"{self.communication.inputs}",
            "steps": self._steps(),
        }

    def _steps(self) -> str:
        """Which path took the communication steps, and why not the compiled
        one (`_cosim.MasterStepper`)."""
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


def _compiled_step(
    master: CoupledCoSimulation, calls: list[tuple | None]
) -> CommunicationStep:
    """The master's communication step (`_cosim`): each component with C calls
    (`CoSimulationFlow.compiled_calls`) called directly, the others called back
    (`_component_step`); the connections propagated by the evaluation plan in
    C where every component is called directly and the coupling has no
    algebraic loop, else by `coupling.evaluate`, called back."""
    coupling = master.coupling

    def vrs(c: int, names) -> list[int]:
        if calls[c] is None:  # placeholders: the component reads and writes them
            return [0] * len(names)
        variables = cast(CoSimulationFlow, master.components[c].flow).archive.variables
        return [variables[name].vr for name in names]

    fmus, inputs, sources = [], [], []
    for c, call in enumerate(calls):
        fmus.append(None if call is None else call[0])
        ports = [(di, k) for (d, di), k in coupling.source_of.items() if d == c]
        inputs.append((vrs(c, [di for di, _ in ports]), [k for _, k in ports]))
        outs = [(k, so) for k, (s, so) in enumerate(coupling.sources) if s == c]
        sources.append((vrs(c, [so for _, so in outs]), [k for k, _ in outs]))
    direct = all(call is not None for call in calls) and not coupling.loops()
    plan = [
        (0 if kind == "read" else 1, c, vrs(c, names), list(slots))
        for kind, c, names, slots in coupling.schedule
    ] if direct else None  # fmt: skip
    return CommunicationStep(
        fmus,
        [
            vrs(c, component.state_names) if call is None else call[1]
            for c, (component, call) in enumerate(
                zip(master.components, calls, strict=True)
            )
        ],
        inputs,
        sources,
        plan,
        master._order,
        None if direct else master._propagate,
        master._component_step,
    )


def _in_each(
    key: tuple,
    x: np.ndarray,
    saved_at: list[tuple[OrderedDict[tuple, None], CoSimulationFlow, slice]],
) -> bool:
    """True if each component of saved_at, (the points the master saved it
    at, the FMU, its part of x), was saved at key, (t, x bytes), or entered
    its part of it by a reset it repeats (`CoSimulationFlow.anchored`)."""
    for points, flow, where in saved_at:
        if key not in points and not flow.anchored((key[0], x[where].tobytes())):
            return False
    return True


def _never(t: float, x: np.ndarray, h: float) -> bool:
    """The components' plan: the master saves their states (`plan_undo`)."""
    return False
