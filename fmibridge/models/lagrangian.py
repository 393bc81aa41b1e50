"""Simple hybrid Lagrangians (Q, L, h) described natively, and their hybrid systems.

`to_hybrid` turns a `LagrangianSystem` into a `HybridSystem` with state
[q, qdot], one mode "free" whose edge "impact" applies the impact law (4), and a
`Contact` for completion; its vector field is `_lagrangian.EulerLagrange`.

References
----------
Or and Ames, Def. 2, eqs. (1)-(8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..core._functions import Function, PythonVector
from ..core.errors import FmibridgeError
from ..core.guards import Edge, Guard
from ..core.system import HybridSystem, Mode
from ..flows.base import ForcedVectorField
from ..flows.compiled import Q_KINDS, c_function, compiled
from ..methods.contact import BoundsFn, Contact
from ._lagrangian import SMALL, EulerLagrange, ForceMap, OfState, solve

__all__ = [
    "SMALL",
    "LagrangianFlow",
    "LagrangianSystem",
    "Primitives",
    "solve",
    "to_hybrid",
]

Vector = np.ndarray
FREE = "free"


class Primitives(NamedTuple):
    """A LagrangianSystem's functions of the state x = [q, qdot], as Functions:
    dx/dt of eq. (3), of eq. (5) with the contact force lam (called as
    force(t, x, lam)), and h, dh and H at the configuration in x."""

    rhs: Function
    force: ForceMap
    gap: Function
    gradient: Function
    hessian: Function


@dataclass(frozen=True)
class LagrangianSystem:
    """A simple hybrid Lagrangian L = 1/2 qdot^T M qdot - V(q) with h(q) >= 0.

    Parameters
    ----------
    coordinates : sequence of str
        Names of q; the velocities are named `<name>_dot`.
    mass_matrix : callable
        M(q) -> (n, n), symmetric positive definite.
    bias : callable
        bias(t, q, qdot) -> (n,): C(q, qdot) qdot + N(q) minus applied forces, so
        that M qddot + bias = dh^T lam (eq. 5).
    gap, gap_gradient, gap_hessian : callable
        h(q), dh(q) (n,) and H(q) (n, n).
    restitution : float
        e in [0, 1].
    bounds : callable, optional
        (t, x_star, eps_q', eps_v') -> ZenoBounds over V for the reliable
        truncation conditions (Def. 7).
    parameters : mapping, optional
        Recorded in provenance.
    name : str

    References
    ----------
    Or and Ames, Def. 2 and eqs. (1)-(3), (5).
    """

    coordinates: Sequence[str]
    mass_matrix: Callable[[Vector], np.ndarray]
    bias: Callable[[float, Vector, Vector], Vector]
    gap: Callable[[Vector], float]
    gap_gradient: Callable[[Vector], Vector]
    gap_hessian: Callable[[Vector], np.ndarray]
    restitution: float
    bounds: BoundsFn | None = None
    parameters: dict = field(default_factory=dict)
    name: str = "lagrangian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "coordinates", tuple(self.coordinates))
        if not self.coordinates or len(set(self.coordinates)) != len(self.coordinates):
            raise FmibridgeError(
                f"LagrangianSystem `{self.name}`: `coordinates` must be unique and "
                f"non-empty, got {list(self.coordinates)}."
            )
        if not 0.0 <= self.restitution <= 1.0:
            raise FmibridgeError(
                f"LagrangianSystem `{self.name}`: `restitution` must be in [0, 1], "
                f"got {self.restitution!r}."
            )

    @property
    def n(self) -> int:
        """The number of generalized coordinates q."""
        return len(self.coordinates)

    @property
    def state_names(self) -> tuple[str, ...]:
        """The state names: the coordinates q, then their rates q_dot."""
        return (*self.coordinates, *(f"{c}_dot" for c in self.coordinates))

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (q, qdot) from the state x = [q, qdot]."""
        return x[: self.n], x[self.n :]

    def acceleration(self, t: float, q: Vector, v: Vector, lam: float = 0.0) -> Vector:
        """Return qddot = M^-1 (dh^T lam - bias), eqs. (3) and (5)."""
        x = np.concatenate([np.asarray(q, dtype=float), np.asarray(v, dtype=float)])
        return self.python_primitives.force(t, x, lam)[self.n :]

    def hddot(self, t: float, q: Vector, v: Vector) -> float:
        """Return hddot along the free flow, eq. (8)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        return float(v @ self.gap_hessian(q) @ v + dh @ self.acceleration(t, q, v))

    def lam(self, t: float, q: Vector, v: Vector) -> float:
        """Return the contact force of the constrained motion, eq. (6)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        return -self.hddot(t, q, v) / float(dh @ solve(self.mass_matrix(q), dh))

    def impact(self, q: Vector, v: Vector) -> Vector:
        """Return qdot+ of the frictionless impact law, eq. (4)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        direction = solve(self.mass_matrix(q), dh)
        return v - (1.0 + self.restitution) * (dh @ v) / (dh @ direction) * direction

    @cached_property
    def python_primitives(self) -> Primitives:
        """The `Primitives` on the model's functions called back in Python."""
        n, bias, name = self.n, self.bias, self.name
        sizes = {
            "mass_matrix": n * n,
            "gap": 1,
            "gap_gradient": n,
            "gap_hessian": n * n,
        }
        of_q = {
            kind: PythonVector(
                _of_q(getattr(self, kind)), n, n_out, f"`{kind}` of `{name}`"
            )
            for kind, n_out in sizes.items()
        }
        of_x = PythonVector(
            lambda t, x: bias(t, x[:n], x[n:]), 2 * n, n, f"`bias` of `{name}`"
        )
        return self._primitives(bias=of_x, **of_q)

    @cached_property
    def compiled_primitives(self) -> Primitives:
        """The `Primitives` on the model's functions compiled by numba, once.

        Raises
        ------
        FmibridgeError
            Naming the function numba cannot compile, and why.
        """
        functions = {
            kind: compiled(getattr(self, kind), f"`{kind}` of `{self.name}`", kind=kind)
            for kind in Q_KINDS
        }
        return self._primitives(
            **{kind: c_function(fn, kind, self.n) for kind, fn in functions.items()}
        )

    def _primitives(self, **of_q: Function) -> Primitives:
        """The `Primitives` on the model's functions, by `Q_KINDS` name."""
        n, mass, bias = self.n, of_q["mass_matrix"], of_q["bias"]
        gradient = of_q["gap_gradient"]
        field = f"the Euler-Lagrange field of `{self.name}`"
        return Primitives(
            rhs=EulerLagrange(mass, bias, gradient, False, field),
            force=ForceMap(mass, bias, gradient, f"the force map of `{self.name}`"),
            gap=OfState(of_q["gap"], 2 * n, ()),
            gradient=OfState(gradient, 2 * n, (n,)),
            hessian=OfState(of_q["gap_hessian"], 2 * n, (n, n)),
        )


def _of_q(fn: Callable) -> Callable[[float, Vector], object]:
    """fn(q) as a function of (t, q)."""
    return lambda t, q: fn(q)


class LagrangianFlow(ForcedVectorField):
    """The Euler-Lagrange vector field (3), with the contact force of (5) as input."""

    def __init__(self, system: LagrangianSystem, *, compiled: bool = False) -> None:
        self.system, self.compiled = system, compiled
        self.state_names = system.state_names
        self.primitives = (
            system.compiled_primitives if compiled else system.python_primitives
        )

    def rhs_function(self) -> Function:
        """Return dx/dt as the loops call it (`EulerLagrange`)."""
        return self.primitives.rhs

    def rhs_with_force(self, t: float, x: np.ndarray, lam: float) -> np.ndarray:
        """Return (qdot, qddot) with the contact force lam (Or and Ames, eq. 5)."""
        return self.primitives.force(t, x, lam)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return the states and the gap h(q) at (t, x)."""
        values = super().variables(t, x)
        values["h"] = float(self.system.gap(self.system.split(x)[0]))
        return values

    def describe(self) -> dict[str, str]:
        """Return the provenance entries ``flow`` (and ``kernels``)."""
        kernels = {"kernels": "compiled"} if self.compiled else {}
        return {"flow": f"lagrangian:{self.system.name}", **kernels}


def to_hybrid(
    system: LagrangianSystem,
    q0: Sequence[float],
    v0: Sequence[float],
    *,
    t0: float = 0.0,
    compiled: bool = False,
) -> HybridSystem:
    """Return the simple Lagrangian hybrid system H_L of `system` (Sec. II-B).

    State [q, qdot] from q0, v0 at t0. With `compiled`, numba compiles the
    model's functions (once per system and process); the results equal the
    Python model's to round-off.

    Raises
    ------
    FmibridgeError
        With `compiled`, naming a function numba cannot compile.
    """
    n = system.n
    flow = LagrangianFlow(system, compiled=compiled)
    primitives = flow.primitives

    def impact(t: float, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:n], system.impact(x[:n], x[n:])])

    contact = Contact(
        "h",
        "h_dot",
        system.restitution,
        gap_fn=primitives.gap,
        gradient_fn=primitives.gradient,
        rhs_with_force=primitives.force,
        q_index=tuple(range(n)),
        v_index=tuple(range(n, 2 * n)),
        hessian_fn=primitives.hessian,
        bounds=system.bounds,
    )
    guard = Guard(primitives.gap, "falling", name="impact")
    edge = Edge(guard, FREE, impact, name="impact")
    x0 = np.concatenate([np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)])
    return HybridSystem(
        [Mode(FREE, flow, (edge,))],
        FREE,
        x0,
        t0=t0,
        parameters=dict(system.parameters),
        constraint=contact,
        name=system.name,
    )
