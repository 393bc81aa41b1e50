"""A one-FMU [constraint] whose gap is an expression: h(q), dh(q) and H(q).

A single-FMU adapter may give the gap of its [constraint] as an expression over
the FMU's states, outputs, parameters and t (``gap = "x_max - x"``), as coupled
adapters do (``gap = "ball.h - table.x"``), and its velocity as a variable or an
expression. Completion needs the gap h(q) of the configuration q (the first
half of the states, as `contact.fmu_contact` splits them), its gradient dh(q)
and, for the velocity term of the acceleration of h (Or and Ames, eq. 8), its
Hessian H(q):

- **affine in q** (numbers, parameters and the states of q combined by +, -,
  unary minus, and * or / by a part that reads no state): dh is read off the
  syntax tree, exactly (the coefficient of each state), and H = 0;
- **otherwise** (a function call, a power, an output of the FMU, t): dh by
  central differences of step FD_STEP (1 + abs(q_j)), H by second central
  differences of step HESSIAN_FD_STEP (1 + abs(q_j)).

The contact force acts through the FMU's constraint-force input, whose force
map `contact.fmu_contact` gives (its response along dh^T, Or and Ames eqs.
5-7). The [constraint] velocity must be the gap's rate dh(q) qdot: it is
checked at the start against dh at each unit velocity.

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
eqs. (4)-(8), Sec. V.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import cast

import numpy as np

from ..core.errors import FmibridgeError
from ..methods.contact import Contact, fmu_contact, start_time, state_coordinate
from ..methods.projection import projected_contact
from .adapter_tables import projection_mass, state_function
from .expressions import Expression

# Central differences of a first derivative: the step that balances truncation
# (~ step^2) and round-off (~ eps / step), eps^(1/3) (Nocedal and Wright, Sec. 8.1).
FD_STEP = float(np.finfo(float).eps ** (1 / 3))
# The same balance for a second derivative (~ step^2 against eps / step^2): eps^(1/4).
HESSIAN_FD_STEP = float(np.finfo(float).eps ** (1 / 4))
# How far the velocity at a unit velocity may be from dh: far above the ~1e-10
# error of central differences of order-one gaps, far below a wrong coefficient.
VELOCITY_RTOL = 1e-6

ScalarFn = Callable[[float, np.ndarray], float]


def affine_coefficients(
    expr: Expression, variables: set[str], constants: Mapping[str, float]
) -> dict[str, float] | None:
    """Return {variable: coefficient} if `expr` is affine in `variables`, else None.

    The constants are numbers and the names in `constants` (an FMU's
    parameters); an expression that reads any other name, or calls a function,
    is not affine here.

    Examples
    --------
    >>> expr = Expression.parse("x_max - 2 * x / 4", {"x", "x_max"})
    >>> affine_coefficients(expr, {"x"}, {"x_max": 1.5})
    {'x': -0.5}
    """
    found = _affine(expr.tree.body, variables, constants)
    return None if found is None else found[0]


def _affine(node: ast.AST, variables, constants) -> tuple[dict, float] | None:
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


def gap_contact(
    flow,
    gap: Expression,
    velocity: Expression,
    *,
    restitution: float,
    force_input: str,
    parameters: Mapping[str, float],
    where: str,
) -> Contact:
    """Return the Contact of an FMU whose gap (and velocity) are expressions.

    Parameters
    ----------
    flow : ModelExchangeFlow or CoSimulationFlow
        The FMU, with states [q, qdot] and a constraint-force input.
    gap, velocity : Expression
        h(q), and its rate dh(q) qdot, over the FMU's variables, its
        `parameters` and t.
    restitution : float
        Newton's coefficient e in [0, 1].
    force_input : str
        The FMU's generalized constraint-force input (along dh^T).
    parameters : mapping
        The FMU's parameter values: constants of the expressions.
    where : str
        The adapter file, named (with the key) by an expression that fails at
        run time.

    Raises
    ------
    FmibridgeError
        A gap that reads a velocity, a velocity that is not dh qdot, and what
        `contact.fmu_contact` refuses (no force input, states that are not
        [q, qdot]).

    References
    ----------
    Or and Ames, eqs. (4)-(8).
    """
    names = flow.state_names
    # the FMU's force map and its [q, qdot], checked by fmu_contact; its gap and
    # gradient (of two of the states, here) are replaced by the expression's
    forced = fmu_contact(
        flow, names[0], names[-1], restitution, force_input=force_input
    )
    q_names = [names[i] for i in forced.q_index]
    read = sorted(gap.names & {names[i] for i in forced.v_index})
    if read:
        raise FmibridgeError(
            f"The gap {gap.source!r} reads the velocities {read}; it must be a "
            f"function of the configuration {q_names} (and t)."
        )
    h = state_function(gap, flow, parameters, f"{where}: [constraint.gap]")
    coefficients = affine_coefficients(gap, set(q_names), parameters)
    gradient: Callable[[float, np.ndarray], np.ndarray]
    hessian: Callable[[float, np.ndarray], np.ndarray]
    if coefficients is None:
        q_index = forced.q_index
        gradient = functools.partial(_central_gradient, h, q_index)
        hessian = functools.partial(_central_hessian, h, q_index)
    else:
        row = np.array([coefficients.get(name, 0.0) for name in q_names])
        zero = np.zeros((row.size, row.size))

        def gradient(t: float, x: np.ndarray) -> np.ndarray:
            return row.copy()

        def hessian(t: float, x: np.ndarray) -> np.ndarray:
            return zero.copy()

    contact = dataclasses.replace(
        forced,
        gap=gap.source,
        velocity=velocity.source,
        gap_fn=h,
        gradient_fn=gradient,
        hessian_fn=hessian,
    )
    t0, x0 = float(flow.t0), np.array(flow.x0, dtype=float)
    contact.check(t0, x0)
    rate = state_function(velocity, flow, parameters, f"{where}: [constraint.velocity]")
    _check_velocity(contact, rate, (t0, x0), q_names)
    return contact


def _central_gradient(h: ScalarFn, q_index, t: float, x: np.ndarray) -> np.ndarray:
    """dh/dq by central differences of step FD_STEP (1 + abs(q_j))."""
    probe, row = np.array(x, dtype=float), np.empty(len(q_index))
    for k, j in enumerate(q_index):
        d = FD_STEP * (1.0 + abs(probe[j]))
        probe[j] = x[j] + d
        ahead = h(t, probe)
        probe[j] = x[j] - d
        row[k] = (ahead - h(t, probe)) / (2.0 * d)
        probe[j] = x[j]
    return row


def _central_hessian(h: ScalarFn, q_index, t: float, x: np.ndarray) -> np.ndarray:
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


def _check_velocity(contact: Contact, rate: ScalarFn, start, q_names) -> None:
    """Raise unless the velocity at each unit velocity is that entry of dh at the
    start (t0, x0): the velocity is dh qdot."""
    t0, x0 = start
    dh, unit = contact.dh(t0, x0), np.array(x0, dtype=float)
    unit[list(contact.v_index)] = 0.0
    for k, i in enumerate(contact.v_index):
        unit[i] = 1.0
        value = rate(t0, unit)
        unit[i] = 0.0
        if abs(value - dh[k]) > VELOCITY_RTOL * max(1.0, abs(dh[k])):
            raise FmibridgeError(
                f"The velocity {contact.velocity!r} must be the gap's rate "
                f"dh qdot, dh = {dh.tolist()} over {q_names} for the gap "
                f"{contact.gap!r} at the start; at a unit velocity along "
                f"{q_names[k]!r} it gives {value!r}, not {float(dh[k])!r}."
            )


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
    """The [constraint] `table` completed by projection (`projected_gap_contact`)
    along its `coordinate`, or without one the state the gap moves
    (`inferred_coordinate`), with its `mass` (`projection_mass`, which names
    what is `lacking`); None after recording a problem."""
    coordinate, why = table.get("coordinate"), ""
    if coordinate is None:
        coordinate, why = problems.check(
            "constraint.gap", inferred_coordinate, flow, gap, parameters, where
        ) or (None, "")
    mass = projection_mass(
        table, gap.source, lacking, parameters, problems, coordinate, why
    )
    if mass is None:
        return None
    return problems.check(
        "constraint",
        lambda: projected_gap_contact(
            flow,
            gap,
            velocity,
            restitution=restitution,
            coordinate=coordinate,
            mass=mass,
            parameters=parameters,
            where=where,
        ),
    )


def inferred_coordinate(
    flow, gap: Expression, parameters: Mapping[str, float], where: str
) -> tuple[str | None, str]:
    """The state the gap is measured along, read off its gradient in the states
    at the start (central differences, `_central_gradient`): (its name, "")
    where the gap moves exactly one state, else (None, why not)."""
    h = state_function(gap, flow, parameters, f"{where}: [constraint.gap]")
    t0, x0 = start_time(flow), np.array(flow.x0, dtype=float)
    row = np.abs(_central_gradient(h, range(len(x0)), t0, x0))
    top = float(row.max(initial=0.0))
    moved = [
        n for n, d in zip(flow.state_names, row, strict=True) if d > VELOCITY_RTOL * top
    ]
    if top > VELOCITY_RTOL and len(moved) == 1:
        return moved[0], ""
    if not top > VELOCITY_RTOL:
        return None, f"the gap {gap.source!r} moves with no state at the start"
    return None, f"the gap {gap.source!r} moves with the states {moved} at the start"


def projected_gap_contact(
    flow,
    gap: Expression,
    velocity: Expression,
    *,
    restitution: float,
    coordinate: str,
    mass: float = 1.0,
    parameters: Mapping[str, float],
    where: str,
) -> Contact:
    """Return the contact of an FMU without a force input: completion by
    projection (`methods.projection`) along the state `coordinate`.

    Parameters
    ----------
    flow : ModelExchangeFlow or CoupledModelExchange
        The FMU, or FMUs coupled in Model Exchange.
    gap, velocity : Expression
        h, a function of the coordinate (and t), and its rate dh qdot.
    restitution : float
        Newton's coefficient e in [0, 1].
    coordinate : str
        The state q the gap is measured along; every other state rides along.
    mass : float, optional
        The effective mass along q; it scales lam only (`projected_contact`).
    parameters : mapping
        The FMU's parameter values: constants of the expressions.
    where : str
        The adapter file, for expressions that fail at run time.

    Raises
    ------
    FmibridgeError
        A coordinate that is not a state or has no velocity state, a gap that
        does not move with it or reads its velocity, a velocity that is not
        dh qdot.

    References
    ----------
    Or and Ames, eqs. (4)-(8), Sec. V.
    """
    names = flow.state_names
    i, j = state_coordinate(flow, coordinate)
    if names[j] in gap.names:
        raise FmibridgeError(
            f"The gap {gap.source!r} reads the velocity {names[j]!r}; it must be a "
            f"function of the configuration (and t)."
        )
    h = state_function(gap, flow, parameters, f"{where}: [constraint.gap]")
    coefficients = affine_coefficients(gap, {coordinate}, parameters)
    gradient: Callable[[float, np.ndarray], np.ndarray]
    hessian: Callable[[float, np.ndarray], np.ndarray]
    if coefficients is None:
        gradient = functools.partial(_central_gradient, h, (i,))
        hessian = functools.partial(_central_hessian, h, (i,))
    else:
        row = np.array([coefficients.get(coordinate, 0.0)])

        def gradient(t: float, x: np.ndarray) -> np.ndarray:
            return row.copy()

        def hessian(t: float, x: np.ndarray) -> np.ndarray:
            return np.zeros((1, 1))

    t0, x0 = start_time(flow), np.array(flow.x0, dtype=float)
    slope = float(gradient(t0, x0)[0])
    if not abs(slope) > VELOCITY_RTOL:
        raise FmibridgeError(
            f"The gap {gap.source!r} does not move with the coordinate "
            f"{coordinate!r} at the start (dh/d{coordinate} = {slope!r}); name the "
            f"state the gap is measured along."
        )
    contact = projected_contact(
        flow,
        gap.source,
        velocity.source,
        restitution,
        coordinate=coordinate,
        mass=mass,
        gap_fn=h,
        gradient_fn=gradient,
        hessian_fn=hessian,
    )
    contact.check(t0, x0)
    rate = state_function(velocity, flow, parameters, f"{where}: [constraint.velocity]")
    _check_velocity(contact, rate, (t0, x0), [coordinate])
    return contact
