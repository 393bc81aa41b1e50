"""The numba kernel behind Halving's compiled firing: the steps, the located
crossing and its reset, in one call.

`fly_and_fire` runs `flows._kernels.flight` (the steps of h while every guard
stays inside, then Illinois on the crossed step), and where the crossing is
located to t_tol with finite guards it fires as `Halving._fire_bracket` and
`Method.fire` do, operation by operation: the secant of each crossed guard across
the bracket, the first declared edge of the earliest group within t_tol, the
step to its time, its compiled reset, and for a self-loop the check of
`Method._check_reset` and the silent event. Everything else (no crossing, a
bracket still wide, non-finite values, a reset that fails its check) is left to
the Python code, which also raises the errors. The functions come as typed lists
of first-class functions (cheap to pass from Python), so the kernel compiles once
per machine. numba's cache does not see edits to another file: after changing
flows/_kernels.py, touch this file.

References
----------
Dowell and Jarratt, BIT 11 (1971), the Illinois method (`flows._kernels.locate`).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from ..flows._kernels import SIGNATURES, finite, flight, inward, rk_step
from .watchdog import ON_SURFACE

# info: how the call ended (CODE), the trials of the location, the event's time,
# the winning edge and the size of its group (group[:n] holds the edges)
CODE, N_TRIALS, T_EVENT, EDGE, N_GROUP = range(5)
INFO_SIZE = 5
# codes: no event fired (the Python code handles what ended the steps), fired,
# fired as a silent event (a self-loop that left the state as it was), or a
# reset that failed its check or returned non-finite values (Python raises)
NONE, FIRED, SILENT, BAD_RESET = range(4)


@numba.njit(cache=True)
def crossed(side, g0, g1):
    """`core.system.Guard.crossed`, the direction as `flows.compiled.SIDES` has it."""
    falling = g1 < 0.0 and g1 < g0
    rising = g1 > 0.0 and g1 > g0
    if side > 0.0:
        return falling
    if side < 0.0:
        return rising
    return (g0 >= 0.0 and falling) or (g0 <= 0.0 and rising)


@numba.njit(cache=True)
def _sign(v):
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


@numba.njit(cache=True)
def group_of(sides, g_lo, g_hi, t_lo, width, t_tol, group):
    """Write the edges crossed first (`Halving._fire`: secant times within t_tol of
    the earliest, declaration order) to group; return their number and the
    secant time of the first."""
    n = sides.shape[0]
    hits, times = np.empty(n, dtype=np.int64), np.empty(n)
    count = 0
    for i in range(n):
        if crossed(sides[i], g_lo[i], g_hi[i]):
            hits[count] = i
            count += 1
    if count == 0:  # beyond by round-off at both ends: the deepest at the far end
        signed = inward(sides, g_lo, g_hi) * g_hi
        hits[0], count = np.argmin(signed), 1
    first = np.inf
    for k in range(count):
        a, b = g_lo[hits[k]], g_hi[hits[k]]
        frac = a / (a - b) if (a - b) != 0 and _sign(a) != _sign(b) else 0.0
        times[k] = t_lo + width * min(max(frac, 0.0), 1.0)
        first = min(first, times[k])
    size, t_first = 0, 0.0
    for k in range(count):
        if times[k] - first <= t_tol:
            if size == 0:
                t_first = times[k]
            group[size] = hits[k]
            size += 1
    return size, t_first


@numba.njit(cache=True)
def rate(f, guards, i, t, x, g, d):
    """Guard i's rate at (t, x), g its value: `flows.base.guard_rates`' difference."""
    z = x + d * f(t, x)
    values = np.empty(g.shape[0])
    guards(t + d, z, values)
    return (values[i] - g[i]) / d


@numba.njit(cache=True)
def reset_holds(f, guards, sides, i, t, x_before, x_after, h, d):
    """False where `Method._check_reset` refuses the self-loop reset of guard i."""
    side = sides[i]
    if side == 0.0:
        return True
    g0, g1 = np.empty(sides.shape[0]), np.empty(sides.shape[0])
    guards(t, x_before, g0)
    guards(t, x_after, g1)
    g_before, g_after = g0[i], g1[i]
    if not np.isfinite(g_after):
        return False
    reach = max(ON_SURFACE, 2.0 * abs(g_before))
    if side * g_after < -reach:
        return False
    if abs(g_after) > reach:
        return True
    if side * rate(f, guards, i, t, x_after, g1, d) * h >= -ON_SURFACE:
        return True
    return not side * rate(f, guards, i, t, x_before, g0, d) < 0.0


@numba.njit(cache=True)
def fly_and_fire(fs, gs, rs, edges, t, x, h, limits, ts, xs, bracket, events, info):
    """Take `flight`'s steps and fire the crossing it located (module doc).

    fs, gs, rs: typed lists of f, the guard vector and one reset per edge.
    edges: (sides, is_self_loop, is_beyond) per edge, and the tableau (a, b, c).
    limits: (t_end, max_steps, reach_tol, t_tol, max_iter, d) as `flight` takes
    them. bracket: (x_lo, g, ends), `flight`'s location. events: (x_event,
    x_after, group). Returns the steps taken (samples in ts, xs); info says how
    the call ended.
    """
    f, guards, resets = fs[0], gs[0], rs
    sides, is_self_loop, is_beyond, a, b, c = edges
    t_end, max_steps, reach_tol, t_tol, max_iter, d = limits
    x_lo, g, ends = bracket
    x_event, x_after, group = events
    n = flight(
        f, guards, sides, a, b, c, t, x, h, t_end, int(max_steps), reach_tol, t_tol,
        int(max_iter), d, ts, xs, x_lo, g, ends,
    )  # fmt: skip
    info[CODE], info[N_TRIALS] = NONE, max(ends[2], 0.0)
    width = ends[1] - ends[0]
    if ends[2] < 0 or width > t_tol or not finite(g[1]):
        return n
    t_lo = (ts[n - 1] if n else t) + ends[0]
    size, t_event = group_of(sides, g[0], g[1], t_lo, width, t_tol, group)
    i = group[0]
    if is_beyond[i]:
        t_event = t_lo + width
    if t_event == t_lo:
        x_event[:] = x_lo
    else:
        x_event[:] = rk_step(f, t_lo, x_lo, t_event - t_lo, a, b, c)
    info[T_EVENT], info[EDGE], info[N_GROUP] = t_event, i, size
    after = resets[i](t_event, x_event.copy())
    info[CODE] = FIRED
    if after.shape[0] != x.shape[0] or not finite(after):
        info[CODE] = BAD_RESET
        return n
    x_after[:] = after
    if is_self_loop[i]:
        if not reset_holds(f, guards, sides, i, t_event, x_event, after, h, d):
            info[CODE] = BAD_RESET
        elif np.array_equal(after, x_event):
            info[CODE] = SILENT
    return n


def identity(t, x):
    """The identity reset, compiled (`core.system.Edge`'s default)."""
    return x


RESET_SIGNATURE = SIGNATURES["rhs"]
compiled_identity = numba.njit(RESET_SIGNATURE, cache=True)(identity)


def typed_functions(f, guards, resets) -> tuple:
    """Return (f, guards, resets) as the typed lists `fly_and_fire` takes."""
    from numba.typed import List

    from ..flows._kernels import GUARDS_SIGNATURE

    fs = List.empty_list(types.FunctionType(SIGNATURES["rhs"]))
    fs.append(f)
    gs = List.empty_list(types.FunctionType(GUARDS_SIGNATURE))
    gs.append(guards)
    rs = List.empty_list(types.FunctionType(RESET_SIGNATURE))
    for reset in resets:
        rs.append(reset)
    return fs, gs, rs
