"""The numba kernels behind `CompiledFlow`: one RK step, and steps until a guard.

The kernels take the right-hand side and the guards as first-class functions of
fixed signatures, so numba compiles them once per machine (cached on disk) and
never again per model. Each flow compiles only its own functions and two small
closures that bind them (about 0.2 s each): calling a kernel from Python with a
function argument would cost ~40 us per call, the closures ~1 us.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

ARRAY = types.float64[::1]
MATRIX = types.float64[:, ::1]
RHS_SIGNATURE = ARRAY(types.float64, ARRAY)  # f(t, x) -> dx/dt
GUARD_SIGNATURE = types.float64(types.float64, ARRAY)  # g(t, x) -> float
GUARDS_SIGNATURE = types.void(types.float64, ARRAY, ARRAY)  # guards(t, x, out)
RHS = types.FunctionType(RHS_SIGNATURE)
GUARDS = types.FunctionType(GUARDS_SIGNATURE)
F64, I64 = types.float64, types.int64


@numba.njit(ARRAY(ARRAY, F64, MATRIX, MATRIX, I64), cache=True)
def stage_state(x, h, a, slopes, i):
    """Return x + h sum_j a_ij k_j, the state of stage i, in `Scheme.step`'s order."""
    x_stage = x
    for j in range(i):
        if a[i, j] != 0.0:
            x_stage = x_stage + (h * a[i, j]) * slopes[j]
    return x_stage


@numba.njit(ARRAY(ARRAY, F64, ARRAY, MATRIX), cache=True)
def combine(x, h, b, slopes):
    """Return x + h sum_i b_i k_i over the nonzero weights, in `Scheme.step`'s order."""
    increment = np.zeros(x.shape[0])
    first = True
    for i in range(b.shape[0]):
        if b[i] != 0.0:
            if first:
                increment = b[i] * slopes[i]
                first = False
            else:
                increment = increment + b[i] * slopes[i]
    return x + h * increment


@numba.njit(ARRAY(RHS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY), cache=True)
def rk_step(f, t, x, h, a, b, c):
    """One explicit RK step with tableau (a, b, c), as `Scheme.step` takes it."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    for i in range(b.shape[0]):
        slopes[i] = f(t + c[i] * h, stage_state(x, h, a, slopes, i))
    return combine(x, h, b, slopes)


@numba.njit(types.boolean(ARRAY, ARRAY, ARRAY), cache=True)
def inside(sides, g0, g1):
    """True if every guard lies strictly inside its domain at both ends."""
    for i in range(sides.shape[0]):
        g_start, g_end = g0[i], g1[i]
        if not np.isfinite(g_end):
            return False
        if sides[i] > 0.0:
            if not (g_start > 0.0 and g_end > 0.0):
                return False
        elif sides[i] < 0.0:
            if not (g_start < 0.0 and g_end < 0.0):
                return False
        elif not g_start * g_end > 0.0:
            return False
    return True


@numba.njit(
    I64(
        RHS,
        GUARDS,
        ARRAY,
        MATRIX,
        ARRAY,
        ARRAY,
        F64,
        ARRAY,
        F64,
        F64,
        I64,
        F64,
        ARRAY,
        MATRIX,
    ),
    cache=True,
)
def flight(f, guards, sides, a, b, c, t, x, h, t_end, max_steps, reach_tol, ts, xs):
    """Take steps of h (the last one lands on t_end) while every guard stays inside.

    Stops before the first step that ends on or beyond a guard's surface or with
    non-finite values, at t_end, or after `max_steps`. Writes the accepted end
    times and states to ts[:n], xs[:n] and returns n.
    """
    g0 = np.empty(sides.shape[0])
    g1 = np.empty(sides.shape[0])
    guards(t, x, g0)
    n = 0
    while n < max_steps and t < t_end - reach_tol:
        hs = min(h, t_end - t)
        y = rk_step(f, t, x, hs, a, b, c)
        guards(t + hs, y, g1)
        if not (np.all(np.isfinite(y)) and inside(sides, g0, g1)):
            break
        t = t_end if t + hs >= t_end - reach_tol else t + hs
        x = y
        g0[:] = g1
        ts[n] = t
        xs[n, :] = y
        n += 1
    return n


def stepper(f):
    """Bind rk_step to this f: step(t, x, h, a, b, c) -> x(t + h)."""

    @numba.njit
    def step(t, x, h, a, b, c):
        return rk_step(f, t, x, h, a, b, c)

    return step


def flight_loop(f, guards):
    """Bind `flight` to this f and guard vector."""

    @numba.njit
    def run(sides, a, b, c, t, x, h, t_end, max_steps, reach_tol, ts, xs):
        return flight(
            f, guards, sides, a, b, c, t, x, h, t_end, max_steps, reach_tol, ts, xs
        )

    return run


def guard_vector(fns: tuple):
    """Compile guards(t, x, out) that writes g_i(t, x) of every fn to out[i]."""
    lines = [f"    out[{i}] = g{i}(t, x)" for i in range(len(fns))] or ["    pass"]
    namespace = {f"g{i}": fn for i, fn in enumerate(fns)}
    exec("def guards(t, x, out):\n" + "\n".join(lines), namespace)  # noqa: S102
    return numba.njit(GUARDS_SIGNATURE)(namespace["guards"])
