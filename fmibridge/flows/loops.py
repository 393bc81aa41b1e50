"""Algebraic loops of a coupled system: found from direct feedthrough, solved each time.

Connections (output to input) and direct feedthrough (input to output of one
component) make the ports a directed graph; its strongly connected components
(Tarjan) in topological order are the evaluation order, and one of more than
one port is an algebraic loop, solved at every evaluation by fixed-point
iteration from the last solution, then Newton's method.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from ..core.errors import FmibridgeError

N = TypeVar("N", bound=Hashable)  # a node of a dependency graph
# Loop iterations stop once |G(u) - u| <= LOOP_RTOL * max(1, |u|) (max norms):
# a few hundred ulps, well below the 1e-9 at which a coupled system is compared
# with the same model exported as one FMU.
LOOP_RTOL = 1e-13
# Fixed-point iterations before Newton takes over; a contraction slower than
# FIXED_POINT_RATE per iteration goes to Newton at once (it would need more
# than ~70 iterations from a bad start).
MAX_FIXED_POINT, FIXED_POINT_RATE = 30, 0.6
# Newton iterations; a linear loop needs one or two (the finite-difference
# Jacobian of a linear map is exact to ~1e-8).
MAX_NEWTON = 20
# Finite-difference step for the Jacobian, relative to max(1, |u_i|): the
# square root of the machine epsilon.
FD_STEP = 1.5e-8
# A Jacobian I - dG/du whose reciprocal condition number is below this is
# singular: the loop has no unique solution.
SINGULAR_RCOND = 1e-12


class AlgebraicLoopError(FmibridgeError):
    """An algebraic loop between components has no (unique) solution."""


def strongly_connected(graph: Mapping[N, Sequence[N]]) -> list[list[N]]:
    """Return the strongly connected components of `graph`, sources first.

    Tarjan's algorithm, iterative; every node must be a key.
    """
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    work: list = []
    found: list[list] = []

    def visit(node) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(graph[node])))

    for root in graph:
        if root in index:
            continue
        visit(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    visit(nxt)
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = [stack.pop()]
                    while members[-1] != node:
                        members.append(stack.pop())
                    on_stack.difference_update(members)
                    found.append(members)
    return found[::-1]  # Tarjan finds sinks first


def is_loop(members: Sequence[N], graph: Mapping[N, Iterable[N]]) -> bool:
    """Return True if a strongly connected component is a cycle (a loop)."""
    return len(members) > 1 or members[0] in graph[members[0]]


def solve_loop(
    g: Callable[[np.ndarray], np.ndarray], u0: np.ndarray, name: str, t: float
) -> np.ndarray:
    """Return u with G(u) = u: fixed-point iteration from u0, then Newton's method.

    Parameters
    ----------
    g : callable
        The loop map: the loop's inputs set to u give their sources' values.
    u0 : ndarray
        Starting point (the previous solution).
    name : str
        The loop, for the error message.
    t : float
        Time of the evaluation, for the error message.

    Raises
    ------
    AlgebraicLoopError
        If Newton's Jacobian is singular or neither iteration converges.
    """
    u, residual = np.array(u0, dtype=float), np.inf
    for _ in range(MAX_FIXED_POINT):
        gu = g(u)
        new = _norm(gu - u)
        if not np.isfinite(new):
            break
        if new <= LOOP_RTOL * max(1.0, _norm(u)):
            return u
        rate, residual, u = new / residual, new, gu
        if rate > FIXED_POINT_RATE:
            break
    return _newton(g, u if np.all(np.isfinite(u)) else np.array(u0, float), name, t)


def check_loop(
    g: Callable[[np.ndarray], np.ndarray], u: np.ndarray, name: str, t: float
) -> None:
    """Raise AlgebraicLoopError if the loop's Jacobian at its solution u is
    singular: no unique solution, refused before a run."""
    _nonsingular(_jacobian(g, u, g(u) - u), name, t, u)
    g(u)  # leave the components at the solution


def _nonsingular(jacobian: np.ndarray, name: str, t: float, u: np.ndarray) -> None:
    if not np.all(np.isfinite(jacobian)) or _rcond(jacobian) < SINGULAR_RCOND:
        raise AlgebraicLoopError(
            f"algebraic loop {name} has no unique solution at t = {t!r}: the "
            f"Jacobian of G(u) - u is singular (u = {u.tolist()}); change the "
            f"parameters or break the loop."
        )


def _newton(g, u: np.ndarray, name: str, t: float) -> np.ndarray:
    """Newton's method on r(u) = G(u) - u with a finite-difference Jacobian."""
    for _ in range(MAX_NEWTON):
        r = g(u) - u
        if _norm(r) <= LOOP_RTOL * max(1.0, _norm(u)):
            return u
        jacobian = _jacobian(g, u, r)
        _nonsingular(jacobian, name, t, u)
        u = u - np.linalg.solve(jacobian, r)
    raise AlgebraicLoopError(
        f"algebraic loop {name} did not converge at t = {t!r} in {MAX_FIXED_POINT} "
        f"fixed-point and {MAX_NEWTON} Newton iterations (u = {u.tolist()})."
    )


def _jacobian(g, u: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Return d(G(u) - u)/du by forward differences."""
    columns = []
    for i in range(len(u)):
        step = FD_STEP * max(1.0, abs(u[i]))
        shifted = u.copy()
        shifted[i] += step
        columns.append((g(shifted) - shifted - r) / step)
    return np.column_stack(columns)


def _rcond(matrix: np.ndarray) -> float:
    singular = np.linalg.svd(matrix, compute_uv=False)
    return float(singular[-1] / singular[0]) if singular[0] > 0 else 0.0


def _norm(v: np.ndarray) -> float:
    return float(np.max(np.abs(v))) if len(v) else 0.0
