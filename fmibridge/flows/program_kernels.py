"""The numba kernel that evaluates `programs.Program` code: one stack machine.

Compiled once per machine (cached on disk) and never per expression. Each
instruction is one float operation as Python does it: numba's float `%` and
`//` follow Python's, math.pow and the math functions call the C library
that Python's math module calls. Any operation with a non-finite result ends
the evaluation with NaN (where Python would raise, or carry inf or NaN
further): the caller then leaves that evaluation to Python.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import types

from . import programs as p

F64, I64 = types.float64, types.int64
CODE, VALUES = types.int64[::1], types.float64[::1]


@numba.njit(F64(I64, F64), cache=True, error_model="numpy")
def _call1(k, x):
    """The function `programs.ONE_ARGUMENT[k]` of x."""
    if k == 0:
        return math.sin(x)
    if k == 1:
        return math.cos(x)
    if k == 2:
        return math.tan(x)
    if k == 3:
        return math.asin(x)
    if k == 4:
        return math.acos(x)
    if k == 5:
        return math.atan(x)
    if k == 6:
        return math.sinh(x)
    if k == 7:
        return math.cosh(x)
    if k == 8:
        return math.tanh(x)
    if k == 9:
        return math.exp(x)
    if k == 10:
        return math.log(x)
    if k == 11:
        return math.log10(x)
    if k == 12:
        return math.sqrt(x)
    if k == 13:
        return math.fabs(x)
    if k == 14:
        return np.floor(x)
    return np.ceil(x)


@numba.njit(F64(I64, F64, F64), cache=True, error_model="numpy")
def _call2(k, a, b):
    """The function `programs.TWO_ARGUMENTS[k]` of (a, b)."""
    if k == 0:
        return math.atan2(a, b)
    if k == 1:
        return math.copysign(a, b)
    numerator, denominator = math.log(a), math.log(b)  # Python's log(x, base)
    if not (np.isfinite(numerator) and np.isfinite(denominator)):
        return np.nan  # log(0) and log of a negative are errors there
    return numerator / denominator


@numba.njit(F64(I64, F64, F64), cache=True, error_model="numpy")
def _binary(op, a, b):
    """a op b for the arithmetic and comparison instructions (booleans as 1, 0)."""
    if op == p.ADD:
        return a + b
    if op == p.SUB:
        return a - b
    if op == p.MUL:
        return a * b
    if op == p.DIV:
        return a / b
    if op == p.MOD:
        return a % b
    if op == p.FLOORDIV:
        return a // b
    if op == p.POW:
        return math.pow(a, b)
    if op == p.EQ:
        return 1.0 if a == b else 0.0
    if op == p.NE:
        return 1.0 if a != b else 0.0
    if op == p.LT:
        return 1.0 if a < b else 0.0
    if op == p.LE:
        return 1.0 if a <= b else 0.0
    if op == p.GT:
        return 1.0 if a > b else 0.0
    return 1.0 if a >= b else 0.0


@numba.njit(F64(VALUES, I64), cache=True)
def _extreme(values, sign):
    """min (sign 1) or max (sign -1) of values, the first of equals as Python's
    min and max return it."""
    best = values[0]
    for k in range(1, values.shape[0]):
        if sign * values[k] < sign * best:
            best = values[k]
    return best


@numba.njit(F64(CODE, VALUES, I64, I64, VALUES, VALUES), cache=True)
def evaluate(code, consts, start, end, v, stack):
    """Run instructions start:end of `code` (op, argument pairs) over the
    variables v; return the value, or NaN if an operation was not finite.
    `stack` is scratch, at least as long as the program."""
    top, i = 0, start
    while i < end:
        op, arg = code[2 * i], code[2 * i + 1]
        i += 1
        if op == p.CONST or op == p.VAR:
            stack[top] = consts[arg] if op == p.CONST else v[arg]
            top += 1
            continue
        if op == p.AND or op == p.OR:
            if (stack[top - 1] == 0.0) == (op == p.AND):
                i = arg  # decided: keep the value
            else:
                top -= 1
            continue
        if op == p.IF_FALSE:
            top -= 1
            if stack[top] == 0.0:
                i = arg
            continue
        if op == p.JUMP:
            i = arg
            continue
        if op == p.MIN or op == p.MAX:
            top -= arg
            value = _extreme(stack[top : top + arg], 1 if op == p.MIN else -1)
        elif op == p.NEG:
            top -= 1
            value = -stack[top]
        elif op == p.NOT:
            top -= 1
            value = 1.0 if stack[top] == 0.0 else 0.0
        elif op == p.CALL1:
            top -= 1
            value = _call1(arg, stack[top])
        else:
            top -= 2
            a, b = stack[top], stack[top + 1]
            value = _call2(arg, a, b) if op == p.CALL2 else _binary(op, a, b)
        if not np.isfinite(value):
            return np.nan
        stack[top] = value
        top += 1
    result = stack[0]
    return result if np.isfinite(result) else np.nan
