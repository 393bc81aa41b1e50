"""The numba kernel behind `ModelExchangeFlow.steps_inside`: FMU steps until an event.

The loop calls the FMU's own C functions (setTime, setContinuousStates,
getDerivatives, getEventIndicators, and get and set of reals) through their
raw addresses, which the lower FMI layer hands over as integers
(`_ModelExchange.c_calls`). FMI 2.0 and 3.0 declare the first four with the
same C signature (FMI 3.0's get and set of reals take one more argument), so
one kernel serves both, compiled once per machine (cached on disk) and never
per FMU: a call from Python costs about a microsecond (a first-class function
argument would cost ~40 us, a closure per FMU ~0.2 s of compilation).

An FMU's view, `fmu`, is the tuple (calls, input vrs, output vrs, code,
consts, starts): its C functions, then the programs (`flows.programs`) of its
time-varying inputs (of V = [t]), set before every evaluation, and of its
guards, over V = [t, x, z, y] (the states, the event indicators, the outputs
that the guards read), as `programs.packed` lays them out: an FMU's own
indicator is the program that reads its z, an adapter's guard the program of
its expression.

The kernel follows `Scheme.step` operation by operation and the methods'
acceptance rule (`_kernels.inside`), so a step it accepts is bit for bit the
step the Python loop takes, and it narrows the crossing step after them with
`_kernels.locate`, the compiled loop's own Illinois location, through
`fmu_trial`. It never raises: a non-OK status (above fmiWarning), a
non-finite derivative, indicator, input or guard value ends the block before
that step, or ends its location without a bracket, and the method's Python
path redoes the step and raises the FMUError or ExpressionError. numba's cache
does not see edits to `_kernels.py`, `program_kernels.py` or `bracket.py`:
touch this file after changing them.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ._kernels import any_dip, combine, finite, inside, locate, stage_state, trial
from .program_kernels import evaluate

ARRAY = types.float64[::1]
MATRIX = types.float64[:, ::1]
CALLS = types.uint64[::1]
VRS, CODE = types.uint32[::1], types.int64[::1]
FMU = types.Tuple((CALLS, VRS, VRS, CODE, ARRAY, CODE))  # see the module docstring
WORK = types.UniTuple(ARRAY, 2)  # scratch: V and the programs' stack
F64, I32, I64, U64 = types.float64, types.int32, types.int64, types.uint64
OK = types.boolean
# Layout of the `calls` array: function addresses, the component, and 1 where
# get and set of reals take nValues (FMI 3.0).
SET_TIME, SET_STATES, DERIVATIVES, INDICATORS, COMPONENT = range(5)
GET_REALS, SET_REALS, COUNTS = range(5, 8)
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


def _reals_call(counted: bool):
    """Return the intrinsic that calls fmi2GetReal/SetReal(component, vrs, size,
    data), or where `counted`, fmi3GetFloat64/SetFloat64(component, vrs, size,
    data, size), at an address; it returns the status."""

    def typer(typingctx, address, component, vrs, size, data):
        def codegen(context, builder, signature, args):
            void_p, double_p = ir.IntType(8).as_pointer(), ir.DoubleType().as_pointer()
            uint_p = ir.IntType(32).as_pointer()
            size_t = context.get_value_type(types.uintp)
            kinds = [void_p, uint_p, size_t, double_p] + [size_t] * counted
            fn = builder.inttoptr(
                args[0], ir.FunctionType(ir.IntType(32), kinds).as_pointer()
            )
            size = builder.zext(args[3], size_t)
            values = [
                builder.inttoptr(args[1], void_p),
                builder.inttoptr(args[2], uint_p),
                size,
                builder.inttoptr(args[4], double_p),
            ]
            return builder.call(fn, values + [size] * counted)

        return I32(U64, U64, U64, U64, U64), codegen

    typer.__name__ = "_call_reals_counted" if counted else "_call_reals"
    return intrinsic(typer)


_call_reals, _call_reals_counted = _reals_call(False), _reals_call(True)


@numba.njit(OK(CALLS, types.intp, VRS, ARRAY), cache=True)
def _reals(calls, which, vrs, values):
    """Get (which = GET_REALS) or set (SET_REALS) the reals `vrs` from or to
    `values`; True if OK."""
    size = np.uint64(vrs.shape[0])
    if size == 0:
        return True
    address, component = calls[which], calls[COMPONENT]
    if calls[COUNTS]:
        status = _call_reals_counted(
            address, component, vrs.ctypes.data, size, values.ctypes.data
        )
    else:
        status = _call_reals(
            address, component, vrs.ctypes.data, size, values.ctypes.data
        )
    return status <= FMI_WARNING


@numba.njit(OK(FMU, F64), cache=True)
def _set_inputs(fmu, t):
    """Set the time-varying inputs to their programs' values at t; True if they
    are finite and the FMU took them."""
    calls, vrs, _, code, consts, starts = fmu
    n = vrs.shape[0]
    if n == 0:
        return True
    v, stack = np.full(1, t), np.empty(code.shape[0] // 2 + 1)
    values = np.empty(n)
    for k in range(n):
        values[k] = evaluate(code, consts, starts[k], starts[k + 1], v, stack)
        if not np.isfinite(values[k]):
            return False
    return _reals(calls, SET_REALS, vrs, values)


@numba.njit(OK(FMU, F64, ARRAY), cache=True)
def _set_point(fmu, t, x):
    """Set the inputs at t, the time t and the states x; True if OK."""
    calls = fmu[0]
    component = calls[COMPONENT]
    if not _set_inputs(fmu, t):
        return False
    if _call_set_time(calls[SET_TIME], component, t) > FMI_WARNING:
        return False
    size = np.uint64(x.shape[0])
    return (
        _call_buffer(calls[SET_STATES], component, x.ctypes.data, size) <= FMI_WARNING
    )


@numba.njit(OK(FMU, types.intp, F64, ARRAY, ARRAY), cache=True)
def _evaluate(fmu, which, t, x, out):
    """Set (t, x) and the inputs, then fill `out` by calls[which]; True if OK
    and finite."""
    calls = fmu[0]
    if not _set_point(fmu, t, x):
        return False
    size = np.uint64(out.shape[0])
    status = _call_buffer(calls[which], calls[COMPONENT], out.ctypes.data, size)
    if status > FMI_WARNING:
        return False
    return np.all(np.isfinite(out))


@numba.njit(OK(FMU, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY), cache=True)
def _rk_step(fmu, t, x, h, a, b, c, y):
    """One RK step into y, as `Scheme.step` orders it; False if the FMU failed."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    for i in range(b.shape[0]):
        x_stage = stage_state(x, h, a, slopes, i)
        if not _evaluate(fmu, DERIVATIVES, t + c[i] * h, x_stage, slopes[i]):
            return False
    y[:] = combine(x, h, b, slopes)
    return True


@numba.njit(OK(FMU, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY, ARRAY), cache=True)
def _rk_step_from(fmu, t, x, h, a, b, c, y, k1):
    """`_rk_step` with its first slope given as k1 (c_1 = 0): one FMU call fewer."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    slopes[0, :] = k1
    for i in range(1, b.shape[0]):
        x_stage = stage_state(x, h, a, slopes, i)
        if not _evaluate(fmu, DERIVATIVES, t + c[i] * h, x_stage, slopes[i]):
            return False
    y[:] = combine(x, h, b, slopes)
    return True


@numba.njit(I64(FMU), cache=True)
def n_guards(fmu):
    """The number of guard programs in `fmu` (after its inputs')."""
    return fmu[5].shape[0] - 1 - fmu[1].shape[0]


@numba.njit(OK(FMU, I64, F64, ARRAY, WORK, ARRAY), cache=True)
def _guards(fmu, nz, t, x, work, g):
    """Write the guards at (t, x) to g: V = [t, x, z, y] filled (the nz event
    indicators and the outputs only where a guard reads them), then each
    guard's program; False if the FMU failed or a value is not finite."""
    calls, n_in, outputs = fmu[0], fmu[1].shape[0], fmu[2]
    code, consts, starts = fmu[3], fmu[4], fmu[5]
    if n_guards(fmu) == 0:  # no guard: the Python path reads nothing either
        return True
    v, stack = work
    nx = x.shape[0]
    v[0] = t
    v[1 : 1 + nx] = x
    if nz > 0 and not _evaluate(fmu, INDICATORS, t, x, v[1 + nx : 1 + nx + nz]):
        return False
    if outputs.shape[0] > 0:
        if nz == 0 and not _set_point(fmu, t, x):
            return False
        if not _reals(calls, GET_REALS, outputs, v[1 + nx + nz :]):
            return False
    for k in range(g.shape[0]):
        g[k] = evaluate(code, consts, starts[n_in + k], starts[n_in + k + 1], v, stack)
        if not np.isfinite(g[k]):
            return False
    return True


@numba.njit(OK(FMU, I64, F64, ARRAY, ARRAY, F64, ARRAY, ARRAY, WORK, ARRAY), cache=True)
def _rates(fmu, nz, t, x, g, d, slope, z, work, out):
    """Write each guard's rate dg/dt at (t, x) to out, with g its values there,
    as `_kernels.rates` (slope and z are scratch); False if the FMU failed."""
    if not _evaluate(fmu, DERIVATIVES, t, x, slope):
        return False
    for k in range(x.shape[0]):
        z[k] = x[k] + d * slope[k]
    if not _guards(fmu, nz, t + d, z, work, out):
        return False
    for i in range(out.shape[0]):
        out[i] = (out[i] - g[i]) / d
    return True


@overload(trial)
def fmu_trial(context, t, x, sigma, y, g):
    """`locate`'s trial over the FMU: context (a, b, c, fmu, nz, work); False if
    an FMU call failed or gave non-finite values, as `fmu_flight`'s steps."""
    is_ours = isinstance(context, types.BaseTuple) and len(context) == 6
    if not (is_ours and context[3] == FMU):
        return None

    def step(context, t, x, sigma, y, g):
        a, b, c, fmu, nz, work = context
        if not _rk_step(fmu, t, x, sigma, a, b, c, y):
            return False
        return _guards(fmu, nz, t + sigma, y, work, g)

    return step


@numba.njit(
    I64(
        FMU,
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
    fmu,
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

    The guards are the programs of `fmu` over V = [t, x, z, y] with the nz
    event indicators z (module docstring), with `sides` as in
    `_kernels.flight`. Stops before the first step that ends on or beyond a
    guard's surface, with non-finite values or a failed FMU call, in which a
    guard may dip beyond its surface and come back (`_kernels.any_dip` with the
    rates over d of `_rates`), at t_end, or after `max_steps`. Writes the
    accepted end times and states to ts[:n], xs[:n] and returns n. With width >
    0 a step with finite values that ended beyond a guard is narrowed by
    `locate` (x_lo, g, ends), as in `_kernels.flight`; ends[2] stays -1 if it
    was not.
    """
    n_g = n_guards(fmu)
    work = (
        np.empty(1 + x.shape[0] + nz + fmu[2].shape[0]),
        np.empty(fmu[3].shape[0] // 2 + 1),
    )
    g0, g1 = np.empty(n_g), np.empty(n_g)
    r0, r1 = np.empty(n_g), np.empty(n_g)
    y, z = np.empty(x.shape[0]), np.empty(x.shape[0])
    slope = np.empty(x.shape[0])
    following = np.empty(x.shape[0])  # the slope at the step's end
    ends[2] = -1.0
    if not _guards(fmu, nz, t, x, work, g0):
        return 0
    watch = n_g > 0
    if watch and not _rates(fmu, nz, t, x, g0, d, slope, z, work, r0):
        return 0
    n = 0
    while n < max_steps and t < t_end - reach_tol:
        hs = min(h, t_end - t)
        if watch:
            if not _rk_step_from(fmu, t, x, hs, a, b, c, y, slope):
                break
        elif not _rk_step(fmu, t, x, hs, a, b, c, y):
            break
        if not _guards(fmu, nz, t + hs, y, work, g1):
            break
        defined = finite(y)
        if not (defined and inside(sides, g0, g1)):
            if defined and width > 0.0:
                locate(
                    (a, b, c, fmu, nz, work), sides, t, x, hs, g0, g1, width,
                    max_iter, x_lo, g, ends,
                )  # fmt: skip
            break
        if watch:
            if not _rates(fmu, nz, t + hs, y, g1, d, following, z, work, r1):
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


@numba.njit(I64(FMU, MATRIX, ARRAY, ARRAY, F64, ARRAY, F64, ARRAY, ARRAY), cache=True)
def fmu_advance(fmu, a, b, c, t, x, h, y, z):
    """One RK step from (t, x) into y, then the indicators at (t + h, y) into z.

    Returns STEP_FAILED if an FMU call failed or gave non-finite derivatives
    or inputs (the caller redoes the step in Python, which raises), STEP_TAKEN
    if only y is valid, STEP_AND_INDICATORS if z holds the indicators too.
    """
    if not _rk_step(fmu, t, x, h, a, b, c, y):
        return STEP_FAILED
    if z.shape[0] == 0 or not _evaluate(fmu, INDICATORS, t + h, y, z):
        return STEP_TAKEN
    return STEP_AND_INDICATORS
