"""Zeno completion (Or and Ames): truncate accumulating impacts, slide, lift off.

`Completion(inner)` runs the free mode with `inner`; once an impact meets the
truncation test (`_completion.Series`) it applies R* and integrates the mode
"constrained" (`_completion.Phase`, column `lam`: eq. 6) until lam falls through
zero, then lifts off into "<free>:lifted", whose impact edges wait for the gap
rate's apex ("rearm"). docs/guide/completion.md lists the choices made.

References
----------
Or and Ames, Secs. III-V: Def. 4, Def. 7, Theorem 3, eqs. (4)-(8), (14)-(15),
and the procedure of Sec. V.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ..core._functions import PythonScalars, PythonVector
from ..core.errors import FmibridgeError
from ..core.guards import Edge, Guard
from ..core.integrators import Scheme
from ..core.recorder import Recorder
from ..core.records import Event, State, Status, Step
from ..core.result import Result
from ..core.system import HybridSystem, Mode
from ..flows.base import VectorField
from ..flows.stiff import Stiff
from ._completion import (
    FALLBACK_SAFETY,
    NON_FINITE,
    STUCK,
    Phase,
    Series,
    truncation_threshold,
)
from ._completion import LIFTED as PHASE_LIFTED
from ._contact import ProjectedStepper
from ._mode import reach_tol, reached
from .base import Method, kept, positive
from .contact import Contact, contact_of

__all__ = ["Completion", "ConstrainedFlow", "GapRate", "truncation_threshold"]

CONSTRAINED = "constrained"
LIFTED = "{}:lifted"
# What completion adds, kept while its owner lives (`kept`): the modes added to
# each free mode, so their compiled forms are built once; the completed system
# of each system, so a system run again is not completed and checked again.
_ADDED: dict[int, tuple[tuple, tuple[Mode, Mode]]] = {}
_COMPLETED: dict[int, tuple[tuple, HybridSystem]] = {}
# |h| and |dh qdot| below this at t0 count as on Z (step 2 of the procedure, A10).
ON_SURFACE = 1e-12


class ConstrainedFlow(VectorField):
    """The constrained dynamics D_L of eq. (7), projected onto Z after each step."""

    def __init__(
        self,
        contact: Contact,
        state_names: tuple[str, ...],
        free: str,
        impact_edges: tuple[str, ...],
    ) -> None:
        self.contact, self.free, self.impact_edges = contact, free, impact_edges
        self.state_names = state_names
        self.functions = contact.compiled(len(state_names))
        self.busy = False  # while a run uses its memory (`start`)
        self._steppers: dict[str, ProjectedStepper] = {}
        self._phases: dict[str, Phase] = {}
        self.start()

    def start(self) -> None:
        """Forget the last run: its last constrained step and series of impacts."""
        self.last_step: float | None = None
        self.series = Series(
            self.functions, self.free, self.impact_edges, self.contact.bounds
        )

    def rhs_function(self):
        """Return dx/dt of eq. (7), with the contact force lam of eq. (6)."""
        return self.functions.rhs_function

    def stepper(self, scheme: Scheme) -> ProjectedStepper:
        """Return the constrained steps of `scheme`: a step on eq. (7), then R*."""
        return _once(self._steppers, ProjectedStepper, self.functions, scheme)

    def phase(self, scheme: Scheme) -> Phase:
        """Return the constrained phases of `scheme` (`_completion.Phase`)."""
        return _once(self._phases, Phase, self.functions, scheme)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Step on eq. (7) and project onto Z."""
        return self.stepper(scheme).constrained_step(t, x, h)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return the states and the contact force lam at (t, x)."""
        return {**super().variables(t, x), "lam": self.contact.lam(t, x)}

    def callbacks(self) -> list[str]:
        """Name the contact's primitives the constrained phases call in Python."""
        f = self.functions
        parts = (f.gap, f.gradient, f.force, f.hessian)
        return [p.what for p in parts if isinstance(p, (PythonScalars, PythonVector))]

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = constrained:GAP``."""
        return {"flow": f"constrained:{self.contact.gap}"}


def _once(table: dict, kind: Callable, functions: object, scheme: Scheme):
    """kind(functions, scheme's tableau), built once per scheme in `table`."""
    if scheme.name not in table:
        table[scheme.name] = kind(functions, scheme.tableau)
    return table[scheme.name]


class GapRate:
    """The gap rate dh qdot as a guard (the lifted mode's "rearm")."""

    __name__ = "gap_rate"

    def __init__(self, contact: Contact) -> None:
        self.contact = contact

    def __call__(self, t: float, x: np.ndarray) -> float:
        return self.contact.rate(t, x)

    def engine_entry(self, n: int):
        """The contact's compiled gap rate, entry 0 (`flows.compiled`)."""
        return self.contact.compiled(n).rate_function, 0


@dataclass(frozen=True)
class Completion(Method):
    """Complete Zeno executions of any method: truncate, slide on h = 0, lift off.

    Parameters
    ----------
    inner : Method
        The method that runs the free mode (Halving, Relaxation, Unilateral...).
    eps : float
        Truncation error budget for time, position and velocity (eps_t, eps_q,
        eps_v of Def. 7), unless given one by one.
    eps_t, eps_q, eps_v : float, optional
        Separate budgets (s, chart units, chart units per s).
    switch : {'limit', 'truncation'}
        Where the constrained motion is reported to start: at the predicted Zeno
        time (default) or at the truncating impact (the paper's procedure).
    tol : float
        Local error (step doubling) below which a constrained step may double.
    t_tol : float
        Bracket that locates a lift-off, s; also the time within which the
        inner method is asked to place impacts (`Method.placing`).
    impact_edge : str, optional
        Name of the impact edge; by default the edges whose guard equals the gap
        h at the initial state.
    h, integrator, max_steps, max_events
        Keyword-only; by default those of `inner`. h is also the smallest
        constrained step.

    Examples
    --------
    >>> from fmibridge.methods import Halving
    >>> from fmibridge.models import bouncing_ball
    >>> result = Completion(Halving(h=1e-2)).run(bouncing_ball(), t_end=10.0)
    >>> result.mode[-1], float(result["h"][-1]), float(result["v"][-1])
    ('constrained', 0.0, 0.0)
    """

    name: ClassVar[str] = "completion"
    completes_zeno: ClassVar[bool] = True

    # None: filled in __post_init__ from eps and inner (typed as held)
    inner: Method = None  # type: ignore[assignment]
    eps: float = 1e-3
    eps_t: float = None  # type: ignore[assignment]
    eps_q: float = None  # type: ignore[assignment]
    eps_v: float = None  # type: ignore[assignment]
    switch: str = "limit"
    tol: float = 1e-10
    t_tol: float = 1e-10
    impact_edge: str | None = None
    h: float = field(default=None, kw_only=True)  # type: ignore[assignment]
    integrator: str | Scheme | Stiff | None = field(default=None, kw_only=True)
    max_steps: int = field(default=None, kw_only=True)  # type: ignore[assignment]
    max_events: int = field(default=None, kw_only=True)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Method):
            raise FmibridgeError(
                f"Completion: `inner` must be a Method such as Halving(h=1e-2), got "
                f"{self.inner!r}."
            )
        for key in ("h", "integrator", "max_steps", "max_events"):
            if getattr(self, key) is None:
                object.__setattr__(self, key, getattr(self.inner, key))
        for key in ("eps_t", "eps_q", "eps_v"):
            if getattr(self, key) is None:
                object.__setattr__(self, key, self.eps)
        super().__post_init__()
        for key in ("eps", "eps_t", "eps_q", "eps_v", "tol", "t_tol"):
            positive(key, getattr(self, key))
        # each impact of a series shifts every later one: place them to t_tol
        object.__setattr__(self, "inner", self.inner.placing(self.t_tol))
        if self.switch not in ("limit", "truncation"):
            raise FmibridgeError(
                f"Completion: `switch` must be 'limit' or 'truncation', got "
                f"{self.switch!r}."
            )

    def run(
        self,
        system: HybridSystem,
        t_end: float | None = None,
        *,
        progress: bool = False,
        t_eval: ArrayLike | None = None,
    ) -> Result:
        """Simulate the completed system of `system` (Def. 4); see `Method.run`."""
        completed = self._completed(system)
        flow = _flow(completed)
        flow.start()
        flow.busy = True
        try:
            return super().run(completed, t_end, progress=progress, t_eval=t_eval)
        finally:
            flow.busy = False

    def _check(self, system: HybridSystem, t_end: float | None) -> float:
        return self.inner._check(system, t_end)

    def output_names(self, system: HybridSystem) -> tuple[str, ...]:
        """The inner method's extra columns and the contact force `lam`."""
        names = self.inner.output_names(system)
        return names if "lam" in names else (*names, "lam")

    def _completed(self, system: HybridSystem) -> HybridSystem:
        """Add the modes "constrained" and "<free>:lifted" to `system`."""
        if not isinstance(system, HybridSystem):
            raise FmibridgeError(
                f"`system` must be a HybridSystem, got {type(system)}."
            )
        key = (self.impact_edge, system.t0, system.x0.tobytes())
        build = functools.partial(self._complete, system)
        return kept(_COMPLETED, system, key, build, lambda done: _flow(done).busy)

    def _complete(self, system: HybridSystem) -> HybridSystem:
        """Build the completed system of `system` (`_completed`)."""
        contact = contact_of(system)
        contact.check(system.t0, system.x0)
        free, impacts = self._impact_edges(system, contact)
        lifted_name = LIFTED.format(free.name)
        for name in (CONSTRAINED, lifted_name):
            if name in system.modes:
                raise FmibridgeError(
                    f"HybridSystem `{system.name}` already has a mode {name!r}, which "
                    f"completion adds; rename it."
                )
        lifted, constrained = _added(free, contact, impacts, system.state_names)
        mode, x0, t0 = system.initial_mode, system.x0, system.t0
        if (
            mode == free.name
            and abs(contact.h(t0, x0)) <= ON_SURFACE
            and abs(contact.rate(t0, x0)) <= ON_SURFACE
            and contact.lam(t0, x0) > 0
        ):
            mode, x0 = CONSTRAINED, contact.project(t0, x0)  # step 2 with A10
        return HybridSystem(
            [*system.modes.values(), lifted, constrained],
            mode,
            x0,
            t0=t0,
            parameters=system.parameters,
            constraint=contact,
            name=system.name,
            experiment=system.experiment,
        )

    def _impact_edges(
        self, system: HybridSystem, contact: Contact
    ) -> tuple[Mode, tuple]:
        """Return the free mode and the names of its impact edges."""
        t0, x0 = system.t0, system.x0
        gap = contact.h(t0, x0)

        def is_impact(e: Edge) -> bool:
            if self.impact_edge is not None:
                return e.name == self.impact_edge
            return math.isclose(e.guard(t0, x0), gap, rel_tol=1e-12, abs_tol=1e-15)

        found = {}
        for mode in system.modes.values():
            names = tuple(e.name for e in mode.edges if is_impact(e))
            if names:
                found[mode.name] = (mode, names)
        if len(found) != 1:
            raise FmibridgeError(
                f"HybridSystem `{system.name}`: completion needs exactly one mode with "
                f"impact edges (guard = the gap {contact.gap!r}), found "
                f"{sorted(found) or 'none'}; name the edge with `impact_edge`."
            )
        return next(iter(found.values()))

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        flow = _flow(system)
        if state.mode == CONSTRAINED:
            return self._phase(system.mode(CONSTRAINED), state, t_end, log)
        last = log.events[-1] if log.events else None
        if last is not None and last.edge == "lift-off" and last.t == state.t:
            return self._leave(system.mode(state.mode), state, t_end, log)
        n_events = len(log.events)
        step = self.inner._attempt(system, state, t_end, log)
        if step.stop is not None or len(log.events) == n_events:
            return step
        last = log.events[-1]
        if (
            last.source != flow.free
            or last.edge not in flow.impact_edges
            or step.state.t != last.t
        ):
            return step
        flow.series.catch_up(log.events)
        if not flow.series.truncates(self.eps_t, self.eps_q, self.eps_v):
            if flow.series.floor:
                self._warn_floor(flow, log)
            return step
        self._check_resolution(flow, log)
        flow.last_step = None  # a new constrained phase starts from h
        return Step(self._switch(flow, last, t_end, log))

    def _check_resolution(self, flow: ConstrainedFlow, log: Recorder) -> None:
        """Warn if the series' impacts are placed to worse than eps_t / 2 in all."""
        late = flow.series.placed(self.inner)
        if late > 0.5 * self.eps_t:
            log.warn_once(
                "resolution",
                f"completion: the inner method ({self.inner.name}) places the impacts "
                f"before the truncation at t = {flow.series.impacts[-1][0]:.9g} s "
                f"only to about {late:.2g} s in all, more than half of eps_t = "
                f"{self.eps_t:g} s: the Zeno time may be off by that much. Tighten "
                f"the inner method (Relaxation's eps, Unilateral's tol).",
            )

    def _warn_floor(self, flow: ConstrainedFlow, log: Recorder) -> None:
        """Warn that a series at the inner method's resolution is not truncated."""
        t, _, rate, gap = flow.series.impacts[-1]
        over = flow.series.excess / FALLBACK_SAFETY
        log.warn_once(
            ("floor", flow.series.impacts[0][0]),
            f"completion: the impacts before t = {t:.9g} s decay geometrically, "
            f"but the inner method ({self.inner.name}) placed this one "
            f"{abs(gap):.2g} from the surface, where the gap's potential energy "
            f"exceeds the impact's kinetic one (rate {abs(rate):.2g}): later "
            f"impacts tell nothing more, and the series' predicted tails are "
            f"{over:.3g} times completion's eps, so it is not truncated. Loosen eps "
            f"(eps_t, eps_q, eps_v) by a factor above {over:.3g} (the impacts up "
            f"to here do not depend on it), or place the impacts closer to the "
            f"surface (Unilateral's tol, Halving's t_tol, Relaxation's eps): the "
            f"tails shrink as the square root of that offset, so by a factor well "
            f"above {over * over:.2g}.",
        )

    def _leave(self, mode: Mode, state: State, t_end: float, log: Recorder) -> Step:
        """Take the first step of h after a lift-off here, where h = dh qdot = 0
        would hold a method that extrapolates the rearm guard (Unilateral)."""
        hs = min(self.h, t_end - state.t)
        x = mode.flow.advance(state.t, state.x, hs, self.scheme)
        t = t_end if reached(state.t + hs, t_end, self.h) else state.t + hs
        log.n_steps += 1
        log.sample(t, x, mode.name)
        return Step(State(t, x, mode.name))

    def _switch(
        self, flow: ConstrainedFlow, event: Event, t_end: float, log: Recorder
    ) -> State:
        """Log the switch "zeno" (`Series.switch`); return the state after it."""
        stepper = flow.stepper(self.scheme)
        t, x, lam = flow.series.switch(stepper, self.switch == "limit", t_end)
        log.event(Event(t, "zeno", event.source, CONSTRAINED, event.x_before, x))
        log.sample(t, x, CONSTRAINED, lam=lam)
        return State(t, x, CONSTRAINED)

    def _phase(self, mode: Mode, state: State, t_end: float, log: Recorder) -> Step:
        """Take constrained steps in one compiled call (one if journaled)."""
        flow: ConstrainedFlow = mode.flow  # type: ignore[assignment]
        phase = flow.phase(self.scheme)
        max_steps = self.max_steps - log.n_steps
        n = phase.run(
            state.t,
            state.x,
            flow.last_step or 0.0,
            self.h,
            t_end,
            self.tol,
            self.t_tol,
            reach_tol(t_end, self.h),
            min(max_steps, 1) if log.is_journaled else max_steps,
        )
        log.n_steps += n
        log.n_rejected += phase.n_rejected
        flow.last_step = phase.last_step or None
        log.samples(phase.ts[:n], phase.xs[:n], CONSTRAINED, lam=phase.lams[:n])
        if phase.status == NON_FINITE:
            raise FmibridgeError(
                f"Completion: the constrained dynamics of contact "
                f"{flow.contact.gap!r} give non-finite values in the step from t = "
                f"{phase.t!r}, x = {phase.x.tolist()}; check its force map, gradient "
                f"and Hessian there."
            )
        last = State(phase.t, phase.x, CONSTRAINED) if n else state
        if phase.status == PHASE_LIFTED:  # log the lift-off into the lifted mode
            t, x, edge = last.t, last.x, mode.edges[0]
            log.event(Event(t, edge.name, CONSTRAINED, edge.target, x, x))
            log.sample(t, x, edge.target)
            return Step(State(t, x, edge.target))
        return Step(last, Status.NO_PROGRESS if phase.status == STUCK else None)


def _added(
    free: Mode, contact: Contact, impacts: tuple, state_names: tuple[str, ...]
) -> tuple[Mode, Mode]:
    """Return the modes "<free>:lifted" and "constrained" added to `free`."""

    def build() -> tuple[Mode, Mode]:
        lifted_name = LIFTED.format(free.name)
        rearm = Edge(
            Guard(GapRate(contact), "falling", name="rearm"), free.name, name="rearm"
        )
        others = tuple(e for e in free.edges if e.name not in impacts)
        lifted = Mode(lifted_name, free.flow, (*others, rearm))
        flow = ConstrainedFlow(contact, state_names, free.name, impacts)
        lift_off = Edge(Guard(contact.lam, "falling", name="lift-off"), lifted_name)
        return lifted, Mode(CONSTRAINED, flow, (lift_off,))

    # the constrained flow holds the contact: its id is not reused while kept
    key = (id(contact), impacts, state_names)
    return kept(_ADDED, free, key, build, lambda modes: modes[1].flow.busy)


def _flow(completed: HybridSystem) -> ConstrainedFlow:
    """The constrained flow of a completed system."""
    return completed.mode(CONSTRAINED).flow  # type: ignore[return-value]
