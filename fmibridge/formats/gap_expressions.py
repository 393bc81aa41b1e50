"""A one-FMU [constraint] whose gap is an expression: h(q), dh(q) and H(q).

The gap (and its velocity, dh(q) qdot) may be expressions over the FMU's
states, outputs and parameters, never the time t. Where h is affine in q, dh
is read off the syntax tree and H = 0; otherwise both come from central
differences. The contact is then that of the FMU's force input
(`contact.fmu_contact`) or of projection (`projection.projected_contact`), Or
and Ames, eqs. (4)-(8), Sec. V.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

from ..core.errors import FmibridgeError
from ..core.numbers import is_number
from ..flows.base import Flow
from ..methods.contact import (
    MOVING_WALL,
    SLOPE_RTOL,
    Contact,
    Coordinates,
    Gap,
    StateFn,
    central_gradient,
    flow_start,
    fmu_contact,
)
from ..methods.projection import projected_contact
from .adapter_tables import PROJECTION_HINT, state_function
from .expressions import Expression

# Second central differences: the step that balances truncation (~ step^2) and
# round-off (~ eps / step^2), eps^(1/4) (Nocedal and Wright, Sec. 8.1).
HESSIAN_FD_STEP = float(np.finfo(float).eps ** (1 / 4))


def affine_coefficients(
    expr: Expression, variables: set[str], constants: Mapping[str, float]
) -> dict[str, float] | None:
    """Return {variable: coefficient} if `expr` is affine in `variables`, else None.

    Numbers and the names in `constants` are constants; a call or another name is
    not affine.

    Examples
    --------
    >>> expr = Expression.parse("x_max - 2 * x / 4", {"x", "x_max"})
    >>> affine_coefficients(expr, {"x"}, {"x_max": 1.5})
    {'x': -0.5}
    """
    found = _affine(expr.tree.body, variables, constants)
    return None if found is None else found[0]


def _affine(
    node: ast.AST, variables: set[str], constants: Mapping[str, float]
) -> tuple[dict, float] | None:
    """(coefficients, constant term) of an affine node, or None."""
    if isinstance(node, ast.Constant):
        return {}, float(cast(float, node.value))  # `expressions` checked it
    if isinstance(node, ast.Name):
        if node.id in variables:
            return {node.id: 1.0}, 0.0
        return ({}, float(constants[node.id])) if node.id in constants else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        inner = _affine(node.operand, variables, constants)
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        return None if inner is None else _scaled(inner, sign)
    if not isinstance(node, ast.BinOp):
        return None
    left = _affine(node.left, variables, constants)
    right = _affine(node.right, variables, constants)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Add | ast.Sub):
        sign = 1.0 if isinstance(node.op, ast.Add) else -1.0
        keys = left[0].keys() | right[0].keys()
        terms = {k: left[0].get(k, 0.0) + sign * right[0].get(k, 0.0) for k in keys}
        return terms, left[1] + sign * right[1]
    if isinstance(node.op, ast.Mult) and not (left[0] and right[0]):
        return _scaled(right, left[1]) if not left[0] else _scaled(left, right[1])
    if isinstance(node.op, ast.Div) and not right[0] and right[1] != 0.0:
        return _scaled(left, 1.0 / right[1])
    return None


def _scaled(part: tuple[dict, float], factor: float) -> tuple[dict, float]:
    return {k: factor * c for k, c in part[0].items()}, factor * part[1]


# why the gap h(q) or its rate dh(q) qdot may not read t (Or and Ames, Def. 2)
READS_TIME = {
    "gap": "The gap {!r} reads the time t (a wall that moves); " + MOVING_WALL + ".",
    "velocity": "The velocity {!r} reads the time t, but it is the gap's rate dh(q) "
    "qdot, a function of the states alone (the gap is h(q), eqs. 4-8; dh is read "
    "off the velocity). Write the velocity without t, as dh(q) qdot over the "
    'states and parameters (for the gap "x_stop - x": "-v"); a wall that moves can '
    "be a body of the model.",
}


def parse_constraint(table: Mapping, known: set[str], problems) -> list:
    """Return the [constraint] gap and velocity as Expressions over `known`, each
    None after recording a problem (`READS_TIME`)."""
    return [
        problems.check(f"constraint.{key}", _parsed, key, table.get(key), known)
        for key in ("gap", "velocity")
    ]


def _parsed(key: str, source: object, known: set[str]) -> Expression:
    expr = Expression.parse(source, known)
    if "t" in expr.names:
        raise FmibridgeError(READS_TIME[key].format(expr.source))
    return expr


def gap_contact(
    flow,
    gap: Expression,
    velocity: Expression,
    restitution: float,
    force_input: str,
    parameters: Mapping[str, float],
    where: str,
    coordinate: str | None,
) -> Contact:
    """Return the Contact of an FMU whose gap h(q) and velocity dh(q) qdot are
    expressions (`parse_constraint`), through its constraint-force input `force_input`
    along the state `coordinate` (else the first half of the states are q); the
    expressions read `parameters`, a failure names `where` (Or and Ames,
    eqs. 4-8)."""
    geometry = functools.partial(expression_gap, flow, gap, velocity, parameters, where)
    labels = (gap.source, velocity.source)
    return fmu_contact(
        flow,
        *labels,
        restitution,
        force_input=force_input,
        coordinate=coordinate,
        geometry=geometry,
    )


def expression_gap(
    flow: Flow,
    gap: Expression,
    velocity: Expression,
    parameters: Mapping[str, float],
    where: str,
    coordinates: Coordinates,
) -> Gap:
    """The Gap of expressions over the flow's variables: dh and H exact where
    h is affine in q, else central differences."""
    names = flow.state_names
    q_index, q_names = coordinates[0], [names[i] for i in coordinates[0]]
    read = sorted(gap.names & {names[i] for i in coordinates[1]})
    if read:
        raise FmibridgeError(
            f"The gap {gap.source!r} reads the velocities {read}; it must be a "
            f"function of the configuration {q_names}."
        )
    h = state_function(gap, flow, parameters, f"{where}: [constraint.gap]")
    rate = state_function(velocity, flow, parameters, f"{where}: [constraint.velocity]")
    coefficients = affine_coefficients(gap, set(q_names), parameters)
    if coefficients is None:
        gradient = functools.partial(central_gradient, h, q_index)
        return Gap(h, gradient, functools.partial(_central_hessian, h, q_index), rate)
    row = np.array([coefficients.get(name, 0.0) for name in q_names])
    zero = np.zeros((row.size, row.size))
    return Gap(h, lambda t, x: row.copy(), lambda t, x: zero.copy(), rate)


def _central_hessian(
    h: StateFn, q_index: Sequence[int], t: float, x: np.ndarray
) -> np.ndarray:
    """d2h/dq2 by second central differences of step HESSIAN_FD_STEP (1 + abs(q_j))."""
    n = len(q_index)
    steps = [HESSIAN_FD_STEP * (1.0 + abs(x[j])) for j in q_index]

    def at(*moves: tuple[int, float]) -> float:
        probe = np.array(x, dtype=float)
        for k, sign in moves:
            probe[q_index[k]] += sign * steps[k]
        return h(t, probe)

    center, out = h(t, np.asarray(x, dtype=float)), np.empty((n, n))
    for a in range(n):
        out[a, a] = (at((a, 1.0)) - 2.0 * center + at((a, -1.0))) / steps[a] ** 2
        for b in range(a):
            corners = (
                at((a, 1.0), (b, 1.0))
                - at((a, 1.0), (b, -1.0))
                - at((a, -1.0), (b, 1.0))
                + at((a, -1.0), (b, -1.0))
            )
            out[a, b] = out[b, a] = corners / (4.0 * steps[a] * steps[b])
    return out


def projected_constraint(
    flow,
    gap: Expression,
    velocity: Expression,
    restitution: float,
    table,
    lacking: str,
    parameters: Mapping[str, float],
    problems,
    where: str,
) -> Contact | None:
    """The [constraint] `table` completed by projection along its `coordinate`
    (else the state the gap moves) with its `mass`; None after recording a problem."""
    coordinate, why = table.get("coordinate"), ""
    if coordinate is None:
        coordinate, why = problems.check(
            "constraint.gap", _inferred_coordinate, flow, gap, parameters, where
        ) or (None, "")
    if coordinate is None:
        found = f"{why}: " if why else ""
        problems.add(
            "constraint.gap",
            f"the gap expression {gap.source!r} needs a contact force, and {lacking}; "
            f"otherwise {found}{PROJECTION_HINT}",
        )
        return None
    mass = table.get("mass", 1.0)  # 1 without one: it scales lam only
    if isinstance(mass, str):
        mass = parameters.get(mass, mass)
    if not is_number(mass) or not mass > 0:
        problems.add(
            "constraint.mass",
            f"must be a positive number or the name of a parameter of the FMU "
            f"(the effective mass along the coordinate), got {table['mass']!r}.",
        )
        return None
    if not isinstance(coordinate, str):
        problems.add(
            "constraint.coordinate",
            f"must name the state the gap is measured along, got {coordinate!r}.",
        )
        return None
    geometry = functools.partial(expression_gap, flow, gap, velocity, parameters, where)
    kwargs = {"coordinate": coordinate, "geometry": geometry, "mass": float(mass)}
    labels = (gap.source, velocity.source)
    return problems.check(
        "constraint", projected_contact, flow, *labels, restitution, **kwargs
    )


def _inferred_coordinate(
    flow, gap: Expression, parameters: Mapping[str, float], where: str
) -> tuple[str | None, str]:
    """(the state the gap moves at the start, ""), else (None, why not)."""
    h = state_function(gap, flow, parameters, f"{where}: [constraint.gap]")
    t0, x0, _ = flow_start(flow)
    row = np.abs(central_gradient(h, range(len(x0)), t0, x0))
    top = float(row.max(initial=0.0))
    moved = [
        n for n, d in zip(flow.state_names, row, strict=True) if d > SLOPE_RTOL * top
    ]
    if not top > SLOPE_RTOL:
        return None, (
            f"the gap {gap.source!r} moves with no state at the start, so name "
            f"the coordinate"
        )
    if len(moved) == 1:
        return moved[0], ""
    return None, (
        f"the gap {gap.source!r} moves with the states {moved} at the start, "
        f"and completion by projection moves one coordinate (it refuses a gap "
        f"that also moves with another state; only the force-input route, the "
        f"input named above, acts on several coordinates), so write the gap over "
        f"one of them and name it"
    )
