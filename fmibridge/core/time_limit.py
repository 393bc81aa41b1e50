"""A wall-clock time limit on a run, checked by `Method` between steps: it stops
with `Status.TIME_LIMIT` and the samples so far. Native code that hangs is
ended from outside (`core.supervision`).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from typing import NamedTuple

from .numbers import positive


class Deadline(NamedTuple):
    """When the run must stop (time.monotonic()), and the limit in seconds."""

    at: float
    seconds: float

    def is_over(self) -> bool:
        """True once the deadline has passed."""
        return time.monotonic() > self.at

    def detail(self, t: float) -> str:
        """Where the run was stopped, for `Result.detail`."""
        return f"Its time limit of {self.seconds:g} s of wall time ended at t = {t!r}."


_DEADLINE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "fmibridge_deadline", default=None
)


def check_timeout(seconds: object, name: str = "timeout") -> float | None:
    """Return `seconds` as a float (None stays None) if it is a finite number > 0."""
    return None if seconds is None else positive(name, seconds)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Give the runs inside the block at most `seconds` of wall time (None: no
    limit); an inner limit never extends an outer one.

    Examples
    --------
    >>> with time_limit(60.0):
    ...     current().seconds
    60.0
    """
    seconds = check_timeout(seconds)
    if seconds is None:
        yield
        return
    deadline = Deadline(time.monotonic() + seconds, seconds)
    outer = _DEADLINE.get()
    if outer is not None and outer.at <= deadline.at:
        deadline = outer
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current() -> Deadline | None:
    """The deadline of the runs started now, or None."""
    return _DEADLINE.get()
