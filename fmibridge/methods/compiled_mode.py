"""A mode whose flow, guards and resets are numba-compiled, as the kernels take it.

Halving's compiled firing (`_halving_kernels`) and Relaxation's compiled strips
(`_relaxation_kernels`) run a mode's steps, crossings and resets in one call. They
take its functions as typed lists of first-class functions (cheap to pass from
Python, so each kernel compiles once per machine) and its edges as arrays.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np

from ..core.system import Mode
from ..flows.compiled import CompiledFlow, guard_sides, is_compiled

# Each mode's CompiledMode (or None), by id(mode), dropped when the mode is.
_MODES: dict[int, CompiledMode | None] = {}


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
    key = id(mode)
    if key not in _MODES:
        _MODES[key] = _compiled(mode)
        weakref.finalize(mode, _MODES.pop, key, None)
    return _MODES[key]


def _compiled(mode: Mode) -> CompiledMode | None:
    from ..core.system import _identity

    flow, edges = mode.flow, mode.edges
    resets = [_identity_kernel() if e.reset is _identity else e.reset for e in edges]
    if not (
        isinstance(flow, CompiledFlow)
        and all(is_compiled(e.guard.fn) for e in edges)
        and all(map(is_compiled, resets))
    ):
        return None
    functions = _typed_functions(
        flow.f, tuple(e.guard.fn for e in edges), tuple(resets)
    )
    sides = guard_sides([e.guard for e in edges])
    is_self_loop = np.array([e.target == mode.name for e in edges], dtype=bool)
    is_beyond = np.array([e.guard.reset_at == "beyond" for e in edges], dtype=bool)
    return CompiledMode(functions, (sides, is_self_loop, is_beyond))


@functools.cache
def _typed_functions(f, guards: tuple, resets: tuple) -> tuple:
    """f, the guard vector (numba compiles it, about 0.1 s) and the resets as
    typed lists, once per process for the same functions (a Completion builds
    its modes again at each run)."""
    from ..flows import _kernels as flight_kernels
    from . import _halving_kernels as kernels

    return kernels.typed_functions(f, flight_kernels.guard_vector(guards), resets)


def _identity_kernel():
    from . import _halving_kernels as kernels

    return kernels.compiled_identity
