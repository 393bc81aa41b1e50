"""The numba kernels behind `CompiledFlow`: one RK step, and steps until a guard.

The kernels take the right-hand side and the guards as first-class functions of
fixed signatures, so numba compiles them once per machine (cached on disk) and
never again per model. Each flow compiles only its own functions and two small
closures that bind them: calling a kernel from Python with a function argument
would cost ~40 us per call, the closures ~1 us. A closure's compile time grows
with the kernels it calls, since numba links and optimises them again (0.7 s
for `flight_loop`, 0.2 s for `stepper`, measured): hence loops over entries
rather than array expressions, which compile to several times the code.

`locate` narrows a crossed step by Illinois regula falsi compiled from
`fmibridge.core.bracket`, the same source as Halving's Python location (it imports
only math and numpy). It serves this loop and the FMU loop
(`fmu_kernels.fmu_flight`) alike: each takes its trial steps through `trial`,
which numba resolves at compile time from the flow's context tuple, so both
stay cached on disk. numba's cache does not see edits to another file: after
changing bracket.py, touch this file, `fmu_kernels.py` and
`_contact_kernels.py`; after changing this one, every kernel module that
imports it: `fmu_kernels.py`, `coupled_kernels.py` and the `_*_kernels.py` of
methods and models.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..core import bracket, dense

ARRAY = types.float64[::1]
MATRIX = types.float64[:, ::1]
RHS_SIGNATURE = ARRAY(types.float64, ARRAY)  # f(t, x) -> dx/dt
GUARD_SIGNATURE = types.float64(types.float64, ARRAY)  # g(t, x) -> float
GUARDS_SIGNATURE = types.void(types.float64, ARRAY, ARRAY)  # guards(t, x, out)
SIGNATURES = {
    "guard": GUARD_SIGNATURE,
    "rhs": RHS_SIGNATURE,
    "force": ARRAY(types.float64, ARRAY, types.float64),  # (t, x, lam) -> dx/dt
    "hessian": MATRIX(types.float64, ARRAY),  # H(t, x)
    "gradient": types.Tuple((ARRAY, types.float64))(types.float64, ARRAY),
    "reset": RHS_SIGNATURE,  # R(t, x) -> x after the reset
}
RHS = types.FunctionType(RHS_SIGNATURE)
GUARDS = types.FunctionType(GUARDS_SIGNATURE)
F64, I64, BOOL = types.float64, types.int64, types.boolean

start = numba.njit(ARRAY(F64, F64, F64, F64, F64), cache=True)(bracket.start)
propose = numba.njit(F64(ARRAY), cache=True)(bracket.propose)
narrow = numba.njit(BOOL(ARRAY, F64, F64), cache=True)(bracket.narrow)
is_narrow = numba.njit(BOOL(ARRAY), cache=True)(bracket.is_narrow)
is_bracket = numba.njit(BOOL(F64, F64), cache=True)(bracket.is_bracket)
inside_sign = numba.njit(F64(F64, F64, F64), cache=True)(dense.inside_sign)
dips = numba.njit(BOOL(F64, F64, F64, F64, F64), cache=True)(dense.dips)


@numba.njit(BOOL(ARRAY, ARRAY, ARRAY, ARRAY, ARRAY), cache=True)
def any_dip(sides, g0, r0, g1, r1):
    """True if a guard may dip beyond its surface inside the step (`dense.dips`):
    the Python path then takes the step and looks (`Method.dip`)."""
    for i in range(sides.shape[0]):
        if dips(inside_sign(sides[i], g0[i], g1[i]), g0[i], r0[i], g1[i], r1[i]):
            return True
    return False


@numba.njit(types.void(ARRAY, ARRAY), cache=True)
def copy_into(out, v):
    """out[:] = v, as a loop (a slice assignment compiles to far more code)."""
    for i in range(v.shape[0]):
        out[i] = v[i]


@numba.njit(ARRAY(ARRAY, F64, MATRIX, MATRIX, I64), cache=True)
def stage_state(x, h, a, slopes, i):
    """Return x + h sum_j a_ij k_j, the state of stage i, in `Scheme.step`'s order.

    Loops over the entries do each entry's operations of the array expression
    in the same order, with one array instead of two per term.
    """
    x_stage = x.copy()
    for j in range(i):
        if a[i, j] != 0.0:
            weight = h * a[i, j]
            for k in range(x.shape[0]):
                x_stage[k] = x_stage[k] + weight * slopes[j, k]
    return x_stage


@numba.njit(ARRAY(ARRAY, F64, ARRAY, MATRIX), cache=True)
def combine(x, h, b, slopes):
    """Return x + h sum_i b_i k_i over the nonzero weights, in `Scheme.step`'s order."""
    x_next = np.empty(x.shape[0])
    for k in range(x.shape[0]):
        increment, first = 0.0, True
        for i in range(b.shape[0]):
            if b[i] != 0.0:
                if first:
                    increment, first = b[i] * slopes[i, k], False
                else:
                    increment = increment + b[i] * slopes[i, k]
        x_next[k] = x[k] + h * increment
    return x_next


@numba.njit(ARRAY(RHS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY), cache=True)
def rk_step(f, t, x, h, a, b, c):
    """One explicit RK step with tableau (a, b, c), as `Scheme.step` takes it."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    for i in range(b.shape[0]):
        copy_into(slopes[i], f(t + c[i] * h, stage_state(x, h, a, slopes, i)))
    return combine(x, h, b, slopes)


@numba.njit(ARRAY(RHS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY), cache=True)
def rk_step_from(f, t, x, h, a, b, c, k1):
    """`rk_step` with its first slope f(t, x) given as k1 (c_1 = 0 in an explicit
    scheme): the same operations on the same values, one evaluation fewer."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    copy_into(slopes[0], k1)
    for i in range(1, b.shape[0]):
        copy_into(slopes[i], f(t + c[i] * h, stage_state(x, h, a, slopes, i)))
    return combine(x, h, b, slopes)


@numba.njit(BOOL(ARRAY), cache=True)
def finite(v):
    """True if every entry of v is finite."""
    for i in range(v.shape[0]):
        if not np.isfinite(v[i]):
            return False
    return True


@numba.njit(BOOL(ARRAY, ARRAY, ARRAY), cache=True)
def inside(sides, g0, g1):
    """True if every guard ends strictly inside its domain, having started inside
    or on its surface (a reset leaves the state there: the step moves it in);
    an 'either' guard keeps its sign strictly (from zero it fires)."""
    for i in range(sides.shape[0]):
        g_start, g_end = g0[i], g1[i]
        if not np.isfinite(g_end):
            return False
        if sides[i] > 0.0:
            if not (g_start >= 0.0 and g_end > 0.0):
                return False
        elif sides[i] < 0.0:
            if not (g_start <= 0.0 and g_end < 0.0):
                return False
        elif not g_start * g_end > 0.0:
            return False
    return True


@numba.njit(ARRAY(ARRAY, ARRAY, ARRAY), cache=True)
def inward(sides, g0, g1):
    """Return the sign that makes each guard positive inside (`halving._inward`)."""
    signs = np.empty(sides.shape[0])
    for i in range(sides.shape[0]):
        if sides[i] != 0.0:
            signs[i] = sides[i]
        elif g0[i] != 0.0:
            signs[i] = 1.0 if g0[i] > 0.0 else -1.0
        else:  # from zero, the step's side is beyond
            signs[i] = -1.0 if g1[i] > 0.0 else 1.0
    return signs


@numba.njit(F64(ARRAY, ARRAY), cache=True)
def lowest(signs, g):
    """Return min_i signs_i g_i, the first of equal values as Python's min does."""
    value = signs[0] * g[0]
    for i in range(1, g.shape[0]):
        if signs[i] * g[i] < value:
            value = signs[i] * g[i]
    return value


@numba.njit(
    types.void(RHS, GUARDS, F64, ARRAY, ARRAY, F64, ARRAY, ARRAY, ARRAY), cache=True
)
def rates(f, guards, t, x, g, d, z, out, slope):
    """Write each guard's rate dg/dt at (t, x) to out, with g its values there:
    (g(t + d, x + d f) - g) / d, as `flows.base.guard_rates` takes it; f(t, x)
    goes to slope (the next step's first stage), z is scratch for x + d f."""
    copy_into(slope, f(t, x))
    for k in range(x.shape[0]):
        z[k] = x[k] + d * slope[k]
    guards(t + d, z, out)
    for i in range(out.shape[0]):
        out[i] = (out[i] - g[i]) / d


def trial(context, t, x, sigma, y, g):
    """Write x(t + sigma) from (t, x) to y and the guards there to g; return
    False if the flow failed. `locate`'s trial step, implemented per kind of
    flow for its context tuple by numba's `overload` (`rk_trial` here,
    `fmu_kernels.fmu_trial`): compiled only. Contexts start with the tableau
    (a, b, c): numba warns that function types are experimental when a tuple
    starts with one."""
    raise NotImplementedError("`trial` runs only inside numba-compiled kernels")


@overload(trial)
def rk_trial(context, t, x, sigma, y, g):
    """The trial of a compiled f and guards: context (a, b, c, f, guards)."""
    is_ours = isinstance(context, types.BaseTuple) and len(context) == 5
    if not (is_ours and context[3] == RHS):
        return None

    def step(context, t, x, sigma, y, g):
        a, b, c, f, guards = context
        copy_into(y, rk_step(f, t, x, sigma, a, b, c))
        guards(t + sigma, y, g)
        return True

    return step


@numba.njit(cache=True)
def locate(context, sides, t, x, hs, g0, g1, width, max_iter, x_lo, g, ends):
    """Narrow the crossed step [t, t + hs] from x (guards g0 to g1) to `width`.

    Illinois regula falsi on G(sigma) = min_i s_i g_i(A^sigma(t, x)) with the
    signs of `inward`, in at most `max_iter` trial steps, as
    `Halving._illinois` does in Python; each trial step is
    `trial(context, ...)` for the flow's context. Writes x at lo to x_lo, the
    guards at lo and hi to g[0] and g[1], and (lo, hi, trials) to ends, and
    returns True. Returns False, leaving ends as it was, if a g is not finite,
    if not G(0) >= 0 > G(hs), G(0) up to round-off (`bracket.is_bracket`), or
    if a trial failed.

    References
    ----------
    Dowell and Jarratt, BIT 11 (1971), the Illinois method.
    """
    if not (finite(g0) and finite(g1)):
        return False
    signs = inward(sides, g0, g1)
    f0, f1 = lowest(signs, g0), lowest(signs, g1)
    if not is_bracket(f0, f1):
        return False
    state = start(0.0, f0, hs, f1, width)
    copy_into(x_lo, x)
    copy_into(g[0], g0)
    copy_into(g[1], g1)
    y, g_trial = np.empty(x.shape[0]), np.empty(g0.shape[0])
    n_trials = 0
    while n_trials < max_iter and not is_narrow(state):
        sigma = propose(state)
        if not trial(context, t, x, sigma, y, g_trial):
            return False
        n_trials += 1
        defined = finite(y) and finite(g_trial)
        if narrow(state, sigma, lowest(signs, g_trial) if defined else np.nan):
            copy_into(x_lo, y)
            copy_into(g[0], g_trial)
        else:
            copy_into(g[1], g_trial)
    ends[0], ends[1], ends[2] = state[bracket.LO], state[bracket.HI], n_trials
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
        F64,
        I64,
        F64,
        ARRAY,
        MATRIX,
        ARRAY,
        MATRIX,
        ARRAY,
    ),
    cache=True,
)
def flight(
    f,
    guards,
    sides,
    a,
    b,
    c,
    t,
    x,
    h,
    t_end,
    max_steps,
    reach_tol,
    width,
    max_iter,
    d,
    ts,
    xs,
    x_lo,
    g,
    ends,
):
    """Take steps of h (the last one lands on t_end) while every guard stays inside.

    Stops before the first step that ends on or beyond a guard's surface or with
    non-finite values, or in which a guard may dip beyond its surface and come
    back (`any_dip`, with the guards' rates over d, `rates`), at t_end, or after
    `max_steps`. Writes the accepted end times and states to ts[:n], xs[:n] and
    returns n. With width > 0 a step with finite values that ended beyond a
    guard is narrowed by `locate` (x_lo, g, ends); ends[2] stays -1 if it was not.
    """
    g0 = np.empty(sides.shape[0])
    g1 = np.empty(sides.shape[0])
    r0, r1, z = np.empty(g0.shape[0]), np.empty(g0.shape[0]), np.empty(x.shape[0])
    slope = np.empty(x.shape[0])  # f(t, x), from the rates: the step's first stage
    ahead = np.empty(x.shape[0])  # f at the step's end (slope stays for a location)
    watch = sides.shape[0] > 0
    guards(t, x, g0)
    if watch:
        rates(f, guards, t, x, g0, d, z, r0, slope)
    ends[2] = -1.0
    n = 0
    while n < max_steps and t < t_end - reach_tol:
        hs = min(h, t_end - t)
        if watch:
            y = rk_step_from(f, t, x, hs, a, b, c, slope)
        else:
            y = rk_step(f, t, x, hs, a, b, c)
        guards(t + hs, y, g1)
        defined = finite(y)
        if not (defined and inside(sides, g0, g1)):
            if defined and width > 0.0:
                locate(
                    (a, b, c, f, guards), sides, t, x, hs, g0, g1, width, max_iter,
                    x_lo, g, ends,
                )  # fmt: skip
            break
        if watch:
            rates(f, guards, t + hs, y, g1, d, z, r1, ahead)
            if any_dip(sides, g0, r0, g1, r1):
                break
            slope, ahead = ahead, slope
        t = t_end if t + hs >= t_end - reach_tol else t + hs
        x = y
        g0[:] = g1
        r0[:] = r1
        ts[n] = t
        xs[n, :] = y
        n += 1
    return n


def stepper(f):
    """Bind rk_step to this f: step(t, x, h, a, b, c, k1) -> x(t + h), with the
    first slope k1 given (`rk_step_from`) unless k1 is empty."""

    @numba.njit
    def step(t, x, h, a, b, c, k1):
        if k1.shape[0] == 0:
            return rk_step(f, t, x, h, a, b, c)
        return rk_step_from(f, t, x, h, a, b, c, k1)

    return step


def flight_loop(f, guards):
    """Bind `flight` to this f and guard vector."""

    @numba.njit
    def run(
        sides, a, b, c, t, x, h, t_end, n, tol, width, n_iter, d, ts, xs, lo, g, ends
    ):
        return flight(  # *args would warn that function types are experimental
            f, guards, sides, a, b, c, t, x, h, t_end, n, tol, width, n_iter, d, ts,
            xs, lo, g, ends,
        )  # fmt: skip

    return run


def guard_vector(fns: tuple):
    """Compile guards(t, x, out) that writes g_i(t, x) of every fn to out[i]."""
    lines = [f"    out[{i}] = g{i}(t, x)" for i in range(len(fns))] or ["    pass"]
    namespace = {f"g{i}": fn for i, fn in enumerate(fns)}
    exec("def guards(t, x, out):\n" + "\n".join(lines), namespace)  # noqa: S102
    return numba.njit(GUARDS_SIGNATURE)(namespace["guards"])
