"""A mode whose flow, guards and resets are numba-compiled, as the kernels take it.

Completion's one-call run (`_completion_kernels`, with `_halving_kernels`'
firing) runs a mode's steps, crossings and resets in one call. It takes the
mode's functions as typed lists of first-class functions (cheap to pass from
Python, so each kernel compiles once per machine) and its edges as arrays.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.system import Mode
from ..flows.compiled import SIDES, CompiledFlow, is_compiled


@dataclass(frozen=True)
class CompiledMode:
    """The typed lists (f, the guard vector, one reset per edge) and, per edge,
    (sides, is_self_loop, is_beyond): direction as `flows.compiled.SIDES`, whether
    it returns to this mode, and whether its reset acts beyond the surface."""

    functions: tuple
    edges: tuple


def compiled_mode(mode: Mode) -> CompiledMode | None:
    """Return the mode as the kernels take it, or None unless its flow is a
    CompiledFlow and every guard and reset is compiled (an edge's default
    identity reset counts as compiled)."""
    from ..core.system import _identity

    flow, edges = mode.flow, mode.edges
    guards = tuple(e.guard.fn for e in edges)
    resets = tuple(
        _identity_kernel() if e.reset is _identity else e.reset for e in edges
    )
    if not (
        isinstance(flow, CompiledFlow)
        and all(map(is_compiled, guards))
        and all(map(is_compiled, resets))
    ):
        return None
    kinds = tuple(
        (e.guard.direction, e.target == mode.name, e.guard.reset_at == "beyond")
        for e in edges
    )
    return _compiled(flow.f, guards, resets, kinds)


@functools.cache
def _compiled(f, guards: tuple, resets: tuple, kinds: tuple) -> CompiledMode:
    """The CompiledMode of f, the guards and resets and each edge's (direction,
    is_self_loop, is_beyond), once per process: a model built again for each run
    (a Completion builds its modes at each run) finds it. numba compiles the
    guard vector, about 0.1 s, on first use."""
    from ..flows import _kernels as flight_kernels
    from . import _halving_kernels as kernels

    functions = kernels.typed_functions(f, flight_kernels.guard_vector(guards), resets)
    sides = np.array([SIDES[direction] for direction, _, _ in kinds])
    is_self_loop = np.array([loop for _, loop, _ in kinds], dtype=bool)
    is_beyond = np.array([beyond for _, _, beyond in kinds], dtype=bool)
    return CompiledMode(functions, (sides, is_self_loop, is_beyond))


def _identity_kernel():
    from . import _halving_kernels as kernels

    return kernels.compiled_identity
