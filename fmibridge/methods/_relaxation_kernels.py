"""The numba kernel behind Relaxation's compiled loop: steps, trials and strip
transitions (Burden et al., Fig. 12), many attempts in one call.

`relax` repeats Relaxation's attempts as `Relaxation._attempt` takes them, in one
mode: the steps while every guard stays inside (`flows._kernels.flight`), then
a trial of h, h/2, ... until the point lies in the relaxed domain (`classify`);
on a strip it projects onto the guard along the step's curve (`guard_point`,
with `inside_point` from a surface), waits eps - tau and fires the self-loop's
compiled reset (its check from `_halving_kernels.reset_holds`). Each attempt
follows the Python code operation by operation on the same compiled functions,
so the runs agree bit for bit. An attempt the kernel does not take as the
Python code would in every detail is left undone for it: a dip inside a step
(`Method.dip`, which may warn), no trial in the relaxed domain, a transition to
another mode, a reset that fails its check, non-finite values, or an attempt
that advances time by less than `crawl` (the watchdog judges those one by one).
Relaxation's executions are not stopped by the watchdog's Zeno tests (each
transition waits on its strip), so attempts can run in blocks. numba's cache
does not see edits to another file: after changing flows/_kernels.py or
_halving_kernels.py, touch this file.

References
----------
Burden, Gonzalez, Vasudevan, Bajcsy, Sastry, "Metrization and simulation of
controlled hybrid systems", Fig. 12, Defs. 14-18.
"""

from __future__ import annotations

import numba
import numpy as np

from ..flows._kernels import any_dip, finite, flight, rates, rk_step, rk_step_from
from ._halving_kernels import reset_holds

# info: the outcome of the call, its counts, and the state it ended at
CODE, N_SAMPLES, N_EVENTS, N_STEPS, N_REJECTED, N_SILENT, T_END_STATE = range(7)
INFO_SIZE = 7
# how `relax` ended: full (a bound or the buffers), t_end, or an attempt left to
# the Python code (the state is the one before it)
FULL, REACHED, HAND_BACK = range(3)
# `classify`'s outcomes besides a strip's edge index (>= 0)
DOMAIN, OUTSIDE = -1, -2
# Projection onto the guard (`relaxation.PROJECT_GTOL`, `PROJECT_MAX_ITER`)
PROJECT_GTOL, PROJECT_MAX_ITER = 1e-6, 100


@numba.njit(cache=True)
def depth(side, g_start, g):
    """How far g lies beyond the guard's surface (`relaxation._depth`), or -1
    inside (a depth is never negative)."""
    if side > 0.0:
        return -g if g < 0.0 else -1.0
    if side < 0.0:
        return g if g > 0.0 else -1.0
    return abs(g) if g * g_start < 0.0 else -1.0


@numba.njit(cache=True)
def classify(sides, eps, g0, y, g, order):
    """Return DOMAIN, OUTSIDE or the strip's edge (`Relaxation._classify`) for the
    trial point y with guard values g; order[:k] holds the edges beyond (deepest
    first, then declaration order), k in order[-1]."""
    count = 0
    taus = np.empty(sides.shape[0])
    if not (finite(y) and finite(g)):
        return OUTSIDE
    for i in range(sides.shape[0]):
        tau = depth(sides[i], g0[i], g[i])
        if tau < 0.0:
            continue
        if tau > eps:
            return OUTSIDE
        k = count  # insertion: deepest first, ties in declaration order
        while k > 0 and taus[k - 1] < tau:
            taus[k], order[k] = taus[k - 1], order[k - 1]
            k -= 1
        taus[k], order[k] = tau, i
        count += 1
    order[order.shape[0] - 1] = count
    return DOMAIN if count == 0 else order[0]


@numba.njit(cache=True)
def guard_at(guards, n, i, t, x):
    """Guard i's value at (t, x), from the guard vector of n guards."""
    g = np.empty(n)
    guards(t, x, g)
    return g[i]


@numba.njit(cache=True)
def inside_point(f, guards, sides, i, t, x, s, eps, h, d, max_halvings, tableau):
    """`Relaxation._inside_point`: (found, sigma, z, g), a point inside guard i on
    the step's curve by more than the projection's tolerance: none where the
    state moves out at the start (its rate), else probes at eps, 2 eps, ..."""
    a, b, c = tableau
    n, side = sides.shape[0], sides[i]
    if side != 0.0:
        g = np.empty(n)
        guards(t, x, g)
        rate = (guard_at(guards, n, i, t + d, x + d * f(t, x)) - g[i]) / d
        if not side * rate > 0.0:
            return False, 0.0, x, 0.0
    sigma = eps
    for _ in range(max_halvings):
        if sigma >= s:
            break
        z = rk_step(f, t, x, sigma, a, b, c)
        g_z = guard_at(guards, n, i, t + sigma, z)
        if np.isfinite(g_z) and depth(side, 0.0, g_z) < 0.0:
            if abs(g_z) > PROJECT_GTOL * eps:
                return True, sigma, z, g_z
        sigma *= 2
    return False, 0.0, x, 0.0


@numba.njit(cache=True)
def guard_point(f, guards, sides, i, t, x, g_start, g_strip, s, settings, tableau):
    """`Relaxation._guard_point`: q, where the step's curve A^sigma(t, x) first
    meets guard i, by Illinois regula falsi on sigma in [0, s] keeping the
    domain side. settings: (eps, h, d, max_halvings)."""
    a, b, c = tableau
    eps, h, d, max_halvings = settings
    n, side = sides.shape[0], sides[i]
    if depth(side, g_start, g_start) >= 0.0:
        return x  # a reset left the state beyond this guard: it entered here
    lo, q, g_q = 0.0, x, g_start
    if abs(g_start) <= PROJECT_GTOL * eps:
        found, lo, q, g_q = inside_point(
            f, guards, sides, i, t, x, s, eps, h, d, int(max_halvings), tableau
        )
        if not found:
            return x  # it leaves at once: it enters the strip here
    hi, f_lo, f_hi, last = s, g_q, g_strip, 0
    for _ in range(PROJECT_MAX_ITER):
        if abs(g_q) <= PROJECT_GTOL * eps:
            break
        sigma = lo + (hi - lo) * f_lo / (f_lo - f_hi)
        if not lo < sigma < hi:  # the bracket is at round-off width
            break
        z = rk_step(f, t, x, sigma, a, b, c)
        g = guard_at(guards, n, i, t + sigma, z)
        if not (finite(z) and np.isfinite(g)):
            hi, f_hi, last = sigma, -f_lo, 0  # next trial: the bracket's middle
        elif depth(side, g_start, g) < 0.0:
            lo, f_lo, q, g_q = sigma, g, z, g
            f_hi, last = (f_hi / 2 if last == -1 else f_hi), -1
        else:
            hi, f_hi = sigma, g
            f_lo, last = (f_lo / 2 if last == 1 else f_lo), 1
    return q


@numba.njit(cache=True)
def trial(f, guards, sides, t, x, hs, eps, d, max_halvings, tableau, order):
    """`Relaxation._trial` without its dips: (where, hs, y, g0, g1, rejected),
    where is DOMAIN, a strip's edge or OUTSIDE (no trial in the relaxed domain,
    or a step in the domain whose guard may dip: the Python code takes those),
    g0 and g1 the guards at both ends."""
    a, b, c = tableau
    n = sides.shape[0]
    g0, g1 = np.empty(n), np.empty(n)
    guards(t, x, g0)
    slope = np.empty(x.shape[0])  # f(t, x), from the rates
    r0, r1 = np.empty(n), np.empty(n)
    z, ahead = np.empty(x.shape[0]), np.empty(x.shape[0])
    rates(f, guards, t, x, g0, d, z, r0, slope)
    rejected = 0
    for _ in range(max_halvings + 1):
        y = rk_step_from(f, t, x, hs, a, b, c, slope)
        guards(t + hs, y, g1)
        where = classify(sides, eps, g0, y, g1, order)
        if where == DOMAIN:
            rates(f, guards, t + hs, y, g1, d, z, r1, ahead)
            if any_dip(sides, g0, r0, g1, r1):
                return OUTSIDE, hs, y, g0, g1, rejected
        if where != OUTSIDE:
            return where, hs, y, g0, g1, rejected
        rejected += 1
        if t + hs / 2 == t:
            break
        hs /= 2
    return OUTSIDE, hs, x, g0, g1, rejected


@numba.njit(cache=True)
def relax(fs, gs, rs, edges, t, x, settings, limits, samples, events, info, x_end):
    """Take Relaxation's attempts from (t, x) until t_end, a bound, the buffers'
    room, or an attempt left to the Python code (module doc).

    fs, gs, rs: typed lists of f, the guard vector and one reset per edge.
    edges: (sides, is_self_loop, is_beyond) per edge, and the tableau (a, b,
    c). settings: (eps, h, d, max_halvings). limits: (t_end, reach_tol,
    max_steps, max_events, crawl, step_tol), step_tol the reach tolerance of
    the steps between events as `Method.steps_inside` passes it. samples:
    (ts, xs), every row in this mode; events: (t, edge, row of x_before in the
    samples, x_after, simultaneous edges with their number last). info: the
    outcome, the counts (samples, events, steps, rejected trials, silent
    events) and the time reached; the state reached goes to x_end. Returns the
    number of samples.
    """
    n_x, n_g = x.shape[0], edges[0].shape[0]
    scratch = (np.empty(n_x), np.empty((2, n_g)), np.empty(3))
    order = np.empty(n_g + 1, dtype=np.int64)
    count = np.zeros(5, dtype=np.int64)  # samples, events, steps, rejected, silent
    functions = (rs, fs[0], gs[0])  # a tuple that starts with a function warns
    info[CODE] = FULL
    while info[CODE] == FULL:
        if t >= limits[0] - limits[1]:
            info[CODE] = REACHED
        elif _has_room(samples[0], events[0], count, limits):
            t, x = _attempt(functions, edges, t, x, settings, limits, samples,
                            events, count, (scratch, order), info)  # fmt: skip
        else:
            break
    info[N_SAMPLES], info[N_EVENTS], info[N_STEPS] = count[0], count[1], count[2]
    info[N_REJECTED], info[N_SILENT], info[T_END_STATE] = count[3], count[4], t
    x_end[:] = x
    return count[0]


@numba.njit(cache=True)
def _has_room(ts, ev_t, count, limits):
    """True while the buffers have room for an attempt and no bound is hit."""
    if ts.shape[0] - count[0] - 3 <= 0 or count[1] >= ev_t.shape[0]:
        return False
    return count[2] < int(limits[2]) and count[1] + count[4] < int(limits[3])


@numba.njit(cache=True)
def _attempt(functions, edges, t, x, settings, limits, samples, events, count,
             scratch, info):  # fmt: skip
    """One attempt of `Relaxation._attempt` from (t, x): the steps inside every
    guard, else a trial and its strip transition; logs it and returns the state
    it reached, or sets info[CODE] to HAND_BACK (the state as it was) or
    REACHED."""
    (resets, f, guards), ((x_lo, g_lo, ends), order) = functions, scratch
    sides, _, _, a, b, c = edges
    eps, h, d, max_halvings = settings[0], settings[1], settings[2], int(settings[3])
    t_end, reach_tol, crawl, step_tol = limits[0], limits[1], limits[4], limits[5]
    ts, xs = samples
    room = min(int(limits[2]) - count[2], ts.shape[0] - count[0] - 3)
    n = flight(
        f, guards, sides, a, b, c, t, x, h, t_end, room, step_tol, 0.0, 0, d,
        ts[count[0] :], xs[count[0] :], x_lo, g_lo, ends,
    )  # fmt: skip
    if n > 0:  # the steps while every guard stays inside: one attempt
        count[0] += n
        count[2] += n
        return ts[count[0] - 1], xs[count[0] - 1].copy()
    step = trial(f, guards, sides, t, x, min(h, t_end - t), eps, d, max_halvings,
                 (a, b, c), order)  # fmt: skip
    where, hs, y, g0, g1, rejected = step
    t1 = t_end if t + hs >= t_end - reach_tol else t + hs
    if where == OUTSIDE or (where == DOMAIN and t1 - t < crawl):
        info[CODE] = HAND_BACK
        return t, x
    if where == DOMAIN:
        _commit(ts, xs, count, t1, y, rejected)
        return t1, y
    code, t_new, q, after = _strip(f, guards, resets, edges, t, x, where,
                                   (hs, t1, t_end), y, g0, g1, settings)  # fmt: skip
    if code == HAND_BACK or (code != REACHED and t_new - t < crawl):
        info[CODE] = HAND_BACK
        return t, x
    _commit(ts, xs, count, t1, y, rejected)
    if code == REACHED:
        info[CODE] = REACHED
        if t1 < t_end:  # the run ends while waiting on the strip (Step 14)
            _sample(ts, xs, count, t_end, q)
        return t_end, q
    _sample(ts, xs, count, t_new, q)
    if np.array_equal(after, q):  # a silent self-loop: no transition
        count[4] += 1
        return t_new, q
    ev_t, ev_edge, ev_at, ev_after, ev_group = events
    k = count[1]
    ev_t[k], ev_edge[k], ev_at[k], ev_after[k] = t_new, where, count[0] - 1, after
    ev_group[k] = order
    count[1] += 1
    _sample(ts, xs, count, t_new, after)
    return t_new, after


@numba.njit(cache=True)
def _sample(ts, xs, count, t, x):
    """Keep the sample (t, x)."""
    ts[count[0]], xs[count[0]] = t, x
    count[0] += 1


@numba.njit(cache=True)
def _commit(ts, xs, count, t1, y, rejected):
    """Keep a trial's step: its sample and its counts."""
    _sample(ts, xs, count, t1, y)
    count[2] += 1
    count[3] += rejected


@numba.njit(cache=True)
def _strip(f, guards, resets, edges, t, x, i, times, y, g0, g1, settings):
    """The transition of edge i from its strip (Fig. 12, Steps 13-15), after the
    trial of hs from (t, x) to (t1, y), times = (hs, t1, t_end): (code, t_reset,
    q, x after the reset); REACHED where the run ends on the strip, HAND_BACK
    where the Python code takes it (another mode, a refused reset)."""
    sides, is_self_loop, is_beyond, a, b, c = edges
    eps, h, d = settings[0], settings[1], settings[2]
    hs, t1, t_end = times
    if not is_self_loop[i]:
        return HAND_BACK, t, x, x
    if is_beyond[i]:
        q = y  # the reset tests its own condition (an FMU's event mode)
    else:
        q = guard_point(f, guards, sides, i, t, x, g0[i], g1[i], hs, settings,
                        (a, b, c))  # fmt: skip
    t_reset = t1 + eps - depth(sides[i], g0[i], g1[i])  # Fig. 12, Step 13
    if t_reset > t_end:
        return REACHED, t_end, q, q
    after = resets[i](t_reset, q.copy())
    if after.shape[0] != x.shape[0] or not finite(after):
        return HAND_BACK, t, x, x
    if not reset_holds(f, guards, sides, i, t_reset, q, after, h, d):
        return HAND_BACK, t, x, x
    return FULL, t_reset, q, after
