"""One frictionless unilateral contact: the model data that Zeno completion needs.

A `Contact` describes h(q) >= 0 on a state x that holds the configuration q
and its velocity qdot at known indices (other states may ride along). It needs
four primitives, all functions of (t, x):

- `gap_fn` h(q), `gradient_fn` dh(q) (shape (n,)), optionally `hessian_fn` H(q);
- `rhs_with_force(t, x, lam)`: dx/dt with a contact force lam along dh^T, affine
  in lam. Two evaluations give the free acceleration a0 and the direction
  b = M^-1 dh^T, so neither M nor C nor N is needed (an FMU gives them through a
  `lam` input, see `flows.base.ForcedVectorField`).

Everything completion does follows: the gap rate dh qdot, the acceleration of h
along the free flow (eq. 8), the contact force lambda (eq. 6), the constrained
vector field (eq. 7), the impact law (eq. 4) and the projection R* (Sec. V).
They are computed once, compiled (`_contact.ContactFunctions`), on the
primitives as `Function`s: a primitive may be a `Function` already (the
force map's takes the n states followed by lam), a numba function
(`flows.compiled.compiled` with kind "guard", "rhs", "force" and "hessian": called
at its C address), or a Python function (called back).

Every factory of a Contact here follows one recipe, `build_contact`: its
source gives only what differs, a `Gap` (h, with dh given or read off the
velocity dh qdot), where q and qdot sit in the state, and the force map. The
sources: an FMU's variables and force input (`fmu_contact`, `fmu_force`), a
constraint on states (`contact_of`), coupled components (`coupled_contact`), a
model without force input (`projection`) and an adapter's gap expressions
(`formats.gap_expressions`).

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
eqs. (4)-(8), Sec. V.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..core._functions import Function, Gathered, PythonVector
from ..core.errors import FmibridgeError
from ..core.system import HybridSystem, UnilateralConstraint
from ..flows.base import Flow, ForcedVectorField, VectorField, python_force
from ..flows.compiled import c_function, engine_entry, is_compiled
from . import _contact

if TYPE_CHECKING:
    from ..flows.fmu import CoSimulationFlow, ModelExchangeFlow

StateFn = Callable[[float, np.ndarray], float]
VectorFn = Callable[[float, np.ndarray], np.ndarray]
ForceFn = Callable[[float, np.ndarray, float], np.ndarray]  # (t, x, lam) -> dx/dt
# The compiled numerics kept per state size (a Contact does not know the number
# of states that ride along until it sees a state).
_COMPILED = "_compiled"
# The Contact built from each UnilateralConstraint (`contact_of`), with the flow
# and state names it was built for; kept while the constraint lives, so repeated
# runs share its compiled numerics (`Contact.compiled`).
_BUILT: dict[int, tuple[Flow, tuple[str, ...], Contact]] = {}


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


@dataclass(frozen=True)
class Contact(UnilateralConstraint):
    """A frictionless unilateral contact h(q) >= 0 with its model data.

    It is a `UnilateralConstraint` (the `gap`/`velocity` names label the
    columns), so it can stand as `HybridSystem.constraint`.

    Parameters
    ----------
    gap, velocity : str
        Names of h and dh qdot (labels only; they need not be states).
    restitution : float
        Newton's coefficient e in [0, 1].
    gap_fn : callable or Function
        h(t, x) -> float.
    gradient_fn : callable or Function
        dh(t, x) -> array (n,), the row dh/dq at the configuration in x.
    rhs_with_force : callable or Function
        (t, x, lam) -> dx/dt with the force lam along dh^T; affine in lam. As a
        Function it takes the states followed by lam.
    q_index, v_index : tuple of int
        Where q and qdot sit in x (same order).
    hessian_fn : callable or Function, optional
        H(t, x) -> array (n, n); central differences of `gradient_fn` if None.
    bounds : callable, optional
        (t, x_star, eps_q', eps_v') -> ZenoBounds for Definition 7; without it
        completion uses its model-free truncation test.

    References
    ----------
    Or and Ames, Def. 2, eqs. (4)-(8).
    """

    gap_fn: StateFn = None  # type: ignore[assignment]
    gradient_fn: VectorFn = None  # type: ignore[assignment]
    rhs_with_force: ForceFn | Function = None  # type: ignore[assignment]
    q_index: tuple[int, ...] = ()
    v_index: tuple[int, ...] = ()
    hessian_fn: Callable[[float, np.ndarray], np.ndarray] | None = None
    bounds: BoundsFn | None = None
    # the compiled numerics `compiled` builds: the constrained phase's flow
    functions_kind: ClassVar[type[_contact.ContactFunctions]] = (
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
        """Return the contact's numerics on states of size n, compiled: its
        primitives as Functions (a `functions_kind`), built once per size."""
        built = self.__dict__.setdefault(_COMPILED, {})
        if n not in built:
            built[n] = _functions(self, n)
        return built[n]

    def check(self, t: float, x: np.ndarray) -> None:
        """Raise FmibridgeError naming the index or primitive that does not fit the
        state x: an index outside it, or a value of the wrong size or not finite.

        The compiled numerics read the primitives' values without bounds checks,
        so a wrong size there would give a wrong answer, not an error.
        """
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

    # -- geometry ------------------------------------------------------------------

    def h(self, t: float, x: np.ndarray) -> float:
        """Return the gap h(q)."""
        return self.compiled(x.size).h(t, x)

    def dh(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return the gradient row dh(q), shape (n,)."""
        return self.compiled(x.size).dh(t, x)

    def rate(self, t: float, x: np.ndarray) -> float:
        """Return the gap rate hdot = dh(q) qdot."""
        return self.compiled(x.size).rate(t, x)

    def curvature(self, t: float, x: np.ndarray) -> float:
        """Return qdot^T H(q) qdot, the velocity term of eq. (8)."""
        return self.compiled(x.size).curvature(t, x)

    # -- forces ----------------------------------------------------------------------

    def affine(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (f0, b): dx/dt = f0 + lam b, from two evaluations of the force map."""
        return self.compiled(x.size).affine(t, x)

    def hddot(self, t: float, x: np.ndarray) -> float:
        """Return the acceleration of h along the free flow, eq. (8)."""
        return self.compiled(x.size).hddot(t, x)

    def lam(self, t: float, x: np.ndarray) -> float:
        """Return the contact force that keeps hddot = 0, eq. (6); > 0 iff hddot < 0."""
        return self.compiled(x.size).constrained(t, x)[1]

    def constrained_rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt of the constrained dynamics, eq. (7)."""
        return self.compiled(x.size).constrained(t, x)[0]

    def constrained(self, t: float, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Return (dx/dt, lam) of eqs. (7) and (6), from one pair of force map
        evaluations."""
        return self.compiled(x.size).constrained(t, x)

    # -- maps --------------------------------------------------------------------------

    def impact(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return the state after the frictionless impact law, eq. (4).

        qdot+ = qdot - (1 + e) (dh qdot) / (dh M^-1 dh^T) M^-1 dh^T, with M^-1 dh^T
        the direction b of `affine`; gives dh qdot+ = -e dh qdot.
        """
        return self.compiled(x.size).impact(t, x)

    def project(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return x with h(q) = 0 (Newton along dh^T) and dh qdot = 0: R* of Sec. V.

        The velocity is projected orthogonally (Euclidean, as in Theorem 3) onto
        dh(q) qdot = 0 at the projected configuration.
        """
        return self.compiled(x.size).project(t, x)


def _functions(contact: Contact, n: int) -> _contact.ContactFunctions:
    """The compiled numerics of the contact's primitives on n states
    (`Contact.compiled`), as its `functions_kind`."""
    name, nq, hessian = contact.gap, len(contact.q_index), contact.hessian_fn
    what = f"of contact `{name}`"
    return contact.functions_kind(
        _gap_function(contact.gap_fn, n, name),
        _function(contact.gradient_fn, "rhs", n, nq, f"`gradient_fn` {what}"),
        _force_function(contact.rhs_with_force, n, name),
        None
        if hessian is None
        else _function(hessian, "hessian", n, nq * nq, f"`hessian_fn` {what}"),
        contact.q_index,
        contact.v_index,
        float(contact.restitution),
        name,
    )


def _function(fn, kind: str, n: int, n_out: int, what: str) -> Function:
    """A primitive as a Function: as it is, at a numba function's C address, or
    a Python function called back."""
    if isinstance(fn, Function):
        return fn
    if is_compiled(fn):
        return c_function(fn, kind, n, n_out)
    return PythonVector(fn, n, n_out, what)


def _gap_function(fn, n: int, name: str) -> Function:
    """The gap as a Function of one value: its compiled form (`engine_entry`: an
    expression, an FMU's indicator, a numba guard) where it has one."""
    if isinstance(fn, Function):
        return fn
    entry = engine_entry(fn, n)
    if entry is None:
        return PythonVector(fn, n, 1, f"`gap_fn` of contact `{name}`")
    function, index = entry
    if index == 0 and function.n_out == 1:
        return function
    return Gathered([function], [0], [index], n, f"`gap_fn` of contact `{name}`")


def _force_function(fn, n: int, name: str) -> Function:
    """The force map as a Function of the n states followed by lam."""
    if isinstance(fn, Function):
        return fn
    if is_compiled(fn):
        return c_function(fn, "force", n)
    return python_force(fn, n, f"`rhs_with_force` of contact `{name}`")


# -- the recipe every source follows -------------------------------------------------

# Central differences of a first derivative: the step that balances truncation
# (~ step^2) and round-off (~ eps / step), eps^(1/3) (Nocedal and Wright, Sec. 8.1).
FD_STEP = float(np.finfo(float).eps ** (1 / 3))
# What the start checks call zero, and how far a velocity read at a unit velocity
# may be from the gap's slope: far above the ~1e-10 error of central differences
# of order-one gaps, far below any wrong coefficient.
SLOPE_RTOL = 1e-6


@dataclass(frozen=True)
class Gap:
    """Where a contact's gap comes from: h(t, x), its gradient dh(q) (n,) and
    Hessian H(q) (None: central differences in `_contact`), and the velocity
    dh(q) qdot as a function `rate` where the source has one (checked against
    h at the start, `check_rate`)."""

    fn: StateFn
    gradient: VectorFn
    hessian: VectorFn | None = None
    rate: StateFn | None = None

    @classmethod
    def of_rate(cls, fn: StateFn, rate: StateFn, v_index: Sequence[int]) -> Gap:
        """h with dh read off its rate (linear in qdot) at unit velocities."""
        return cls(fn, functools.partial(rate_row, rate, tuple(v_index)), rate=rate)


def build_contact(
    labels: tuple[str, str],
    restitution: float,
    geometry: Gap,
    coordinates: tuple[Sequence[int], Sequence[int]],
    force: ForceFn | Function,
    *,
    start: tuple[float, np.ndarray, Sequence[str]] | None = None,
    kind: Callable[..., Contact] = Contact,
    probe_time: bool = True,
) -> Contact:
    """Return a contact from what its source gives (module docstring): the
    names of h and dh qdot (`labels`), its `geometry`, where q and qdot sit in x
    (`coordinates`) and the force map, with `kind` (`projection.ProjectedContact`
    for the projection route). At `start` (t0, x0 and the state names) its
    primitives are checked (`Contact.check`), that its gap moves with q alone
    (`check_stray`) and, with `probe_time`, not with t (`check_time`; False
    where h cannot be read at another time without stepping: a Co-Simulation
    FMU's outputs), and its velocity (`check_rate`).

    References
    ----------
    Or and Ames, eqs. (4)-(8).
    """
    contact = kind(
        *labels,
        restitution,
        gap_fn=geometry.fn,
        gradient_fn=geometry.gradient,
        rhs_with_force=force,
        q_index=tuple(coordinates[0]),
        v_index=tuple(coordinates[1]),
        hessian_fn=geometry.hessian,
    )
    if start is not None:
        contact.check(start[0], start[1])
        check_stray(contact, *start)
        if probe_time:
            check_time(contact, *start)
        if geometry.rate is not None:
            check_rate(contact, geometry.rate, *start)
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


def check_stray(
    contact: Contact, t: float, x: np.ndarray, names: Sequence[str]
) -> None:
    """Raise unless the gap moves with its coordinates q alone at (t, x) (central
    differences of h over every state).

    The contact law takes the gap as h(q) (Or and Ames, Def. 2): its rate
    dh(q) qdot, its acceleration (eq. 8), the contact force (eq. 6) and the
    impact law (eq. 4) see only how h moves with q. A gap that also moves with
    another state (one that rides along, or a velocity) would give a wrong
    constrained motion without any error.
    """
    slope = central_gradient(contact.h, range(x.size), t, x)
    scale = 1.0 + float(np.max(np.abs(slope)))
    stray = [
        j
        for j in range(x.size)
        if j not in contact.q_index and abs(slope[j]) > SLOPE_RTOL * scale
    ]
    if stray:
        slopes = ", ".join(f"dh/d{names[j]} = {slope[j]:.6g}" for j in stray)
        raise FmibridgeError(
            f"The gap {contact.gap!r} moves with {[names[j] for j in stray]} "
            f"({slopes} at t = {t!r}), which are not coordinates q of the contact "
            f"(q: {[names[i] for i in contact.q_index]}): the contact law (Or and "
            f"Ames, eqs. 4-8) takes the gap as h(q), so its rate, impact law and "
            f"contact force would miss that motion. Write the gap over the "
            f"coordinates alone (a state that never moves can be a parameter), or "
            f"make those states coordinates (the configuration of a body the "
            f"contact force acts on: an adapter's `force_input`, whose coordinates "
            f"are the first half of the FMU's states, or a coupled adapter's "
            f"`forces`, the first half of each body's; projection moves one)."
        )


# What to do about a gap that moves with time: the refusal of `check_time` and
# of a gap expression that reads t (`formats.gap_expressions.parse_gap`).
MOVING_WALL = (
    "the contact law (Or and Ames, Def. 2, eqs. 4-8) takes the gap as h(q), a "
    "function of the coordinates alone, so its rate dh(q) qdot, impact law and "
    "contact force would miss the wall's own motion dh/dt and complete wrongly. "
    "Write the gap over the coordinates and parameters alone; a wall that moves "
    "can be a body of the model (its position a state the model moves), or, "
    "without [constraint] and completion, an edge's guard and reset formula of "
    "your own (expressions that may read t)"
)


def check_time(contact: Contact, t: float, x: np.ndarray, names: Sequence[str]) -> None:
    """Raise unless the gap stands still in time at the states x: its slope in t
    at fixed x, by a second-order one-sided difference forward from t (a model
    may refuse a time before its start), must be zero.

    The contact law takes the gap as h(q) (Or and Ames, Def. 2), a fixed
    constraint: a gap that moves with t (a moving wall: an FMU output that
    depends on time, or on an input that varies in time) has the rate
    dh(q) qdot + dh/dt, which `check_rate` cannot see at fixed t. A gap whose
    inputs vary while it does not is accepted. The check is local: a gap that
    starts moving later (at a time event, a table's later jump) is not seen.
    """
    d = FD_STEP * (1.0 + abs(t))
    h = [contact.h(t + k * d, x) for k in (0.0, 1.0, 2.0)]
    slope = (-3.0 * h[0] + 4.0 * h[1] - h[2]) / (2.0 * d)
    along_q = central_gradient(contact.h, contact.q_index, t, x)
    if abs(slope) > SLOPE_RTOL * (1.0 + float(np.max(np.abs(along_q)))):
        raise FmibridgeError(
            f"The gap {contact.gap!r} moves with time at fixed states (dh/dt = "
            f"{slope:.6g} at t = {t!r}; q: {[names[i] for i in contact.q_index]}): "
            f"it reads the time (t, or an output that depends on time or on an "
            f"input that varies in time); {MOVING_WALL}."
        )


def check_rate(
    contact: Contact, rate: StateFn, t: float, x: np.ndarray, names: Sequence[str]
) -> None:
    """Raise unless `rate` is the gap's rate dh(q) qdot at (t, x): at each unit
    velocity it gives the gap's slope along that coordinate (central differences)."""
    slope = central_gradient(contact.h, contact.q_index, t, x)
    read = rate_row(rate, contact.v_index, t, x)
    if np.any(np.abs(read - slope) > SLOPE_RTOL * np.maximum(1.0, np.abs(slope))):
        raise FmibridgeError(
            f"The velocity {contact.velocity!r} is not the rate of the gap "
            f"{contact.gap!r} (dh qdot): at unit velocities it gives {read.tolist()}, "
            f"the gap's slope over {[names[i] for i in contact.q_index]} is "
            f"{slope.tolist()} at t = {t!r}."
        )


def contact_of(system: HybridSystem) -> Contact:
    """Return the `Contact` of `system`, building it from a `UnilateralConstraint`.

    A `UnilateralConstraint` whose gap and velocity are states of a vector field
    describes a 1-DOF contact h = x[gap], hdot = x[velocity]. The force map is the
    flow's (`ForcedVectorField.force_function`) if it has one; otherwise lam
    enters as an acceleration (unit mass: `lam` is then a force per unit mass).

    A system without a constraint whose impact is a Model Exchange FMU's own
    event indicator gets the one `indicator_constraint` finds.

    Raises
    ------
    FmibridgeError
        If the system has no constraint (and none is found), or its gap or
        velocity is not a state of a vector field.
    """
    constraint = system.constraint
    if isinstance(constraint, Contact):
        return constraint
    names = system.state_names
    flow = system.mode(system.initial_mode).flow
    if constraint is None:
        return _contact_from(indicator_constraint(system), system)
    built = _BUILT.get(id(constraint))
    if built is not None and built[0] is flow and built[1] == names:
        return built[2]
    contact = _contact_from(constraint, system)
    if built is None:
        weakref.finalize(constraint, _BUILT.pop, id(constraint), None)
    _BUILT[id(constraint)] = (flow, names, contact)
    return contact


def _contact_from(constraint: UnilateralConstraint, system: HybridSystem) -> Contact:
    """Build the Contact of `constraint` in `system` (see `contact_of`)."""
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
    force: ForceFn | Function
    if isinstance(flow, ForcedVectorField):
        force = flow.force_function()
    else:
        unit = np.zeros(len(names))
        unit[j] = 1.0

        def along_velocity(t: float, x: np.ndarray, lam: float) -> np.ndarray:
            return np.asarray(flow.rhs(t, x), dtype=float) + lam * unit

        force = along_velocity

    geometry = Gap(
        lambda t, x: x[i], lambda t, x: np.ones(1), lambda t, x: np.zeros((1, 1))
    )
    labels = (constraint.gap, constraint.velocity)
    return build_contact(labels, constraint.restitution, geometry, ((i,), (j,)), force)


# Relative shift of a state that `indicator_constraint` probes the FMU with, and
# the relative round-off within which the responses must be exact (the gap and
# velocity are states: the indicator and der(gap) copy them).
STATE_PROBE = 1e-3
EXACT_RTOL = 1e-9
# The probe impact of `indicator_constraint`: just beyond the surface (m), moving
# into it at unit speed, so the FMU's own `when` fires and reinit shows -e.
BEYOND = -1e-9
ADAPTER_LINES = (
    '[constraint]\ngap = "<gap state>"\nvelocity = "<its velocity>"\n'
    "restitution = <number or parameter name>"
)


def indicator_constraint(system: HybridSystem) -> UnilateralConstraint:
    """Return the constraint of a system whose impact is an FMU's own event indicator.

    Found where the model allows it: the indicator must be a state of the FMU
    (the gap: it moves one for one with that state and no other), whose
    derivative is another state (the velocity), and the FMU must let its state
    be saved, so that one impact can be probed in its event mode: the ratio
    -v+ / v- of its own reset is the restitution (Newton's law, Or and Ames eq. 4).

    Raises
    ------
    FmibridgeError
        Naming the FMU and the adapter lines that declare the constraint, where
        it cannot be found.
    """
    found = [  # attributes of an FMU's indicator (`ModelExchangeFlow.event_indicator`)
        (edge.guard.fn.fmu_flow, edge.guard.fn.indicator_index)  # type: ignore[attr-defined]
        for mode in system.modes.values()
        for edge in mode.edges
        if hasattr(edge.guard.fn, "fmu_flow")
    ]
    if not found:
        raise FmibridgeError(
            f"HybridSystem `{system.name}` has no `constraint`; completion needs one "
            f"(a UnilateralConstraint on states, or a Contact; in an adapter file:\n"
            f"{ADAPTER_LINES})."
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
            f"{ADAPTER_LINES}"
        )
    e = _restitution(flow, t, x, gap, velocity)
    if e is None:
        raise FmibridgeError(
            f"{flow.path}: event indicator {index} is the gap {names[gap]!r} with "
            f"velocity {names[velocity]!r}, but the FMU cannot save its state, so "
            f"its restitution cannot be measured; declare it in an adapter file:\n"
            f'[constraint]\ngap = "{names[gap]}"\nvelocity = "{names[velocity]}"\n'
            f"restitution = <number or parameter name>"
        )
    return UnilateralConstraint(names[gap], names[velocity], e)


def _copied_state(value: Callable[[np.ndarray], float], x: np.ndarray) -> int | None:
    """Return j if value(x) == x[j] and moves one for one with x[j] only."""
    base = float(value(x))
    for j in range(x.size):
        if not math.isclose(base, x[j], rel_tol=EXACT_RTOL, abs_tol=1e-12):
            continue
        exact = True
        for k in range(x.size):
            y = x.copy()
            y[k] += STATE_PROBE * (1.0 + abs(x[k]))
            moved = (float(value(y)) - base) - (y[k] - x[k]) * (k == j)
            exact = exact and abs(moved) <= EXACT_RTOL * (1.0 + abs(x[k]))
        if exact:
            return j
    return None


def _restitution(flow, t: float, x: np.ndarray, gap: int, velocity: int):
    """Return -v+ / v- of the FMU's own reset at a probe impact, or None if the FMU
    cannot save and restore its state around it."""
    archive = flow.archive
    if not archive.capability("ModelExchange", "canGetAndSetFMUstate"):
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
        instance.forget_time()
    e = float(after[velocity])  # -v+ / v- with v- = -1
    return e if 0.0 <= e <= 1.0 else None


def flow_start(flow) -> tuple[float, np.ndarray, tuple[str, ...]]:
    """Where a flow starts, as the start checks read it: its time (an FMU's, or 0
    for a coupled system, which starts its components there), x0 and state names."""
    x0 = np.array(flow.x0, dtype=float)
    return float(getattr(flow, "t0", 0.0)), x0, tuple(flow.state_names)


def state_coordinate(flow: Flow, coordinate: str) -> tuple[int, int]:
    """Return the indices (q, qdot) of the state `coordinate` and of the state
    that is its derivative (der(q) = qdot, found on the FMU's derivatives).

    Raises
    ------
    FmibridgeError
        Naming the FMU and the coordinate when it is not a state, the flow has
        no derivatives (Co-Simulation), or no state is its derivative.
    """
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


PROBE_STEP = 1e-6  # s; a Co-Simulation probe step: O(PROBE_STEP) truncation against
# round-off ~1e-16 |qdot| / PROBE_STEP in the difference quotient of the velocity


def fmu_contact(
    flow: ModelExchangeFlow | CoSimulationFlow,
    gap: str,
    velocity: str,
    restitution: float,
    *,
    force_input: str = "lam",
    coordinate: str | None = None,
) -> Contact:
    """Return the Contact of a mechanical FMU, from its outputs and force input.

    h(q) is the output (or state) `gap`; dh(q) is read off the output
    `velocity` (dh qdot, linear in qdot) at unit velocities (`Gap.of_rate`);
    q, qdot and the force map are those of `fmu_force`.

    Raises
    ------
    FmibridgeError
        Naming the FMU and the variable when the FMU lacks one, or when its
        states cannot be split into q and qdot; naming the gap when it moves
        with a state other than q or (Model Exchange) with time, or the
        velocity is not its rate (checked at the FMU's start, `build_contact`).
    """
    known = set(flow.state_names) | set(flow.output_names)
    for role, name in (("gap", gap), ("velocity", velocity)):
        if name not in known:
            raise FmibridgeError(
                f"{flow.path}: constraint {role} {name!r} is not a state or output; "
                f"the FMU has {sorted(known)}."
            )
    coordinates, force = fmu_force(flow, force_input, coordinate)

    def variable(name: str) -> StateFn:
        return lambda t, x: flow.variables(t, x)[name]

    geometry = Gap.of_rate(variable(gap), variable(velocity), coordinates[1])
    return build_contact(
        (gap, velocity),
        restitution,
        geometry,
        coordinates,
        force,
        start=flow_start(flow),
        probe_time=isinstance(flow, VectorField),
    )


def fmu_force(
    flow: ModelExchangeFlow | CoSimulationFlow,
    force_input: str = "lam",
    coordinate: str | None = None,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ForceFn]:
    """Return ((q_index, v_index), force map) of a mechanical FMU's force input.

    The FMU's states are [q, qdot] (two halves, as `der(q) = qdot` exports
    them), or, with `coordinate`, q is that one state and qdot its derivative
    (`state_coordinate`, Model Exchange), and the other states ride along.
    The force map is the FMU's response to its generalized constraint-force
    input `force_input`, which acts along dh^T: two evaluations give the affine
    map from lam to the acceleration (Or and Ames, eqs. 5-7). Model Exchange
    evaluates the derivatives; Co-Simulation, which has none, takes qddot from
    a probe step of PROBE_STEP with the input held (exact for constant
    acceleration, O(step) otherwise), while qdot' = qdot holds by the layout.

    Raises
    ------
    FmibridgeError
        Naming the FMU and the input when it has none, or when its states
        cannot be split into q and qdot.
    """
    from ..flows.fmu import ModelExchangeFlow  # noqa: F811 - the FMU layer, on first use

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
        q_index = tuple(range(n_states // 2))
        v_index = tuple(range(n_states // 2, n_states))
    else:
        i, j = state_coordinate(flow, coordinate)
        q_index, v_index = (i,), (j,)
    v = list(v_index)

    if isinstance(flow, ModelExchangeFlow):

        def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
            return flow.rhs_with(t, x, force_input, lam)
    else:

        def force_map(t: float, x: np.ndarray, lam: float) -> np.ndarray:
            probe = flow.advance_with(t, x, PROBE_STEP, force_input, lam)
            return np.concatenate([x[v], (probe[v] - x[v]) / PROBE_STEP])

    return (q_index, v_index), force_map
