"""The Method base class: the run loop, its bounds and the Result."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import platform
import sys
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from numpy.typing import ArrayLike

from ..core._local_errors import SCALE_FLOOR, LocalErrors
from ..core.errors import FmibridgeError, FmibridgeWarning
from ..core.integrators import Scheme
from ..core.numbers import at_least_one, positive
from ..core.output_grid import GridRecorder, OutputGrid
from ..core.recorder import Recorder
from ..core.records import TIME_RTOL, State, Step
from ..core.result import Result
from ..core.span import check_count, check_span
from ..core.system import HybridSystem, Mode
from ..flows.base import Flow, integrator_named
from ._firing import fire_edge
from ._mode import COARSE_RTOL, compiled_mode
from ._walk import Walk, attempt, drive
from .forecast import CrossingForecast
from .watchdog import Watchdog

if TYPE_CHECKING:
    from ..core.guards import Edge
    from ..flows.stiff import Stiff

# A fixed step's local error estimate above this fraction of its state's scale
# warns: on Example 1 (Burden et al., Table I) impacts are missed from about 3e-4
# (docs/benchmarks.md), so a margin of three.
ERROR_WARNING = 1e-4
# rtol of an adaptive run where neither it nor the model gives one: FMPy's for CVode.
DEFAULT_RTOL = 1e-5
# A step halved more often than float64 has binary exponents is zero: no count of
# halvings past this changes a run (the compiled loops count to twice it).
MAX_HALVINGS = 2100
PROGRESS_FORMAT = "{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]"


@dataclass(frozen=True)
class Method:
    """A master algorithm. Subclasses name their compiled `walk` or implement
    `_attempt`; the loop is `_walk.drive`.

    A subclass declares its parameters as dataclass fields, checked in
    `__post_init__`. `_attempt(system, state, t_end, log)` takes one accepted
    step (counting rejected trials in `log.n_rejected`), records its samples,
    fires at most the transitions of one instant and returns a Step; every loop
    is bounded, a bound hit is a Status. A `watchdog.Watchdog` watches each run.
    """

    name: ClassVar[str] = "method"
    completes_zeno: ClassVar[bool] = False  # continues Zeno executions (Completion)
    passes_zeno: ClassVar[bool] = False  # by construction (Relaxation's strips)
    # an impact resets only on an approach (Or and Ames eq. 4: dh qdot < 0)
    resets_on_approach: ClassVar[bool] = True
    tolerates: ClassVar[bool] = False  # its steps may be chosen under rtol, atol
    # the integrator when none is given: of fixed steps, and under a tolerance
    default_integrator: ClassVar[str] = "rk4"
    adaptive_integrator: ClassVar[str] = "dopri5"
    # the compiled walk that takes its steps (and ends them on output times)
    walk: ClassVar[type[Walk] | None] = None

    h: float = 1e-3
    integrator: str | Scheme | Stiff | None = None
    max_steps: int = 10_000_000
    max_events: int = 10_000
    error_warning: float = field(default=ERROR_WARNING, kw_only=True)

    def __post_init__(self) -> None:
        positive("h", self.h)
        integrator = self.integrator
        if integrator is None:
            adaptive = getattr(self, "rtol", None) is not None and self.tolerates
            integrator = (
                self.adaptive_integrator if adaptive else self.default_integrator
            )
        object.__setattr__(self, "integrator", integrator_named(integrator))
        at_least_one("max_steps", self.max_steps)
        at_least_one("max_events", self.max_events)
        positive("error_warning", self.error_warning)

    @property
    def scheme(self) -> Scheme:
        """The integrator as a Scheme (a Butcher tableau)."""
        return self.integrator  # type: ignore[return-value]

    @property
    def is_adaptive(self) -> bool:
        """True if the steps are chosen under a tolerance, h only the first."""
        return bool(getattr(self.integrator, "is_adaptive", False))

    def tolerance(self, system: HybridSystem) -> tuple[float, float] | None:
        """(rtol, atol) of an adaptive run (default: the model's rtol, DEFAULT_RTOL)."""
        if not self.is_adaptive:
            return None
        given = getattr(self, "rtol", None)  # > 0 where given
        rtol = given or system.experiment.tolerance or DEFAULT_RTOL
        atol = getattr(self, "atol", None)
        return float(rtol), float(rtol if atol is None else atol)

    def run(
        self,
        system: HybridSystem,
        t_end: float | None = None,
        *,
        progress: bool = False,
        t_eval: ArrayLike | None = None,
    ) -> Result:
        """Simulate `system` from its t0 to `t_end` and return the Result.

        Parameters
        ----------
        system : HybridSystem
        t_end : float, optional
            Final time, s (> t0); default: `system.experiment.stop`.
        progress : bool
            Show a progress bar (only for runs longer than a second).
        t_eval : sequence of float, optional
            Keep the samples at these times only (and each event's two rows and
            the last sample). Default: every accepted step.
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
            Recorder(*names)
            if grid is None
            else GridRecorder(grid, TIME_RTOL * self.h, *names)
        )
        log.each_transition = self.completes_zeno
        state = State(system.t0, system.x0.copy(), system.initial_mode)
        log.sample(state.t, state.x, state.mode)
        if not self.is_adaptive:  # each fixed step's local error is estimated
            log.local_errors = LocalErrors(
                system.x0, self.scheme.error_order, self.error_warning
            )
        watch = Watchdog(self, system, t_end)
        _plan_undo(system)
        kind = self.walk if type(self)._attempt is Method._attempt else None
        plan = (self.tolerance(system), _hooked(system), kind)  # drive's, in C
        with _progress(system.t0, t_end, enabled=progress) as update:
            status, detail = drive(
                self, system, state, t_end, log, update, watch, *plan
            )
        rested = watch.finish(log)
        provenance = {**self._provenance(system, t_end, wall), **rested}
        provenance["python_callbacks"] = self._callbacks(system)
        saves = [f.n_state_saves for f in system.flows() if hasattr(f, "n_state_saves")]
        if saves:
            provenance["fmu_state_saves"] = str(sum(saves))
        provenance.update(self._judge_errors(system, log))
        log.units = {k: v for flow in system.flows() for k, v in flow.units.items()}
        return log.finish(status, provenance, detail)

    def _judge_errors(self, system: HybridSystem, log: Recorder) -> dict[str, str]:
        """Return the run's error as provenance entries; warn above error_warning."""
        tolerance = self.tolerance(system)
        if tolerance is not None:
            rtol, atol = tolerance
            return {"tolerance": repr({"rtol": rtol, "atol": atol})}
        errors, entries = log.local_errors, dict[str, str]()
        if errors is None:
            return entries
        for key, report, warning in (
            ("step_error", errors.report, self._step_warning),
            ("strip_error", errors.strip_report, self._strip_warning),
        ):
            found = report(self.error_warning)
            if found is not None:
                name = system.state_names[found["state"]]
                entries[key] = repr({**found, "state": name})
                if found["relative"] > self.error_warning:
                    log.warn(warning(found, name))
        return entries

    def _step_warning(self, step: dict, name: str) -> str:
        return (
            f"{self.name}: a step's local error estimate reached "
            f"{step['relative']:.2g} of the scale of state {name!r} (the step of "
            f"{step['h']:.3g} s ending at t = {step['t']:.6g} s; "
            f"{self.scheme.name}'s embedded estimate), above "
            f"error_warning = {self.error_warning:g}: steps of h <= "
            f"{step['h_meeting']:.3g} s meet it, or give a tolerance (rtol). A "
            f"state's scale is the largest |x| it reached in the run, at least "
            f"{SCALE_FLOOR:g}."
        )

    def _strip_warning(self, strip: dict, name: str) -> str:
        return (
            f"{self.name}: a transition's wait on its strip (eps = {strip['eps']:g} "
            f"s) displaced state {name!r} by up to {strip['relative']:.2g} of its "
            f"scale (eps |dx/dt| near t = {strip['t']:.6g} s), above error_warning "
            f"= {self.error_warning:g}: eps <= {strip['eps_meeting']:.3g} meets it."
        )

    def compiled(self, system: HybridSystem, mode: str):
        """Mode `mode` of `system` as the compiled loops take it."""
        tolerance = self.tolerance(system)
        return compiled_mode(system.mode(mode), self.scheme, self.h, tolerance)

    def output_names(self, system: HybridSystem) -> tuple[str, ...]:
        """Extra columns this method records (none by default)."""
        return ()

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        """Take one step, or reject and halve, or fire a reset (default: `walk`)."""
        if self.walk is None:
            raise NotImplementedError(f"{self.name} has no walk nor _attempt.")
        mode = self.compiled(system, state.mode)
        return attempt(self.walk, self, mode, state, t_end, system.t0, log)

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
        t_end = check_span(system.t0, t_end)
        self._check_step(system.t0, t_end)
        mode = system.mode(system.initial_mode)
        for edge in mode.edges:
            g = edge.guard(system.t0, system.x0)
            if not math.isfinite(g) or edge.guard.is_beyond(g):
                x0 = dict(zip(system.state_names, system.x0.tolist(), strict=True))
                raise FmibridgeError(
                    f"Guard {edge.name!r} of mode {mode.name!r} is {g!r} at the "
                    f"initial state {x0}: the initial state must lie inside the "
                    f"domain (g >= 0 for a falling guard). Fix `x0` or the guard."
                )
        return t_end

    def _check_step(self, t0: float, t_end: float) -> None:
        """Refuse an h below time's resolution or beyond max_steps; warn if > run."""
        if t_end + self.h == t_end or t0 + self.h == t0:
            raise FmibridgeError(
                f"`h` = {self.h!r} s is below the resolution of time in this run "
                f"(t + h == t near t = {max(abs(t0), abs(t_end))!r}); raise h."
            )
        if self.is_adaptive:
            return
        if self.h > t_end - t0:
            warnings.warn(
                f"`h` = {self.h!r} s is longer than the run (t0 = {t0!r} to t_end = "
                f"{t_end!r}): its one step is cut to the run's end; choose h <= "
                f"{t_end - t0!r}.",
                FmibridgeWarning,
                stacklevel=4,
            )
        check_count(self.h, t0, t_end, self.max_steps)

    @property
    def location_tolerance(self) -> float:
        """How closely this method locates an event's time, s (nan: not stated)."""
        return math.nan

    def _check_tolerance(self) -> None:
        """Validate rtol and atol and that their integrator is adaptive."""
        for key in ("rtol", "atol"):
            if getattr(self, key) is not None:
                positive(key, getattr(self, key))
        if getattr(self, "rtol", None) is not None and not self.is_adaptive:
            raise FmibridgeError(
                f"{type(self).__name__}: `rtol` needs an adaptive integrator "
                f"(`integrator` {self.adaptive_integrator!r}, the default with "
                f"rtol); {self.scheme.name!r} takes fixed steps of h."
            )
        if getattr(self, "atol", None) is not None and not self.is_adaptive:
            raise FmibridgeError(
                f"{type(self).__name__}: `atol` is a tolerance of adaptive steps: "
                f"give `rtol` too (or `integrator` {self.adaptive_integrator!r})."
            )

    def placing(self, t_tol: float) -> Method:
        """This method placing transitions within t_tol of their crossings."""
        return self

    def time_resolution(self, gap: float, rate: float) -> float:
        """How far from the crossing a transition at `gap` and `rate` may be, s."""
        if not rate:
            return 0.0 if gap == 0.0 else math.inf
        return abs(gap) / abs(rate)

    def _coarse(self, edge: Edge, t: float, miss: float, log: Recorder) -> None:
        """Warn once per run that steps of h may not see a dip of edge's guard."""
        h = self.h * 0.5 * (COARSE_RTOL / miss) ** 0.25  # the cubic's error ~ h^4
        log.warn_once(
            ("coarse", edge.name),
            f"{self.name}: steps of h = {self.h:g} s are too coarse to see for sure "
            f"whether guard {edge.guard.name!r} dips beyond its surface within one "
            f"step near t = {t:.6g} s (the step's interpolant misses it by "
            f"{miss:.2g} of its size); steps of h <= {h:.2g} s resolve it.",
        )

    def fire_at(
        self,
        mode: Mode,
        state: State,
        index: int,
        log: Recorder,
        simultaneous: tuple[str, ...] = (),
    ) -> State:
        """Apply mode.edges[index]'s reset at `state`, log it, return the new state."""
        compiled = compiled_mode(mode, self.scheme, self.h)
        return fire_edge(self, compiled, log, state, index, simultaneous)

    def _callbacks(self, system: HybridSystem) -> str:
        """Name the Python functions the compiled loops call (or a flow its own)."""
        named = []
        for mode in system.modes.values():
            own = getattr(mode.flow, "callbacks", None)
            names = own() if own else self.compiled(system, mode.name).callbacks()
            if names:
                named.append(f"{mode.name}: {', '.join(names)}")
        return "; ".join(named) or "none"

    def parameters(self) -> dict[str, object]:
        """Return this method's parameters, for provenance and the CLI."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["integrator"] = self.scheme.name
        return values

    @functools.cached_property
    def _parameters_text(self) -> str:
        return repr(self.parameters())  # once: the fields are frozen

    def _provenance(
        self, system: HybridSystem, t_end: float, wall: float
    ) -> dict[str, str]:
        flows = "; ".join(
            ", ".join(f"{k}={v}" for k, v in flow.describe().items())
            for flow in system.flows()
        )
        return {
            "method": self.name,
            "parameters": self._parameters_text,
            "system": system.name,
            "system_parameters": repr(dict(system.parameters)),
            "flows": flows,
            "t0": repr(system.t0),
            "t_end": repr(t_end),
            "wall_time_s": f"{time.perf_counter() - wall:.6f}",
            "versions": _versions(tuple(n in sys.modules for n in VERSIONED)),
        }


def kept(
    table: dict,
    owner: object,
    key: object,
    build: Callable,
    busy: Callable[[Any], bool] = lambda value: False,
) -> Any:
    """build(), kept in `table` for `owner`'s `key` while owner lives and not busy."""
    found = table.get(id(owner))
    if found is not None and found[0] == key and not busy(found[1]):
        return found[1]
    value = build()
    if found is None:
        weakref.finalize(owner, table.pop, id(owner), None)
    if found is None or not busy(found[1]):
        table[id(owner)] = (key, value)
    return value


def _recorded_names(system: HybridSystem) -> tuple[str, ...]:
    """The extra columns the system's flows record (an FMU's outputs), once each."""
    names = dict.fromkeys(n for flow in system.flows() for n in flow.recorded_names)
    return tuple(n for n in names if n not in system.state_names)


def _plan_undo(system: HybridSystem) -> None:
    """Tell each flow which steps its guards may cross (`CrossingForecast`)."""
    guards: dict[int, tuple[Flow, list]] = {}
    for mode in system.modes.values():
        of_flow = guards.setdefault(id(mode.flow), (mode.flow, []))[1]
        of_flow.extend(edge.guard for edge in mode.edges)
    for flow, of_flow in guards.values():  # a flow's own plan_undo, not the no-op
        if getattr(type(flow), "plan_undo", None) not in (None, Flow.plan_undo):
            flow.plan_undo(CrossingForecast(of_flow))


def _hooked(system: HybridSystem) -> frozenset[str]:
    """The modes whose flows schedule events or ask for one after steps."""
    return frozenset(
        name
        for name, mode in system.modes.items()
        if type(mode.flow).next_event_time is not Flow.next_event_time
        or type(mode.flow).step_completed is not Flow.step_completed
    )


def _observer(system: HybridSystem):
    """The Recorder's observer (each sample asks its mode's flow), or None."""
    if not any(f.recorded_names or f.reports_events for f in system.flows()):
        return None
    return lambda t, x, mode: system.mode(mode).flow.observe(t, x)


VERSIONED = ("numpy", "scipy", "pandas", "fmpy")  # dependencies named in provenance


@functools.cache
def _versions(loaded: tuple[bool, ...]) -> str:
    """The versions of fmibridge, of the VERSIONED dependencies `loaded` and Python."""
    from .. import __version__

    packages = ", ".join(
        f"{name} {getattr(sys.modules[name], '__version__', '?')}"
        if is_loaded
        else f"{name} (not loaded)"
        for name, is_loaded in zip(VERSIONED, loaded, strict=True)
    )
    return f"fmibridge {__version__}, {packages}, python {platform.python_version()}"


@contextlib.contextmanager
def _progress(t0: float, t_end: float, *, enabled: bool) -> Iterator[Callable]:
    """Yield update(t) of a tqdm bar over simulated time (a terminal, runs > 1 s)."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda t: None
        return
    from tqdm import tqdm

    total = t_end - t0
    with tqdm(
        total=total, unit="s(sim)", delay=1.0, leave=False, bar_format=PROGRESS_FORMAT
    ) as bar:
        yield lambda t: bar.update(t - t0 - bar.n)
