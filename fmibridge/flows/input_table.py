"""Input tables: an FMU input given as samples in time, as FMPy takes it.

A continuous input is interpolated linearly; a held one (discrete, or not a
real) keeps each row's value until the next. Two rows at one time, or a held
value that changes, are a jump: a time event, the value before it up to the
jump and after it beyond. Outside the rows the nearest value holds.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core.errors import FmibridgeError
from ..core.numbers import is_real
from ._fmu import input_value


@dataclass(frozen=True, eq=False)
class InputTable:
    """One input as a table of times and values.

    Parameters
    ----------
    t : array_like
        Times, s: finite and non-decreasing (a repeated time is a jump).
    u : array_like
        The input's value at each time.
    name : str, optional
        The input's name, for messages.

    Examples
    --------
    >>> ramp = InputTable([0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 5.0, 6.0])
    >>> ramp.value(0.5, held=False), ramp.value(1.0, held=False)
    (0.5, 1.0)
    >>> ramp.value(1.0, held=False, after=True), ramp.jumps(held=False).tolist()
    (5.0, [1.0])
    """

    t: np.ndarray
    u: np.ndarray
    name: str = "input"

    def __post_init__(self) -> None:
        for column, values in (("times", self.t), ("values", self.u)):
            if not is_real(values):
                raise FmibridgeError(
                    f"Input {self.name!r}: the table's {column} must be numbers, "
                    f"got {reprlib.repr(values)}."
                )
        t = np.ascontiguousarray(self.t, dtype=float)  # `input_value` takes
        u = np.ascontiguousarray(self.u, dtype=float)  # contiguous rows
        if t.ndim != 1 or u.shape != t.shape or not len(t):
            raise FmibridgeError(
                f"Input {self.name!r}: the table needs as many values as times "
                f"(one column each, at least one row); got {t.shape} and {u.shape}."
            )
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(u))):
            raise FmibridgeError(
                f"Input {self.name!r}: times and values must be finite."
            )
        if np.any(np.diff(t) < 0):
            raise FmibridgeError(
                f"Input {self.name!r}: times must not decrease (a repeated time is "
                f"a jump)."
            )
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "u", u)

    def value(self, t: float, *, held: bool, after: bool = False) -> float:
        """Return u(t): interpolated, or `held` from the row before t; at a
        jump the value before it, or with `after` after (`_fmu.table_value`)."""
        return input_value(self.t, self.u, t, held, after)

    def jumps(self, *, held: bool) -> np.ndarray:
        """Return the times where the input jumps, increasing."""
        changes = np.diff(self.u) != 0
        if not held:
            changes &= np.diff(self.t) == 0
        return np.unique(self.t[1:][changes])


def jump_times(tables: Sequence[tuple[InputTable, bool]]) -> np.ndarray:
    """Return every jump of (table, held) pairs, increasing and once each."""
    found = [table.jumps(held=held) for table, held in tables]
    return np.unique(np.concatenate(found)) if found else np.empty(0)
