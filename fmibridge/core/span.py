"""A run's time span checked against its step, at the front doors.

Every method steps from t0 to t_end by at most h. A span that is empty, a step
longer than the span (the run "reaches" t_end at t0), a step lost in round-off
(t + h == t) or one too short to reach t_end within max_steps gives a run that
looks finished and is not, or never finishes. The front doors (the command
line, adapter files, sweeps) refuse these with a message naming the setting; a
step as long as the span is one step, from t0 to t_end (FMPy's run of one
output interval).
"""

from __future__ import annotations

import math
import reprlib

from .errors import FmibridgeError
from .numbers import as_float, is_number


def check_span(t0: float, t_end: object, name: str = "t_end") -> float:
    """Return `t_end` as a float if it is a finite time after t0; else raise.

    Examples
    --------
    >>> check_span(0.0, 3)
    3.0
    """
    if not is_number(t_end):
        raise FmibridgeError(f"`{name}` must be a number, got {t_end!r}.")
    if not (t0 < as_float(t_end) < math.inf):
        raise FmibridgeError(
            f"`{name}` must be a finite time after t0 = {t0!r} s, got "
            f"{reprlib.repr(t_end)}."
        )
    return as_float(t_end)


def check_step(
    h: float, t0: float, t_end: float, max_steps: int, name: str = "h"
) -> float:
    """Return `h` if steps of h take a run from t0 to t_end; else raise naming why.

    Raises
    ------
    FmibridgeError
        If h is longer than t_end - t0, t + h == t somewhere in the span,
        or the span needs more than `max_steps` steps of h.

    Examples
    --------
    >>> check_step(1e-3, 0.0, 3.0, 10_000)
    0.001
    """
    span = t_end - t0
    if not h <= span:
        raise FmibridgeError(
            f"`{name}` = {h!r} s must not be longer than the run, t_end - t0 = "
            f"{span!r} s; choose h of at most a hundredth of it."
        )
    t_far = max(abs(t0), abs(t_end))
    if t_far + h == t_far:
        raise FmibridgeError(
            f"`{name}` = {h!r} s is lost in round-off at t = {t_far!r} s "
            f"(t + h == t); choose h well above {math.ulp(t_far):.3g} s."
        )
    return check_count(h, t0, t_end, max_steps, name)


def check_count(
    h: float, t0: float, t_end: float, max_steps: int, name: str = "h"
) -> float:
    """Return `h` if the span holds at most `max_steps` steps of h; else raise.

    A step ends on every output time too, so an output interval is checked
    the same way, before its grid is allocated.

    Examples
    --------
    >>> check_count(0.5, 0.0, 3.0, 10)
    0.5
    """
    span = t_end - t0
    if span / h > max_steps:
        raise FmibridgeError(
            f"`{name}` = {h!r} s needs {span / h:.3g} steps to reach t_end = "
            f"{t_end!r} s, more than max_steps = {max_steps}; raise {name} (or "
            f"max_steps)."
        )
    return h
