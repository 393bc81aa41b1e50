"""The Method base class: the run loop, its bounds and the Result."""

from __future__ import annotations

import abc
import dataclasses
import functools
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import Scheme, scheme_named
from ..core.output_grid import GridRecorder, OutputGrid
from ..core.result import Event, Recorder, Result, Status
from ..core.system import Edge, HybridSystem, Mode
from ..flows.base import Bracket, Flow, FlowTerminated

# times closer than TIME_RTOL * h count as equal (h-relative round-off)
TIME_RTOL = 1e-9
PROGRESS_FORMAT = "{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]"


@dataclass(frozen=True)
class State:
    """Where a run is: time, continuous state and mode name."""

    t: float
    x: np.ndarray
    mode: str


@dataclass(frozen=True)
class Step:
    """What one attempt produced: the next state, or a reason to stop."""

    state: State
    stop: Status | None = None


def reached(t: float, t_end: float, h: float) -> bool:
    """Return True if t is t_end up to round-off relative to the step h."""
    return t >= t_end - TIME_RTOL * h


def grid_step(t: float, h: float, t0: float | None) -> float:
    """Return the step of h from t: to the grid time t0 + (k + 1) h exactly
    where t is the grid time t0 + k h (up to round-off), else h itself (and
    always where t0 is None).

    With `step_end`, steps of h land on t0 + k h as computed once, not on a sum
    of h's that drifts from it by round-off: Co-Simulation FMUs compare the
    communication points t and t + h they are given with their own time, as
    fmpy computes them. (The compiled loops sum h; flows they serve pass None.)
    """
    if t0 is None:
        return h
    k = round((t - t0) / h)
    if abs(t0 + k * h - t) > TIME_RTOL * h:
        return h
    return t0 + (k + 1) * h - t


def step_end(t: float, hs: float, t_end: float, h: float, t0: float | None) -> float:
    """Return where a step of hs from t ends: t_end, or the grid time t0 + k h
    (unless t0 is None), where t + hs is within round-off of it (TIME_RTOL h),
    else t + hs."""
    t1 = t + hs
    if reached(t1, t_end, h):
        return t_end
    if t0 is None:
        return t1
    grid = t0 + round((t1 - t0) / h) * h
    return grid if abs(grid - t1) <= TIME_RTOL * h else t1


def positive(name: str, value: float) -> float:
    """Return `value` if it is a finite number > 0, else raise naming `name`."""
    if not (isinstance(value, int | float) and np.isfinite(value) and value > 0):
        raise FmibridgeError(f"`{name}` must be a finite number > 0, got {value!r}.")
    return float(value)


def at_least_one(name: str, value: int) -> int:
    """Return `value` if it is an integer >= 1, else raise naming `name`."""
    if not (isinstance(value, int) and value >= 1):
        raise FmibridgeError(f"`{name}` must be an integer >= 1, got {value!r}.")
    return value


@dataclass(frozen=True)
class Method(abc.ABC):
    """A master algorithm. Subclasses implement `_attempt`; the loop is here.

    Subclass contract:

    1. Declare parameters as dataclass fields with defaults and validate them
       in `__post_init__` (call `super().__post_init__()`).
    2. `_attempt(system, state, t_end, log)` takes one accepted step (after
       any rejected trials, each counted in `log.n_rejected`), records the
       samples it accepts with `log.sample`, fires at most the transitions of
       one instant, and returns the next State, or a Step with a stop reason.
    3. Never loop without a bound; a bound hit is a Status, not a hang.
    """

    name: ClassVar[str] = "method"
    requires: ClassVar[type[Flow]] = Flow

    h: float = 1e-3
    integrator: str | Scheme = "rk4"
    max_steps: int = 10_000_000
    max_events: int = 10_000

    def __post_init__(self) -> None:
        positive("h", self.h)
        object.__setattr__(self, "integrator", scheme_named(self.integrator))
        at_least_one("max_steps", self.max_steps)
        at_least_one("max_events", self.max_events)

    @property
    def scheme(self) -> Scheme:
        """The integrator as a Scheme (a Butcher tableau)."""
        return self.integrator  # type: ignore[return-value]

    def run(
        self,
        system: HybridSystem,
        t_end: float | None = None,
        *,
        progress: bool = False,
        t_eval: Sequence[float] | None = None,
    ) -> Result:
        """Simulate `system` from its t0 to `t_end` and return the Result.

        Parameters
        ----------
        system : HybridSystem
        t_end : float, optional
            Final time, s; must be > system.t0. Default: the system's
            `experiment.stop` (an FMU's DefaultExperiment).
        progress : bool
            Show a progress bar (only for runs longer than a second).
        t_eval : sequence of float, optional
            Keep the samples at these times only (increasing, in [t0, t_end]),
            with the two rows of each event and the last sample; a step ends on
            each of them. Default: every accepted step.
        """
        t_end = self._check(system, t_end)
        wall = time.perf_counter()
        names = (
            system.state_names,
            self.output_names(system) + _recorded_names(system),
            _observer(system),
        )
        grid = None if t_eval is None else OutputGrid(t_eval, system.t0, t_end)
        log = (
            Recorder(*names) if grid is None else GridRecorder(grid, self._tol, *names)
        )
        state = State(system.t0, system.x0.copy(), system.initial_mode)
        log.sample(state.t, state.x, state.mode)
        with _Progress(system.t0, t_end, enabled=progress) as bar:
            status = self._loop(system, state, t_end, log, bar, grid)
        result = log.finish(status, self._provenance(system, t_end, wall))
        return dataclasses.replace(result, units=_units(system))

    @property
    def _tol(self) -> float:
        """Times closer than this count as equal."""
        return TIME_RTOL * self.h

    def _loop(self, system, state: State, t_end: float, log, bar, grid) -> Status:
        """Attempt steps (and the flows' own events) until a stop; return why.

        Each step ends at t_end, at the flow's next time event, or at the next
        time of the output `grid` (if any), whichever comes first.
        """
        for _ in range(self.max_steps):
            if reached(state.t, t_end, self.h):
                return Status.REACHED_END
            if log.n_steps >= self.max_steps:  # block steps count one by one
                return Status.MAX_STEPS
            # silent events count too: a reset that changes nothing can repeat
            if len(log.events) + log.n_silent_events >= self.max_events:
                return Status.MAX_EVENTS
            flow = system.mode(state.mode).flow
            if flow.is_terminated:
                return Status.TERMINATED
            t_event = flow.next_event_time()
            if reached(state.t, t_event, self.h):  # the flow's time event: now
                state = self.flow_event(state, flow, "time_event", log)
                continue
            if grid is not None:
                t_event = min(t_event, grid.next_after(state.t, self._tol))
            try:
                step = self._attempt(system, state, min(t_end, t_event), log)
            except FlowTerminated as end:  # inside a step: its end is the run's
                log.sample(end.t, end.x, state.mode)
                return Status.TERMINATED
            state = step.state
            bar.update(state.t)
            if step.stop is not None:
                return step.stop
            flow = system.mode(state.mode).flow
            if flow.step_completed(state.t, state.x):
                state = self.flow_event(state, flow, "step_event", log)
        return Status.MAX_STEPS

    def flow_event(self, state: State, flow: Flow, name: str, log: Recorder) -> State:
        """Run the flow's own event at `state` (sampled already) and log it."""
        x_after = np.asarray(flow.discrete_event(state.t, state.x), dtype=float)
        log.sample(state.t, x_after, state.mode)
        log.event(Event(state.t, name, state.mode, state.mode, state.x, x_after))
        return State(state.t, x_after, state.mode)

    def output_names(self, system: HybridSystem) -> tuple[str, ...]:
        """Extra columns this method records (none by default)."""
        return ()

    @abc.abstractmethod
    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        """Take one step: accept it, or reject and halve, or fire a reset."""

    # -- shared helpers -------------------------------------------------------

    def _check(self, system: HybridSystem, t_end: float | None) -> float:
        if not isinstance(system, HybridSystem):
            raise FmibridgeError(
                f"`system` must be a HybridSystem, got {type(system)}."
            )
        if t_end is None:
            t_end = system.experiment.stop
            if t_end is None:
                raise FmibridgeError(
                    f"`t_end` is needed: system `{system.name}` has no default stop "
                    f"time (experiment.stop)."
                )
        if not (
            isinstance(t_end, int | float) and np.isfinite(t_end) and t_end > system.t0
        ):
            raise FmibridgeError(
                f"`t_end` must be a finite time after t0 = {system.t0}, got {t_end!r}."
            )
        for mode in system.modes.values():
            if not isinstance(mode.flow, self.requires):
                raise FmibridgeError(
                    f"Method `{self.name}` needs a {self.requires.__name__} flow (it "
                    f"integrates dx/dt itself); mode {mode.name!r} has a "
                    f"{type(mode.flow).__name__}."
                )
        mode = system.mode(system.initial_mode)
        x0 = dict(zip(system.state_names, system.x0.tolist(), strict=True))
        for edge in mode.edges:
            g = edge.guard(system.t0, system.x0)
            if not np.isfinite(g) or edge.guard.is_beyond(g):
                raise FmibridgeError(
                    f"Guard {edge.name!r} of mode {mode.name!r} is {g!r} at the "
                    f"initial state {x0}: the initial state must lie inside the "
                    f"domain (g >= 0 for a falling guard). Fix `x0` or the guard."
                )
        return float(t_end)

    def advance(self, mode: Mode, t: float, x: np.ndarray, h: float) -> np.ndarray:
        """Advance the mode's flow by h with this method's scheme."""
        return mode.flow.advance(t, x, h, self.scheme)

    def steps_inside(
        self, mode: Mode, state: State, t_end: float, log: Recorder
    ) -> Step | None:
        """Take the steps of h that cross no guard in one block, where the flow can.

        Returns None where the flow offers no such path (`Flow.steps_inside`) or
        took no step; the method then takes its step itself.
        """
        return self.steps_to_crossing(mode, state, t_end, log)[0]

    def steps_to_crossing(
        self,
        mode: Mode,
        state: State,
        t_end: float,
        log: Recorder,
        *,
        locate_tol: float | None = None,
        max_iter: int = 0,
    ) -> tuple[Step | None, Bracket | None]:
        """Take the steps of `steps_inside`, and locate the crossing that ends them.

        Returns the Step to the block's end (None as in `steps_inside`) and, with
        `locate_tol`, the `Bracket` in which the flow narrowed the crossing step
        after it to that width in at most `max_iter` trial steps (None where the
        flow does not, or the crossing is no clean sign change of the guards).
        """
        steps = mode.flow.steps_inside(
            [edge.guard for edge in mode.edges],
            state.t,
            state.x,
            self.h,
            t_end,
            self.scheme,
            self.max_steps - log.n_steps,
            TIME_RTOL * self.h,
            locate_tol,
            max_iter,
        )
        if steps is None:
            return None, None
        block = None
        if len(steps.t):
            log.n_steps += len(steps.t)
            log.samples(steps.t, steps.x, mode.name)
            block = Step(State(float(steps.t[-1]), steps.x[-1], mode.name))
        return block, steps.bracket

    def fire(
        self,
        state: State,
        edge: Edge,
        log: Recorder,
        simultaneous: tuple[str, ...] = (),
    ) -> State:
        """Apply `edge`'s reset at `state`, log the event and return the new state.

        A self-loop whose reset changes nothing (an FMU event that its own
        conditions did not act on) is no transition: it is counted in
        `n_silent_events`, not logged. The state before is sampled before the
        reset runs, so an FMU's outputs in that sample are those before its
        event.
        """
        log.sample(state.t, state.x, state.mode)
        x_after = np.asarray(edge.reset(state.t, state.x.copy()), dtype=float)
        if x_after.shape != state.x.shape or not np.all(np.isfinite(x_after)):
            raise FmibridgeError(
                f"Reset of edge {edge.name!r} returned {x_after!r} at t = {state.t!r}; "
                f"it must return {state.x.size} finite values."
            )
        if edge.target == state.mode and np.array_equal(x_after, state.x):
            log.n_silent_events += 1
            return state
        log.sample(state.t, x_after, edge.target)
        log.event(
            Event(
                state.t,
                edge.name,
                state.mode,
                edge.target,
                state.x,
                x_after,
                simultaneous,
            )
        )
        return State(state.t, x_after, edge.target)

    def parameters(self) -> dict[str, object]:
        """Return this method's parameters, for provenance and the CLI."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["integrator"] = self.scheme.name
        return values

    def _provenance(
        self, system: HybridSystem, t_end: float, wall: float
    ) -> Mapping[str, str]:
        flows = "; ".join(
            ", ".join(f"{k}={v}" for k, v in flow.describe().items())
            for flow in system.flows()
        )
        return {
            "method": self.name,
            "parameters": repr(self.parameters()),
            "system": system.name,
            "system_parameters": repr(dict(system.parameters)),
            "flows": flows,
            "t0": repr(system.t0),
            "t_end": repr(t_end),
            "wall_time_s": f"{time.perf_counter() - wall:.6f}",
            "versions": _versions(),
        }


def _recorded_names(system: HybridSystem) -> tuple[str, ...]:
    """The extra columns the system's flows record (an FMU's outputs), once each."""
    names = dict.fromkeys(n for flow in system.flows() for n in flow.recorded_names)
    return tuple(n for n in names if n not in system.state_names)


def _units(system: HybridSystem) -> dict[str, str]:
    """The unit of each column the flows know one of (an FMU's variables)."""
    return {k: v for flow in system.flows() for k, v in flow.units.items()}


def _observer(system: HybridSystem):
    """Return the Recorder's observer: each sample asks its mode's flow, or None
    where no flow records columns or reports events of its own."""
    if not any(f.recorded_names or f.reports_events for f in system.flows()):
        return None
    return lambda t, x, mode: system.mode(mode).flow.observe(t, x)


@functools.cache
def _versions() -> str:
    """The versions of fmibridge, its dependencies and Python, for provenance."""
    import fmpy
    import pandas
    import scipy

    from .. import __version__

    return (
        f"fmibridge {__version__}, numpy {np.__version__}, scipy "
        f"{scipy.__version__}, pandas {pandas.__version__}, fmpy "
        f"{fmpy.__version__}, python {platform.python_version()}"
    )


class _Progress:
    """A tqdm bar over simulated time, on a terminal only.

    The bar starts after the first step, so the time numba spends compiling
    the first step's code is not taken for simulation time (an ETA of minutes
    for a run of seconds), and shows only for runs longer than a second.
    """

    def __init__(self, t0: float, t_end: float, *, enabled: bool) -> None:
        self._bar = None
        self._t0, self._t_end = t0, t_end
        self._enabled = enabled and sys.stderr.isatty()

    def update(self, t: float) -> None:
        if not self._enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self._t_end - self._t0,
                initial=t - self._t0,
                unit="s(sim)",
                delay=1.0,
                leave=False,
                bar_format=PROGRESS_FORMAT,
            )
            return
        self._bar.update(t - self._t0 - self._bar.n)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.close()
