"""Illinois regula falsi on a bracketed sign change: where events are narrowed."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class End:
    """One end of a bracket: the abscissa, the function's value, and what else
    the evaluation produced (a state, guard values) for the caller."""

    sigma: float
    f: float
    data: object = None


def illinois(
    fun: Callable[[float], End],
    lo: End,
    hi: End,
    *,
    width: float,
    max_iter: int,
) -> tuple[End, End]:
    """Narrow [lo, hi], lo.f >= 0 > hi.f, until hi - lo <= width or max_iter trials.

    Illinois regula falsi: the secant of the ends, with the value of an end
    kept twice in a row halved, so both ends move and convergence is
    superlinear. Trials stay width/2 inside the bracket, so once the root is
    known to width/2 the next trial lands on its far side and the bracket
    closes. A non-finite value counts as beyond (the function is undefined
    there) and the next trial bisects, as does a trial from lo.f == 0.

    References
    ----------
    Dowell and Jarratt, BIT 11 (1971), the Illinois method.
    """
    f_lo, f_hi, side = lo.f, hi.f, 0
    for _ in range(max_iter):
        if hi.sigma - lo.sigma <= width:
            return lo, hi
        if math.isfinite(f_hi) and f_lo > 0.0:
            sigma = lo.sigma + (hi.sigma - lo.sigma) * f_lo / (f_lo - f_hi)
        else:
            sigma = 0.5 * (lo.sigma + hi.sigma)
        sigma = min(max(sigma, lo.sigma + 0.5 * width), hi.sigma - 0.5 * width)
        trial = fun(sigma)
        if not math.isfinite(trial.f):
            hi, f_hi, side = trial, math.nan, 0
        elif trial.f >= 0.0:
            lo, f_lo = trial, trial.f
            f_hi, side = (f_hi / 2 if side == -1 else f_hi), -1
        else:
            hi, f_hi = trial, trial.f
            f_lo, side = (f_lo / 2 if side == 1 else f_lo), 1
    return lo, hi
