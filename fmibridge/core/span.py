"""A run's time span checked against its step, at the front doors: a span or
step that would give a run that looks finished and is not, or never ends."""

from __future__ import annotations

import math
import reprlib

from .errors import FmibridgeError
from .numbers import as_float, is_number


def check_span(t0: float, t_end: object, name: str = "t_end") -> float:
    """Return `t_end` as a float if it is a finite time after t0; else raise."""
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
    """Return `h` if steps of h take a run from t0 to t_end (h within the span,
    not lost in round-off, at most `max_steps` of them); else raise."""
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
    """Return `h` if the span holds at most `max_steps` steps of h; else raise."""
    span = t_end - t0
    if span / h > max_steps:
        raise FmibridgeError(
            f"`{name}` = {h!r} s needs {span / h:.3g} steps to reach t_end = "
            f"{t_end!r} s, more than max_steps = {max_steps}; raise {name} (or "
            f"max_steps)."
        )
    return h
