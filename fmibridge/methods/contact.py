"""One frictionless unilateral contact h(q) >= 0: the model data Zeno completion needs.

The gap h(q), its gradient dh(q), optionally its Hessian H(q), and the force map
dx/dt(t, x, lam), affine in the contact force lam along dh^T; the numerics run
compiled (`_contact.ContactFunctions`). Every source of a contact follows
`build_contact` (Or and Ames, "Formal and practical completion of Lagrangian
hybrid systems", eqs. (4)-(8), Sec. V).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..core._functions import Function, Gathered, PythonVector
from ..core.errors import FmibridgeError
from ..core.guards import UnilateralConstraint
from ..core.system import HybridSystem
from ..flows.base import Flow, ForcedVectorField, VectorField, python_force
from ..flows.compiled import c_function, engine_entry, is_compiled
from . import _contact
from ._unilateral import FD_STEP
from .base import kept

if TYPE_CHECKING:
    from ..flows.fmu import CoSimulationFlow, ModelExchangeFlow

StateFn = Callable[[float, np.ndarray], float]
VectorFn = Callable[[float, np.ndarray], np.ndarray]
ForceFn = Callable[[float, np.ndarray, float], np.ndarray]  # (t, x, lam) -> dx/dt
# The compiled numerics kept per state size, in a Contact's __dict__.
_COMPILED = "_compiled"
# Each UnilateralConstraint's Contact, with its flow and state names (`contact_of`).
_BUILT: dict[int, tuple[tuple[int, tuple[str, ...]], tuple[Flow, Contact]]] = {}


@dataclass(frozen=True)
class ZenoBounds:
    """Conservative bounds over V = N(eps_q', eps_v') around a Zeno equilibrium.

    Attributes
    ----------
    a_min, a_max : float
        -max_V hddot and -min_V hddot (Lemma 1, eq. 9).
    eta : float
        max_V ||M^-1 dh^T|| / (dh M^-1 dh^T) (eq. 10, with M^-1 in the
        denominator; the printed dh M dh^T is dimensionally inconsistent).
    zeta : float
        max_V ||M^-1 (C qdot + N)|| (eq. 10).
    """

    a_min: float
    a_max: float
    eta: float
    zeta: float


BoundsFn = Callable[[float, np.ndarray, float, float], ZenoBounds]


def _numeric(name: str, doc: str) -> Callable[..., Any]:
    """A Contact method that calls its compiled numerics' `name` on (t, x)."""

    def method(self: Contact, t: float, x: np.ndarray) -> Any:
        return getattr(self.compiled(x.size), name)(t, x)

    method.__name__, method.__qualname__, method.__doc__ = name, f"Contact.{name}", doc
    return method


@dataclass(frozen=True)
class Contact(UnilateralConstraint):
    """A frictionless unilateral contact h(q) >= 0 with its model data (Or and
    Ames, Def. 2); it can stand as `HybridSystem.constraint`.

    Parameters
    ----------
    gap, velocity : str
        Names of h and dh qdot (labels only; they need not be states).
    restitution : float
        Newton's coefficient e in [0, 1].
    gap_fn : callable or Function
        h(t, x) -> float.
    gradient_fn : callable or Function
        dh(t, x) -> array (n,), the row dh/dq.
    rhs_with_force : callable or Function
        (t, x, lam) -> dx/dt with the force lam along dh^T, affine in lam (a
        Function takes the states followed by lam).
    q_index, v_index : tuple of int
        Where q and qdot sit in x (same order).
    hessian_fn : callable or Function, optional
        H(t, x) -> array (n, n); None: central differences of `gradient_fn`.
    bounds : callable, optional
        (t, x_star, eps_q', eps_v') -> ZenoBounds (Definition 7); None: the
        model-free truncation test.
    """

    gap_fn: StateFn = None  # type: ignore[assignment]
    gradient_fn: VectorFn = None  # type: ignore[assignment]
    rhs_with_force: ForceFn | Function = None  # type: ignore[assignment]
    q_index: tuple[int, ...] = ()
    v_index: tuple[int, ...] = ()
    hessian_fn: Callable[[float, np.ndarray], np.ndarray] | None = None
    bounds: BoundsFn | None = None
    functions_kind: ClassVar[Callable[..., _contact.ContactFunctions]] = (
        _contact.ContactFunctions
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("gap_fn", "gradient_fn", "rhs_with_force"):
            if not callable(getattr(self, name)):
                raise FmibridgeError(
                    f"Contact `{self.gap}`: `{name}` must be callable."
                )
        if not self.q_index or len(self.q_index) != len(self.v_index):
            raise FmibridgeError(
                f"Contact `{self.gap}`: `q_index` and `v_index` must be non-empty and "
                f"of equal length, got {self.q_index!r} and {self.v_index!r}."
            )
        object.__setattr__(self, "q_index", tuple(self.q_index))
        object.__setattr__(self, "v_index", tuple(self.v_index))

    def __getstate__(self) -> dict:
        """The fields, without the compiled numerics (rebuilt where needed)."""
        return {k: v for k, v in self.__dict__.items() if k != _COMPILED}

    def compiled(self, n: int) -> _contact.ContactFunctions:
        """Return the contact's compiled numerics on n states (built once)."""
        built = self.__dict__.setdefault(_COMPILED, {})
        if n not in built:
            name, nq, hessian = self.gap, len(self.q_index), self.hessian_fn
            built[n] = self.functions_kind(
                _function(self.gap_fn, "gap", n, 1, name, "gap_fn"),
                _function(self.gradient_fn, "rhs", n, nq, name, "gradient_fn"),
                _function(self.rhs_with_force, "force", n, n, name, "rhs_with_force"),
                None
                if hessian is None
                else _function(hessian, "hessian", n, nq * nq, name, "hessian_fn"),
                self.q_index,
                self.v_index,
                float(self.restitution),
                name,
            )
        return built[n]

    def check(self, t: float, x: np.ndarray) -> None:
        """Raise FmibridgeError naming the index or primitive that does not fit the
        state x (the compiled numerics read their values without bounds checks)."""
        n, nq = x.size, len(self.q_index)
        outside = [i for i in (*self.q_index, *self.v_index) if not 0 <= i < n]
        if outside:
            raise FmibridgeError(
                f"Contact `{self.gap}`: indices {outside} lie outside the state of "
                f"size {n}."
            )
        expected: dict[str, tuple[Any, tuple[float, ...], int]] = {
            "gap_fn": (self.gap_fn, (), 1),
            "gradient_fn": (self.gradient_fn, (), nq),
            "rhs_with_force": (self.rhs_with_force, (0.0,), n),
            "hessian_fn": (self.hessian_fn, (), nq * nq),
        }
        for name, (fn, extra, size) in expected.items():
            if fn is None:
                continue
            if isinstance(fn, Function):
                if fn.n_in != n + len(extra) or fn.n_out != size:
                    raise FmibridgeError(
                        f"Contact `{self.gap}`: `{name}` ({fn.what}) maps {fn.n_in} "
                        f"to {fn.n_out} values; expected {n + len(extra)} to {size} "
                        f"(q has {nq} entries, the state {n})."
                    )
                value = fn(t, np.append(x, extra))
            else:
                value = np.asarray(fn(t, x, *extra), dtype=float)
            if value.size != size or not all(map(math.isfinite, value.flat)):
                raise FmibridgeError(
                    f"Contact `{self.gap}`: `{name}` gives {value.tolist()!r} at "
                    f"t = {t!r}, x = {x.tolist()}; expected {size} finite value(s) "
                    f"(q has {nq} entries, the state {n})."
                )

    h = _numeric("h", "Return the gap h(q).")
    dh = _numeric("dh", "Return the gradient row dh(q), shape (n,).")
    rate = _numeric("rate", "Return the gap rate hdot = dh(q) qdot.")
    curvature = _numeric("curvature", "Return qdot^T H(q) qdot, eq. (8).")
    affine = _numeric("affine", "Return (f0, b) with dx/dt = f0 + lam b.")
    hddot = _numeric("hddot", "Return hddot along the free flow, eq. (8).")
    constrained = _numeric("constrained", "Return (dx/dt, lam) of eqs. (7) and (6).")
    impact = _numeric("impact", "Return the state after the impact law, eq. (4).")
    project = _numeric("project", "Return R* x: h(q) = 0, dh qdot = 0 (Sec. V).")

    def lam(self, t: float, x: np.ndarray) -> float:
        """Return the contact force of eq. (6); > 0 iff hddot < 0."""
        return self.constrained(t, x)[1]

    def constrained_rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt of the constrained dynamics, eq. (7)."""
        return self.constrained(t, x)[0]


def _function(fn, kind: str, n: int, n_out: int, name: str, role: str) -> Function:
    """A primitive as a Function: as it is, compiled, or called back in Python."""
    what = f"`{role}` of contact `{name}`"
    if isinstance(fn, Function):
        return fn
    if kind == "gap":
        entry = engine_entry(fn, n)
        if entry is not None:
            function, index = entry
            if index == 0 and function.n_out == 1:
                return function
            return Gathered([function], [0], [index], n, what)
    elif is_compiled(fn):
        return c_function(fn, kind, n, n_out)
    if kind == "force":
        return python_force(fn, n, what)
    return PythonVector(fn, n, n_out, what)


# What the start checks call zero, and how far a velocity read at a unit velocity
# may be from the gap's slope: far above the ~1e-10 error of central differences
# of order-one gaps, far below any wrong coefficient.
SLOPE_RTOL = 1e-6


@dataclass(frozen=True)
class Gap:
    """A contact's gap h(t, x), its gradient dh(q), Hessian H(q) (None: central
    differences) and, where the source has one, its rate dh(q) qdot."""

    fn: StateFn
    gradient: VectorFn
    hessian: VectorFn | None = None
    rate: StateFn | None = None

    @classmethod
    def of_rate(cls, fn: StateFn, rate: StateFn, v_index: Sequence[int]) -> Gap:
        """h with dh read off its rate (linear in qdot) at unit velocities."""
        return cls(fn, functools.partial(rate_row, rate, tuple(v_index)), rate=rate)


Coordinates = tuple[Sequence[int], Sequence[int]]  # (q_index, v_index)
GapOf = Callable[[Coordinates], Gap]  # a source's Gap on its coordinates


def build_contact(
    labels: tuple[str, str],
    restitution: float,
    geometry: Gap,
    coordinates: Coordinates,
    force: ForceFn | Function,
    *,
    start: tuple[float, np.ndarray, Sequence[str]] | None = None,
    kind: type[Contact] = Contact,
    probe_time: bool = True,
    **fields: Any,
) -> Contact:
    """Return the Contact (a `kind` with `fields`) of what every source gives: the
    names of h and dh qdot (`labels`), the `geometry`, where q and qdot sit in x
    (`coordinates`) and the force map; checked at `start` (t0, x0, state names;
    `check_start`). Or and Ames, eqs. (4)-(8)."""
    contact = kind(
        *labels,
        restitution,
        gap_fn=geometry.fn,
        gradient_fn=geometry.gradient,
        rhs_with_force=force,
        q_index=tuple(coordinates[0]),
        v_index=tuple(coordinates[1]),
        hessian_fn=geometry.hessian,
        **fields,
    )
    if start is not None:
        contact.check(start[0], start[1])
        check_start(contact, geometry.rate, *start, probe_time=probe_time)
    return contact


def rate_row(
    rate: StateFn, v_index: Sequence[int], t: float, x: np.ndarray
) -> np.ndarray:
    """dh(q): the rate dh(q) qdot at each unit velocity (the other states kept)."""
    unit, row = np.array(x, dtype=float), np.empty(len(v_index))
    unit[list(v_index)] = 0.0
    for k, i in enumerate(v_index):
        unit[i] = 1.0
        row[k] = rate(t, unit)
        unit[i] = 0.0
    return row


def central_gradient(
    h: StateFn, index: Sequence[int], t: float, x: np.ndarray
) -> np.ndarray:
    """dh/dx at `index` by central differences of step FD_STEP (1 + abs(x_j))."""
    probe, row = np.array(x, dtype=float), np.empty(len(index))
    for k, j in enumerate(index):
        d = FD_STEP * (1.0 + abs(probe[j]))
        probe[j] = x[j] + d
        ahead = h(t, probe)
        probe[j] = x[j] - d
        row[k] = (ahead - h(t, probe)) / (2.0 * d)
        probe[j] = x[j]
    return row


# Why a gap that moves with time is refused (`check_start`, `parse_constraint`).
MOVING_WALL = (
    "the contact law (Or and Ames, Def. 2, eqs. 4-8) takes the gap as h(q), a "
    "function of the coordinates alone, so its rate dh(q) qdot, impact law and "
    "contact force would miss the wall's own motion dh/dt and complete wrongly. "
    "Write the gap over the coordinates and parameters alone; a wall that moves "
    "can be a body of the model (its position a state the model moves), or, "
    "without [constraint] and completion, an edge's guard and reset formula of "
    "your own (expressions that may read t)"
)


def check_start(
    contact: Contact,
    rate: StateFn | None,
    t: float,
    x: np.ndarray,
    names: Sequence[str],
    *,
    probe_time: bool = True,
) -> None:
    """Raise unless at (t, x) the gap moves with q alone, not with t (Or and
    Ames, Def. 2: h(q)), and `rate`, if given, is its rate dh(q) qdot.

    dh/dt is a difference forward from t (a model may refuse an earlier time),
    skipped without `probe_time` (a Co-Simulation FMU's outputs cannot be read
    at another time without stepping).
    """
    slope = central_gradient(contact.h, range(x.size), t, x)
    scale = 1.0 + float(np.max(np.abs(slope)))
    stray = [
        j
        for j in range(x.size)
        if j not in contact.q_index and abs(slope[j]) > SLOPE_RTOL * scale
    ]
    q_names, along_q = [names[i] for i in contact.q_index], slope[list(contact.q_index)]
    if stray:
        slopes = ", ".join(f"dh/d{names[j]} = {slope[j]:.6g}" for j in stray)
        raise FmibridgeError(
            f"The gap {contact.gap!r} moves with {[names[j] for j in stray]} "
            f"({slopes} at t = {t!r}), which are not coordinates q of the contact "
            f"(q: {q_names}): the contact law (Or and Ames, eqs. 4-8) takes the gap "
            f"as h(q), so its rate, impact law and contact force would miss that "
            f"motion. Write the gap over the coordinates alone (a state that never "
            f"moves can be a parameter), or make those states coordinates (the "
            f"configuration of a body the contact force acts on: an adapter's "
            f"`force_input`, whose coordinates are the first half of the FMU's "
            f"states, or a coupled adapter's `forces`, the first half of each "
            f"body's; projection moves one)."
        )
    if probe_time:
        d = FD_STEP * (1.0 + abs(t))
        h = [contact.h(t + k * d, x) for k in (0.0, 1.0, 2.0)]
        dh_dt = (-3.0 * h[0] + 4.0 * h[1] - h[2]) / (2.0 * d)
        if abs(dh_dt) > SLOPE_RTOL * (1.0 + float(np.max(np.abs(along_q)))):
            raise FmibridgeError(
                f"The gap {contact.gap!r} moves with time at fixed states (dh/dt "
                f"= {dh_dt:.6g} at t = {t!r}; q: {q_names}): it reads the time (t, "
                f"or an output that depends on time or on an input that varies in "
                f"time); {MOVING_WALL}."
            )
    if rate is None:
        return
    read = rate_row(rate, contact.v_index, t, x)
    if np.any(np.abs(read - along_q) > SLOPE_RTOL * np.maximum(1.0, np.abs(along_q))):
        raise FmibridgeError(
            f"The velocity {contact.velocity!r} is not the rate of the gap "
            f"{contact.gap!r} (dh qdot): at unit velocities it gives {read.tolist()}, "
            f"the gap's slope over {q_names} is {along_q.tolist()} at t = {t!r}."
        )


def contact_of(system: HybridSystem) -> Contact:
    """Return the `Contact` of `system`, building it from a `UnilateralConstraint`.

    A constraint on states of a vector field is the 1-DOF contact h = x[gap];
    lam acts through the flow's force map, else as an acceleration. Without a
    constraint, an FMU's own event indicator may give one; else FmibridgeError.
    """
    constraint = system.constraint
    if isinstance(constraint, Contact):
        return constraint
    if constraint is None:
        return _contact_from(indicator_constraint(system), system)
    flow = system.mode(system.initial_mode).flow
    key = (id(flow), system.state_names)  # the entry holds the flow: its id is its own
    return kept(
        _BUILT, constraint, key, lambda: (flow, _contact_from(constraint, system))
    )[1]


def _contact_from(constraint: UnilateralConstraint, system: HybridSystem) -> Contact:
    names = system.state_names
    flow = system.mode(system.initial_mode).flow
    missing = [n for n in (constraint.gap, constraint.velocity) if n not in names]
    if missing or not isinstance(flow, VectorField):
        raise FmibridgeError(
            f"HybridSystem `{system.name}`: completion from a UnilateralConstraint "
            f"needs its gap and velocity as states of a vector field; "
            f"{missing or 'the flow'} is not (states {list(names)}). Give a Contact "
            f"as the constraint instead (in an adapter's [constraint]: the "
            f"constraint-force input, `force_input` or `forces`; without one, "
            f"`coordinate` and `mass`, for completion by projection)."
        )
    i, j = names.index(constraint.gap), names.index(constraint.velocity)
    unit = np.eye(len(names))[j]

    def along_velocity(t: float, x: np.ndarray, lam: float) -> np.ndarray:
        return np.asarray(flow.rhs(t, x), dtype=float) + lam * unit

    force: ForceFn | Function = along_velocity
    if isinstance(flow, ForcedVectorField):
        force = flow.force_function()
    geometry = Gap(
        lambda t, x: x[i], lambda t, x: np.ones(1), lambda t, x: np.zeros((1, 1))
    )
    labels = (constraint.gap, constraint.velocity)
    return build_contact(labels, constraint.restitution, geometry, ((i,), (j,)), force)


# Relative shift of a state that `indicator_constraint` probes the FMU with, and
# the relative round-off within which the copy of a state must respond.
STATE_PROBE = 1e-3
EXACT_RTOL = 1e-9
# The probe impact of `indicator_constraint`: just beyond the surface (m), moving
# into it at unit speed, so the FMU's own `when` fires and reinit shows -e.
BEYOND = -1e-9


def _adapter_lines(gap: str = "<gap state>", velocity: str = "<its velocity>") -> str:
    """The lines of an adapter file that declare the constraint."""
    return (
        f'[constraint]\ngap = "{gap}"\nvelocity = "{velocity}"\n'
        f"restitution = <number or parameter name>"
    )


def indicator_constraint(system: HybridSystem) -> UnilateralConstraint:
    """Return the constraint of a system whose impact is an FMU's own event indicator.

    The indicator must copy a state (the gap) whose derivative is a state (the
    velocity), and the FMU must save its state, so that a probe impact gives
    the restitution -v+ / v- of its own reset (Or and Ames, eq. 4); else an
    FmibridgeError names the adapter lines that declare the constraint.
    """
    found = [  # an FMU's indicator (`ModelExchangeFlow.event_indicator`)
        (edge.guard.fn.fmu_flow, edge.guard.fn.indicator_index)  # type: ignore[attr-defined]
        for mode in system.modes.values()
        for edge in mode.edges
        if hasattr(edge.guard.fn, "fmu_flow")
    ]
    if not found:
        raise FmibridgeError(
            f"HybridSystem `{system.name}` has no `constraint`; completion needs one "
            f"(a UnilateralConstraint on states, or a Contact; in an adapter file:\n"
            f"{_adapter_lines()})."
        )
    flow, index = found[0]
    t, x = system.t0, system.x0
    gap = _copied_state(lambda y: flow.event_indicator(index)(t, y), x)
    velocity = None if gap is None else _copied_state(lambda y: flow.rhs(t, y)[gap], x)
    names = system.state_names
    if gap is None or velocity is None:
        raise FmibridgeError(
            f"{flow.path}: completion needs the contact, and event indicator {index} "
            f"is not a state {'' if gap is None else 'whose derivative is a state '}"
            f"of the FMU (states {list(names)}); declare it in an adapter file:\n"
            f"{_adapter_lines()}"
        )
    e = _restitution(flow, t, x, gap, velocity)
    if e is None:
        raise FmibridgeError(
            f"{flow.path}: event indicator {index} is the gap {names[gap]!r} with "
            f"velocity {names[velocity]!r}, but the FMU cannot save its state, so "
            f"its restitution cannot be measured; declare it in an adapter file:\n"
            f"{_adapter_lines(names[gap], names[velocity])}"
        )
    return UnilateralConstraint(names[gap], names[velocity], e)


def _copied_state(value: Callable[[np.ndarray], float], x: np.ndarray) -> int | None:
    """Return j if value(x) == x[j] and moves one for one with x[j] only."""
    base = float(value(x))
    equal = [
        j
        for j in range(x.size)
        if math.isclose(base, x[j], rel_tol=EXACT_RTOL, abs_tol=1e-12)
    ]
    if not equal:  # no state to copy: spare the probes (each an FMU call)
        return None
    moves = []  # (value moved, x[k] moved) for each k
    for k in range(x.size):
        y = x.copy()
        y[k] += STATE_PROBE * (1.0 + abs(x[k]))
        moves.append((float(value(y)) - base, y[k] - x[k]))
    for j in equal:
        if all(
            abs(dv - dx * (k == j)) <= EXACT_RTOL * (1.0 + abs(x[k]))
            for k, (dv, dx) in enumerate(moves)
        ):
            return j
    return None


def _restitution(flow, t: float, x: np.ndarray, gap: int, velocity: int):
    """-v+ / v- of the FMU's own reset at a probe impact (None: no state saving)."""
    if not flow.archive.capability("ModelExchange", "canGetAndSetFMUstate"):
        return None
    instance = flow.instance
    saved = instance.get_state()
    try:
        y = x.copy()
        y[gap], y[velocity] = BEYOND, -1.0
        after = flow.event_update(t, y)
    finally:
        instance.set_state(saved)
        instance.free_state(saved)
        instance.calls.forget_time()
    e = float(after[velocity])  # -v+ / v- with v- = -1
    return e if 0.0 <= e <= 1.0 else None


def flow_start(flow) -> tuple[float, np.ndarray, tuple[str, ...]]:
    """(t0, x0, state names) of a flow; t0 is 0 for a coupled system."""
    x0 = np.array(flow.x0, dtype=float)
    return float(getattr(flow, "t0", 0.0)), x0, tuple(flow.state_names)


def state_coordinate(flow: Flow, coordinate: str) -> tuple[int, int]:
    """Return the indices (q, qdot) of the state `coordinate` and of its
    derivative, found on the FMU's derivatives (Model Exchange)."""
    names, where = list(flow.state_names), getattr(flow, "path", "The system")
    if coordinate not in names:
        raise FmibridgeError(
            f"{where}: the constraint's coordinate {coordinate!r} is not a state "
            f"(states {names})."
        )
    rhs = getattr(flow, "rhs", None)
    if rhs is None:
        raise FmibridgeError(
            f"{where}: the constraint's coordinate {coordinate!r} needs the "
            f"FMU's derivatives (Model Exchange) to find its velocity; run it with "
            f'interface = "me".'
        )
    (t, x, _), i = flow_start(flow), names.index(coordinate)
    j = _copied_state(lambda y: rhs(t, y)[i], x)
    if j is None or j == i:
        raise FmibridgeError(
            f"{where}: no state is the derivative of the coordinate "
            f"{coordinate!r} (der({coordinate}) must equal a state, its velocity; "
            f"states {names})."
        )
    return i, j


# A Co-Simulation probe step, s: O(PROBE_STEP) truncation against round-off
# ~1e-16 |qdot| / PROBE_STEP in the difference quotient of the velocity.
PROBE_STEP = 1e-6


def fmu_contact(
    flow: ModelExchangeFlow | CoSimulationFlow,
    gap: str,
    velocity: str,
    restitution: float,
    *,
    force_input: str = "lam",
    coordinate: str | None = None,
    geometry: GapOf | None = None,
) -> Contact:
    """Return the Contact of a mechanical FMU, from its outputs and force input.

    h(q) is the variable `gap`; dh(q) is read off `velocity` (dh qdot) at unit
    velocities, unless `geometry` gives the Gap on the coordinates (`gap` and
    `velocity` then label it); q, qdot and the force map are those of
    `fmu_force`; checked at the FMU's start (`build_contact`).
    """
    known = set(flow.state_names) | set(flow.output_names)
    for role, name in (("gap", gap), ("velocity", velocity)):
        if geometry is None and name not in known:
            raise FmibridgeError(
                f"{flow.path}: constraint {role} {name!r} is not a state or output; "
                f"the FMU has {sorted(known)}."
            )
    coordinates, force = fmu_force(flow, force_input, coordinate)

    def variable(name: str) -> StateFn:
        return lambda t, x: flow.variables(t, x)[name]

    shape = (
        Gap.of_rate(variable(gap), variable(velocity), coordinates[1])
        if geometry is None
        else geometry(coordinates)
    )
    args = ((gap, velocity), restitution, shape, coordinates, force)
    probe_time = isinstance(flow, VectorField)
    return build_contact(*args, start=flow_start(flow), probe_time=probe_time)


def fmu_force(
    flow: ModelExchangeFlow | CoSimulationFlow,
    force_input: str = "lam",
    coordinate: str | None = None,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ForceFn]:
    """Return ((q_index, v_index), force map) of a mechanical FMU's force input.

    The states are [q, qdot] (two halves), or q is the state `coordinate` and
    qdot its derivative. The force map is the FMU's response to its
    generalized constraint-force input along dh^T (Or and Ames, eqs. 5-7):
    its derivatives (Model Exchange), or qddot from a probe step of PROBE_STEP
    with the input held (Co-Simulation).
    """
    n_states = len(flow.state_names)
    variable = flow.archive.variables.get(force_input)
    halves = coordinate is None and n_states % 2 == 0
    if variable is None or variable.causality != "input" or not (halves or coordinate):
        raise FmibridgeError(
            f"{flow.path}: completion needs a real input {force_input!r} (the "
            f"generalized constraint force along dh^T) and states [q, qdot] (or "
            f"the state the gap is measured along, `coordinate`)."
        )
    if coordinate is None:
        half = n_states // 2
        q_index, v_index = tuple(range(half)), tuple(range(half, n_states))
    else:
        i, j = state_coordinate(flow, coordinate)
        q_index, v_index = (i,), (j,)
    v = list(v_index)

    if isinstance(flow, VectorField):  # Model Exchange

        def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
            return flow.rhs_with(t, x, force_input, lam)
    else:

        def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
            probe = flow.advance_with(t, x, PROBE_STEP, force_input, lam)
            return np.concatenate([x[v], (probe[v] - x[v]) / PROBE_STEP])

    return (q_index, v_index), force_map
