"""The numba kernel behind `ModelExchangeFlow.steps_inside`: FMU steps until an event.

The loop calls the FMU's own C functions (setTime, setContinuousStates,
getDerivatives, getEventIndicators) through their raw addresses, which the
lower FMI layer hands over as integers (`_ModelExchange.c_calls`). FMI 2.0 and
3.0 declare these four functions with the same C signature, so one kernel
serves both, compiled once per machine (cached on disk) and never per FMU: a
call from Python costs about a microsecond (a first-class function argument
would cost ~40 us, a closure per FMU ~0.2 s of compilation).

The kernel follows `Scheme.step` operation by operation and the methods'
acceptance rule (`_kernels.inside`), so a step it accepts is bit for bit the
step the Python loop takes, and it narrows the crossing step after them with
`_kernels.locate`, the compiled loop's own Illinois location, through
`fmu_trial`. It never raises: a non-OK status (above fmiWarning) or a
non-finite derivative or indicator ends the block before that step, or ends
its location without a bracket, and the method's Python path redoes the step
and raises the FMUError. numba's cache does not see edits to `_kernels.py` or
`bracket.py`: touch this file after changing them.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ._kernels import any_dip, combine, finite, inside, locate, stage_state, trial

ARRAY = types.float64[::1]
MATRIX = types.float64[:, ::1]
CALLS = types.uint64[::1]
F64, I32, I64, U64 = types.float64, types.int32, types.int64, types.uint64
INDEX, OK = types.int64[::1], types.boolean
# Layout of the `calls` array: four function addresses, then the component.
SET_TIME, SET_STATES, DERIVATIVES, INDICATORS, COMPONENT = range(5)
FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures


@intrinsic
def _call_set_time(typingctx, address, component, t):
    """Call fmiXSetTime(component, t) at `address`; return its status."""

    def codegen(context, builder, signature, args):
        void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [void_p, ir.DoubleType()])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [builder.inttoptr(args[1], void_p), args[2]])

    return I32(U64, U64, F64), codegen


@intrinsic
def _call_buffer(typingctx, address, component, data, size):
    """Call fmiXFunction(component, double *data, size_t size); return its status."""

    def codegen(context, builder, signature, args):
        void_p, double_p = ir.IntType(8).as_pointer(), ir.DoubleType().as_pointer()
        size_t = context.get_value_type(types.uintp)
        fnty = ir.FunctionType(ir.IntType(32), [void_p, double_p, size_t])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        pointers = [
            builder.inttoptr(args[1], void_p),
            builder.inttoptr(args[2], double_p),
        ]
        return builder.call(fn, [*pointers, builder.zext(args[3], size_t)])

    return I32(U64, U64, U64, U64), codegen


@numba.njit(OK(CALLS, types.intp, F64, ARRAY, ARRAY), cache=True)
def _evaluate(calls, which, t, x, out):
    """Set (t, x), then fill `out` by calls[which]; True if OK and finite."""
    component = calls[COMPONENT]
    if _call_set_time(calls[SET_TIME], component, t) > FMI_WARNING:
        return False
    size = np.uint64(x.shape[0])
    if _call_buffer(calls[SET_STATES], component, x.ctypes.data, size) > FMI_WARNING:
        return False
    size = np.uint64(out.shape[0])
    if _call_buffer(calls[which], component, out.ctypes.data, size) > FMI_WARNING:
        return False
    return np.all(np.isfinite(out))


@numba.njit(
    types.boolean(CALLS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY), cache=True
)
def _rk_step(calls, t, x, h, a, b, c, y):
    """One RK step into y, as `Scheme.step` orders it; False if the FMU failed."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    for i in range(b.shape[0]):
        x_stage = stage_state(x, h, a, slopes, i)
        if not _evaluate(calls, DERIVATIVES, t + c[i] * h, x_stage, slopes[i]):
            return False
    y[:] = combine(x, h, b, slopes)
    return True


@numba.njit(
    types.boolean(CALLS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY, ARRAY),
    cache=True,
)
def _rk_step_from(calls, t, x, h, a, b, c, y, k1):
    """`_rk_step` with its first slope given as k1 (c_1 = 0): one FMU call fewer."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    slopes[0, :] = k1
    for i in range(1, b.shape[0]):
        x_stage = stage_state(x, h, a, slopes, i)
        if not _evaluate(calls, DERIVATIVES, t + c[i] * h, x_stage, slopes[i]):
            return False
    y[:] = combine(x, h, b, slopes)
    return True


@numba.njit(
    types.boolean(CALLS, types.int64[::1], F64, ARRAY, ARRAY, ARRAY), cache=True
)
def _guards(calls, index, t, x, z, g):
    """Write the indicators index[k] at (t, x) to g[k]; False if the FMU failed."""
    if index.shape[0] == 0:  # no guard: the Python path reads no indicator either
        return True
    if not _evaluate(calls, INDICATORS, t, x, z):
        return False
    for k in range(index.shape[0]):
        g[k] = z[index[k]]
    return True


@numba.njit(
    types.boolean(CALLS, INDEX, F64, ARRAY, ARRAY, F64, ARRAY, ARRAY, ARRAY, ARRAY),
    cache=True,
)
def _rates(calls, index, t, x, g, d, slope, z, indicators, out):
    """Write each guard's rate dg/dt at (t, x) to out, with g its values there,
    as `_kernels.rates` (slope, z and indicators are scratch); False if the FMU
    failed."""
    if not _evaluate(calls, DERIVATIVES, t, x, slope):
        return False
    for k in range(x.shape[0]):
        z[k] = x[k] + d * slope[k]
    if not _guards(calls, index, t + d, z, indicators, out):
        return False
    for i in range(out.shape[0]):
        out[i] = (out[i] - g[i]) / d
    return True


@overload(trial)
def fmu_trial(context, t, x, sigma, y, g):
    """`locate`'s trial over the FMU: context (a, b, c, calls, index, z) with
    the indicators `index` of z; False if an FMU call failed or gave non-finite
    values, as `fmu_flight`'s steps."""
    is_ours = isinstance(context, types.BaseTuple) and len(context) == 6
    if not (is_ours and context[3] == CALLS):
        return None

    def step(context, t, x, sigma, y, g):
        a, b, c, calls, index, z = context
        if not _rk_step(calls, t, x, sigma, a, b, c, y):
            return False
        return _guards(calls, index, t + sigma, y, z, g)

    return step


@numba.njit(
    I64(
        CALLS,
        INDEX,
        I64,
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
def fmu_flight(
    calls,
    index,
    nz,
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

    The guards are the FMU's event indicators `index` (of `nz`), with `sides`
    as in `_kernels.flight`. Stops before the first step that ends on or
    beyond a guard's surface, with non-finite values or a failed FMU call, in
    which a guard may dip beyond its surface and come back (`_kernels.any_dip`
    with the rates over d of `_rates`), at t_end, or after `max_steps`. Writes
    the accepted end times and states to ts[:n], xs[:n] and returns n. With
    width > 0 a step with finite values that ended beyond a guard is narrowed
    by `locate` (x_lo, g, ends), as in `_kernels.flight`; ends[2] stays -1 if
    it was not.
    """
    z = np.empty(nz)
    g0 = np.empty(index.shape[0])
    g1 = np.empty(index.shape[0])
    r0, r1 = np.empty(index.shape[0]), np.empty(index.shape[0])
    y = np.empty(x.shape[0])
    slope, ahead = np.empty(x.shape[0]), np.empty(x.shape[0])
    following = np.empty(x.shape[0])  # the slope at the step's end
    ends[2] = -1.0
    if not _guards(calls, index, t, x, z, g0):
        return 0
    watch = index.shape[0] > 0
    if watch and not _rates(calls, index, t, x, g0, d, slope, ahead, z, r0):
        return 0
    n = 0
    while n < max_steps and t < t_end - reach_tol:
        hs = min(h, t_end - t)
        if watch:
            if not _rk_step_from(calls, t, x, hs, a, b, c, y, slope):
                break
        elif not _rk_step(calls, t, x, hs, a, b, c, y):
            break
        if not _guards(calls, index, t + hs, y, z, g1):
            break
        defined = finite(y)
        if not (defined and inside(sides, g0, g1)):
            if defined and width > 0.0:
                locate(
                    (a, b, c, calls, index, z), sides, t, x, hs, g0, g1, width,
                    max_iter, x_lo, g, ends,
                )  # fmt: skip
            break
        if watch:
            if not _rates(calls, index, t + hs, y, g1, d, following, ahead, z, r1):
                break
            if any_dip(sides, g0, r0, g1, r1):
                break
            slope, following = following, slope
        t = t_end if t + hs >= t_end - reach_tol else t + hs
        x = y.copy()
        g0[:] = g1
        r0[:] = r1
        ts[n] = t
        xs[n, :] = x
        n += 1
    return n


STEP_FAILED, STEP_TAKEN, STEP_AND_INDICATORS = 0, 1, 2  # fmu_advance's outcomes


@numba.njit(I64(CALLS, MATRIX, ARRAY, ARRAY, F64, ARRAY, F64, ARRAY, ARRAY), cache=True)
def fmu_advance(calls, a, b, c, t, x, h, y, z):
    """One RK step from (t, x) into y, then the indicators at (t + h, y) into z.

    Returns STEP_FAILED if an FMU call failed or gave non-finite derivatives
    (the caller redoes the step in Python, which raises), STEP_TAKEN if only
    y is valid, STEP_AND_INDICATORS if z holds the indicators too.
    """
    if not _rk_step(calls, t, x, h, a, b, c, y):
        return STEP_FAILED
    if z.shape[0] == 0 or not _evaluate(calls, INDICATORS, t + h, y, z):
        return STEP_TAKEN
    return STEP_AND_INDICATORS
