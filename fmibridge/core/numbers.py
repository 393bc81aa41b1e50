"""Numbers checked where they enter: one rule for keywords, files and FMUs.

A step, a tolerance or a width is a finite number > 0; a count is an integer
>= 1 that fits the C `long` the compiled loops hold it in; a time is a finite
number. Each check raises an FmibridgeError naming the setting and the value,
so a zero step is never taken for "no step given", a NaN tolerance never
reaches an FMU's solver, and an integer too large for C never surfaces as an
OverflowError from deep inside a run.
"""

from __future__ import annotations

import ctypes
import math
import numbers
import reprlib
from typing import TypeGuard

import numpy as np

from .errors import FmibridgeError

# The largest count a compiled loop holds (a C `long`: 64 bits on Linux and
# macOS, 32 on Windows)
C_LONG_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_long) - 1) - 1


def is_number(value: object) -> TypeGuard[int | float]:
    """True for a real number: an int or a float, numpy's too (a bool is not a
    number here).

    Examples
    --------
    >>> is_number(np.float32(0.5)), is_number(True), is_number("0.5")
    (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def as_float(value: int | float) -> float:
    """`value` as a float; +-inf for an integer beyond the float range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_real(values: object) -> bool:
    """True for a real number or a (nested, rectangular) sequence of them: not a
    string, a complex number, a ragged list, None or another object.

    Examples
    --------
    >>> is_real([1.0, 2]), is_real("1.0"), is_real(1j), is_real([[1.0], [1, 2]])
    (True, False, False, False)
    """
    try:
        array = np.asarray(values)
    except ValueError:  # ragged nested lists
        return False
    if array.dtype.kind == "O":  # a pandas column of Python objects, say
        return all(isinstance(v, numbers.Real) for v in array.flat)
    return array.dtype.kind in "biuf"  # bool, int, uint, float


def positive(name: str, value: object) -> float:
    """Return `value` as a float if it is a finite number > 0, else raise
    naming `name`.

    Examples
    --------
    >>> positive("h", 1e-3)
    0.001
    """
    if not (is_number(value) and 0 < as_float(value) < math.inf):
        raise FmibridgeError(
            f"`{name}` must be a finite number > 0, got {reprlib.repr(value)}."
        )
    return float(value)


def finite(name: str, value: object) -> float:
    """Return `value` as a float if it is a finite number, else raise naming
    `name` (an integer beyond the float range included)."""
    if not (is_number(value) and math.isfinite(as_float(value))):
        raise FmibridgeError(
            f"`{name}` must be a finite number, got {reprlib.repr(value)}."
        )
    return float(value)


def at_least_one(name: str, value: object, most: int = C_LONG_MAX) -> int:
    """Return `value` if it is an integer in [1, most], else raise naming `name`.

    Examples
    --------
    >>> at_least_one("max_steps", 10)
    10
    """
    count = 0  # not an integer
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        count = int(value)
    if count < 1:
        raise FmibridgeError(
            f"`{name}` must be an integer >= 1, got {reprlib.repr(value)}."
        )
    if count > most:
        raise FmibridgeError(
            f"`{name}` must be at most {most}, got {reprlib.repr(value)}."
        )
    return count
