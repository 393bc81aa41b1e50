"""Numbers checked where they enter, one rule for keywords, files and FMUs: an
FmibridgeError names the setting and the value."""

from __future__ import annotations

import ctypes
import math
import numbers
import reprlib
from typing import TypeGuard

import numpy as np

from .errors import FmibridgeError

# The largest count a compiled loop holds (a C `long`, 32 bits on Windows)
C_LONG_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_long) - 1) - 1


def is_number(value: object) -> TypeGuard[int | float]:
    """True for an int or a float, numpy's too (not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def as_float(value: int | float) -> float:
    """`value` as a float; +-inf for an integer beyond the float range."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_real(values: object) -> bool:
    """True for a real number or a (nested, rectangular) sequence of them."""
    try:
        array = np.asarray(values)
    except ValueError:  # ragged nested lists
        return False
    if array.dtype.kind == "O":  # a pandas column of Python objects, say
        return all(isinstance(v, numbers.Real) for v in array.flat)
    return array.dtype.kind in "biuf"  # bool, int, uint, float


def positive(name: str, value: object) -> float:
    """Return `value` as a float if it is a finite number > 0, else raise."""
    return finite(name, value, above=0.0)


def finite(name: str, value: object, *, above: float = -math.inf) -> float:
    """Return `value` as a float if it is a finite number (> `above`), else raise."""
    if not (is_number(value) and above < as_float(value) < math.inf):
        bound = "" if above == -math.inf else f" > {above:g}"
        raise FmibridgeError(
            f"`{name}` must be a finite number{bound}, got {reprlib.repr(value)}."
        )
    return float(value)


def at_least_one(name: str, value: object, most: int = C_LONG_MAX) -> int:
    """Return `value` if it is an integer in [1, most], else raise naming `name`."""
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
