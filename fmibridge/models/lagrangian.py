"""Simple hybrid Lagrangians (Q, L, h) described natively, and their hybrid systems.

A `LagrangianSystem` holds M(q), the bias C(q, qdot) qdot + N(q) (minus any
applied force, which may depend on t), the unilateral constraint h(q) with its
gradient and Hessian, and the restitution e. `to_hybrid` turns it into a
`HybridSystem` with state [q, qdot], one mode "free" whose edge "impact" applies
the frictionless impact law (4), and a `Contact` that completion uses. With
``compiled=True`` numba compiles M, the bias, h, dh and H (`_lagrangian_kernels`),
so the steps between impacts and Completion's constrained phases run compiled.

References
----------
Or and Ames, Def. 2, eqs. (1)-(8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core.errors import FmibridgeError
from ..core.system import Edge, Guard, HybridSystem, Mode
from ..flows.base import ForcedVectorField
from ..flows.compiled import CompiledFlow, compiled_as
from ..methods.contact import BoundsFn, Contact

Vector = np.ndarray
FREE = "free"
# Mass matrices up to this size are solved by `eliminate`, compiled and in
# Python alike (the same operations in the same order, so both paths agree bit
# for bit); for a few coordinates it costs less than a call of LAPACK.
SMALL = 4


def eliminate(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return x with a x = b by Gaussian elimination with partial pivoting.

    A singular `a` gives inf or nan (the run then stops on non-finite states).
    """
    n = b.shape[0]
    m, x = a.copy(), b.copy()
    for k in range(n):
        pivot = k
        for i in range(k + 1, n):
            if abs(m[i, k]) > abs(m[pivot, k]):
                pivot = i
        for j in range(n):
            m[k, j], m[pivot, j] = m[pivot, j], m[k, j]
        x[k], x[pivot] = x[pivot], x[k]
        for i in range(k + 1, n):
            factor = m[i, k] / m[k, k]
            for j in range(k + 1, n):
                m[i, j] -= factor * m[k, j]
            x[i] -= factor * x[k]
    for i in range(n - 1, -1, -1):
        total = x[i]
        for j in range(i + 1, n):
            total -= m[i, j] * x[j]
        x[i] = total / m[i, i]
    return x


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return x with a x = b: `eliminate` up to SMALL unknowns, else LAPACK."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if b.shape[0] <= SMALL:
        with np.errstate(divide="ignore", invalid="ignore"):
            return eliminate(a, b)
    return np.linalg.solve(a, b)


@dataclass(frozen=True)
class LagrangianSystem:
    """A simple hybrid Lagrangian L = 1/2 qdot^T M qdot - V(q) with h(q) >= 0.

    Parameters
    ----------
    coordinates : sequence of str
        Names of q; the velocities are named `<name>_dot`.
    mass_matrix : callable
        M(q) -> (n, n) symmetric positive definite.
    bias : callable
        bias(t, q, qdot) -> (n,): C(q, qdot) qdot + N(q) minus applied forces, so
        that M qddot + bias = dh^T lam (eq. 5).
    gap, gap_gradient, gap_hessian : callable
        h(q), dh(q) (n,) and H(q) (n, n).
    restitution : float
        e in [0, 1].
    bounds : callable, optional
        (t, x_star, eps_q', eps_v') -> ZenoBounds, conservative bounds over V for
        the reliable truncation conditions (Def. 7).
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
        return self.coordinates + tuple(f"{c}_dot" for c in self.coordinates)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (q, qdot) from the state x = [q, qdot]."""
        return x[: self.n], x[self.n :]

    def acceleration(self, t: float, q: Vector, v: Vector, lam: float = 0.0) -> Vector:
        """Return qddot = M^-1 (dh^T lam - bias), eqs. (3) and (5)."""
        force = np.asarray(self.gap_gradient(q), dtype=float) * lam
        return solve(self.mass_matrix(q), force - self.bias(t, q, v))

    def hddot(self, t: float, q: Vector, v: Vector) -> float:
        """Return hddot along the free flow, eq. (8)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        return float(v @ self.gap_hessian(q) @ v + dh @ self.acceleration(t, q, v))

    def lam(self, t: float, q: Vector, v: Vector) -> float:
        """Return the contact force of the constrained motion, eq. (6)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        return -self.hddot(t, q, v) / float(
            dh @ solve(self.mass_matrix(q), dh)
        )

    def impact(self, q: Vector, v: Vector) -> Vector:
        """Return qdot+ of the frictionless impact law, eq. (4)."""
        dh = np.asarray(self.gap_gradient(q), dtype=float)
        direction = solve(self.mass_matrix(q), dh)
        return v - (1.0 + self.restitution) * (dh @ v) / (dh @ direction) * direction

    @cached_property
    def compiled_primitives(self) -> dict[str, Callable]:
        """The primitives of the state x = [q, qdot] compiled by numba, once per
        system: "rhs" f(t, x), "force" (t, x, lam), "gap" h(t, x), "gradient"
        dh(t, x) and "hessian" H(t, x) (`_lagrangian_kernels.bind`).

        Raises
        ------
        FmibridgeError
            Naming the function numba cannot compile, and why.
        """
        from . import _lagrangian_kernels as kernels

        functions = {
            name: compiled_as(
                getattr(self, name), signature, f"`{name}` of `{self.name}`"
            )
            for name, signature in kernels.SIGNATURES_Q.items()
        }
        return kernels.bind(functions, self.n)


class LagrangianFlow(ForcedVectorField):
    """The Euler-Lagrange vector field (3), with the contact force of (5) as input."""

    def __init__(self, system: LagrangianSystem) -> None:
        self.system = system
        self.state_names = system.state_names

    def rhs_with_force(self, t: float, x: np.ndarray, lam: float) -> np.ndarray:
        """Return (qdot, qddot) with the contact force lam (Or and Ames, eq. 5)."""
        q, v = self.system.split(x)
        return np.concatenate([v, self.system.acceleration(t, q, v, lam)])

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return the states and the gap h(q) at (t, x)."""
        values = super().variables(t, x)
        values["h"] = float(self.system.gap(self.system.split(x)[0]))
        return values

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = lagrangian:NAME``."""
        return {"flow": f"lagrangian:{self.system.name}"}


class CompiledLagrangianFlow(CompiledFlow, ForcedVectorField):
    """The vector field of `LagrangianFlow`, compiled (`compiled_primitives`)."""

    def __init__(self, system: LagrangianSystem) -> None:
        primitives = system.compiled_primitives
        super().__init__(primitives["rhs"], system.state_names, name=system.name)
        self.system, self._force = system, primitives["force"]

    def rhs_with_force(self, t: float, x: np.ndarray, lam: float) -> np.ndarray:
        """Return (qdot, qddot) with the contact force lam, compiled."""
        return self._force(float(t), np.ascontiguousarray(x, dtype=float), float(lam))

    variables = LagrangianFlow.variables

    def describe(self) -> dict[str, str]:
        """Return the provenance entries ``flow = lagrangian:NAME, kernels =
        compiled``."""
        return {"flow": f"lagrangian:{self.system.name}", "kernels": "compiled"}


def to_hybrid(
    system: LagrangianSystem,
    q0: Sequence[float],
    v0: Sequence[float],
    *,
    t0: float = 0.0,
    compiled: bool = False,
) -> HybridSystem:
    """Return the simple Lagrangian hybrid system H_L of `system` (Sec. II-B).

    State [q, qdot]; one mode "free" with the edge "impact": guard h(q) falling,
    reset by the impact law (4). The constraint is a `Contact` carrying h, dh, H,
    the force map and the bounds, for completion. With `compiled`, numba
    compiles the model's functions (`LagrangianSystem.compiled_primitives`, a few
    seconds once per system and process), so the steps between impacts and
    `Completion`'s constrained phases run compiled; the results equal the
    Python path's to round-off.

    Raises
    ------
    FmibridgeError
        With `compiled`, naming a function numba cannot compile.

    Examples
    --------
    >>> from fmibridge.lagrangian_models import sine_ball
    >>> to_hybrid(sine_ball(), [0.0, 2.0], [1.5, 0.0]).state_names
    ('x', 'y', 'x_dot', 'y_dot')
    """
    n = system.n
    if compiled:
        flow = CompiledLagrangianFlow(system)
        primitives = system.compiled_primitives
    else:
        flow = LagrangianFlow(system)
        primitives = {**_python_primitives(system), "force": flow.rhs_with_force}

    def impact(t: float, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:n], system.impact(x[:n], x[n:])])

    gap = primitives["gap"]
    contact = Contact(
        "h",
        "h_dot",
        system.restitution,
        gap_fn=gap,
        gradient_fn=primitives["gradient"],
        rhs_with_force=primitives["force"],
        q_index=tuple(range(n)),
        v_index=tuple(range(n, 2 * n)),
        hessian_fn=primitives["hessian"],
        bounds=system.bounds,
    )
    edge = Edge(Guard(gap, "falling", name="impact"), FREE, impact, name="impact")
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


def _python_primitives(system: LagrangianSystem) -> dict:
    """The gap, gradient and Hessian of `compiled_primitives`, in Python."""
    n = system.n

    def gap(t: float, x: np.ndarray) -> float:
        return float(system.gap(x[:n]))

    return {
        "gap": gap,
        "gradient": lambda t, x: system.gap_gradient(x[:n]),
        "hessian": lambda t, x: system.gap_hessian(x[:n]),
    }
