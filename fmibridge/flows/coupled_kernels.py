"""The numba kernels behind `CoupledModelExchange`: FMUs coupled, one RK step compiled.

A coupled system of Model Exchange FMUs without algebraic loops evaluates its
right-hand side as a fixed sequence of FMU calls: set every FMU's time and
states, read and write the connections in the coupling's order, get every
FMU's derivatives. These kernels make that sequence, and a whole RK step of
it, one call from Python through the FMUs' C functions, whose addresses the
lower FMI layer hands over (`FmiInstance.c_address`), as `fmu_kernels` does for
one FMU; FMI 2 and FMI 3 differ only in the get/set of reals (FMI 3 passes the
number of values once more). A kernel never raises: a non-OK status or a
non-finite derivative returns False, and the Python path redoes the work and
raises the FMUError. Touch this file after changing `_kernels.py` or
`fmu_kernels.py` (numba's cache does not see them).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._kernels import combine, stage_state
from .fmu_kernels import _call_buffer, _call_set_time

ARRAY, MATRIX = types.float64[::1], types.float64[:, ::1]
F64, I32, I64, U64 = types.float64, types.int32, types.int64, types.uint64
# Columns of the `calls` table, one row per FMU: five addresses and the component.
SET_TIME, SET_STATES, DERIVATIVES, GET_REAL, SET_REAL, COMPONENT = range(6)
READ, WRITE = 0, 1  # kinds of the plan's rows (kind, fmu, start, count)
FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures
TABLES = (
    types.uint64[:, ::1],  # calls
    types.int64[::1],  # counts_values: 1 for FMI 3 (get/set take nValues)
    types.int64[::1],  # offsets of the FMUs' states in x
    types.int64[:, ::1],  # plan
    types.uint32[::1],  # value references of the plan's rows
    types.int64[::1],  # their slots in `outputs`
    ARRAY,  # outputs: the connected outputs' values
    ARRAY,  # scratch buffer, as long as the longest row
)


@intrinsic
def _call_reals(typingctx, address, component, vrs, n, values, counted):
    """Call fmi2GetReal/SetReal(c, vr, n, value), or with `counted` the FMI 3
    fmi3GetFloat64/SetFloat64(c, vr, n, value, n); return the status."""

    def codegen(context, builder, signature, args):
        void_p, double_p = ir.IntType(8).as_pointer(), ir.DoubleType().as_pointer()
        size_t = context.get_value_type(types.uintp)
        uint_p = ir.IntType(32).as_pointer()
        pointers = [
            builder.inttoptr(args[1], void_p),
            builder.inttoptr(args[2], uint_p),
            builder.zext(args[3], size_t),
            builder.inttoptr(args[4], double_p),
        ]
        two = ir.FunctionType(ir.IntType(32), [void_p, uint_p, size_t, double_p])
        three = ir.FunctionType(
            ir.IntType(32), [void_p, uint_p, size_t, double_p, size_t]
        )
        is_counted = builder.icmp_unsigned("!=", args[5], ir.Constant(args[5].type, 0))
        with builder.if_else(is_counted) as (fmi3, fmi2):
            with fmi3:
                fn = builder.inttoptr(args[0], three.as_pointer())
                status3 = builder.call(fn, [*pointers, pointers[2]])
                block3 = builder.block
            with fmi2:
                fn = builder.inttoptr(args[0], two.as_pointer())
                status2 = builder.call(fn, pointers)
                block2 = builder.block
        status = builder.phi(ir.IntType(32))
        status.add_incoming(status3, block3)
        status.add_incoming(status2, block2)
        return status

    return I32(U64, U64, U64, U64, U64, U64), codegen


@numba.njit(
    types.boolean(types.uint64[:, ::1], types.int64[::1], I64, ARRAY), cache=True
)
def _each_fmu(calls, offsets, column, v):
    """Call calls[k, column](component, v's part of FMU k, its size) for every
    FMU (setContinuousStates, getDerivatives); False if one failed."""
    for k in range(calls.shape[0]):
        part = v[offsets[k] : offsets[k + 1]]
        address, component = calls[k, column], calls[k, COMPONENT]
        size = np.uint64(part.shape[0])
        if _call_buffer(address, component, part.ctypes.data, size) > FMI_WARNING:
            return False
    return True


@numba.njit(types.boolean(*TABLES, F64, ARRAY, ARRAY), cache=True)
def coupled_rhs(calls, counted, offsets, plan, vrs, slots, outputs, buffer, t, x, dx):
    """dx/dt of the coupled FMUs at (t, x) into dx; False if an FMU call failed."""
    for k in range(calls.shape[0]):
        if _call_set_time(calls[k, SET_TIME], calls[k, COMPONENT], t) > FMI_WARNING:
            return False
    if not _each_fmu(calls, offsets, SET_STATES, x):
        return False
    for row in range(plan.shape[0]):
        kind, k, start, count = plan[row, 0], plan[row, 1], plan[row, 2], plan[row, 3]
        if kind == WRITE:
            for i in range(count):
                buffer[i] = outputs[slots[start + i]]
        address = calls[k, GET_REAL] if kind == READ else calls[k, SET_REAL]
        status = _call_reals(
            address, calls[k, COMPONENT], vrs[start:].ctypes.data, np.uint64(count),
            buffer.ctypes.data, np.uint64(counted[k]),
        )  # fmt: skip
        if status > FMI_WARNING:
            return False
        if kind == READ:
            for i in range(count):
                outputs[slots[start + i]] = buffer[i]
    return _each_fmu(calls, offsets, DERIVATIVES, dx) and np.all(np.isfinite(dx))


@numba.njit(
    types.boolean(*TABLES, MATRIX, ARRAY, ARRAY, F64, ARRAY, F64, ARRAY), cache=True
)  # fmt: skip
def coupled_step(
    calls, counted, offsets, plan, vrs, slots, outputs, buffer, a, b, c, t, x, h, y
):
    """One RK step of the coupled FMUs from (t, x) into y, as `Scheme.step`
    orders it; False if an FMU call failed or gave non-finite derivatives."""
    slopes = np.empty((b.shape[0], x.shape[0]))
    for i in range(b.shape[0]):
        x_stage = stage_state(x, h, a, slopes, i)
        if not coupled_rhs(
            calls, counted, offsets, plan, vrs, slots, outputs, buffer,
            t + c[i] * h, x_stage, slopes[i],
        ):  # fmt: skip
            return False
    y[:] = combine(x, h, b, slopes)
    return True
