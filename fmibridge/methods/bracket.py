"""Illinois regula falsi on a bracketed sign change: where events are narrowed."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

# A start value below this fraction of |f| at the far end counts as zero: the
# start lies on the surface to round-off (1e-16 after a reset, against 1e-3).
SURFACE_RTOL = 1e-10


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
    there) and the next trial bisects.

    From lo.f == 0 (a curve that leaves a surface and comes back to it: the
    next bounce after an impact) the secant says nothing and is badly
    unbalanced later; each trial then takes the root in (lo, hi) of the
    parabola through that surface point and two more (the bracket's ends, or
    hi and the previous hi while lo is still the surface point): exact for a
    flight under constant acceleration. The first trial, and any whose
    parabola has no root inside, bisects.

    References
    ----------
    Dowell and Jarratt, BIT 11 (1971), the Illinois method.
    """
    f_lo, f_hi, side, before = lo.f, hi.f, 0, None
    # a start within round-off of the surface (a reset's state) counts as on it
    surface = lo if lo.f <= SURFACE_RTOL * abs(hi.f) else None
    for _ in range(max_iter):
        if hi.sigma - lo.sigma <= width:
            return lo, hi
        if lo.f == 0.0 and lo is not surface:  # a root: step width/2 past it
            sigma = lo.sigma
        elif surface is not None and math.isfinite(hi.f):
            other = lo if lo is not surface else before
            sigma = _parabola_root(surface, other, lo, hi)
        elif math.isfinite(f_hi) and f_lo > 0.0:
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
            before = hi if math.isfinite(hi.f) else None
            hi, f_hi = trial, trial.f
            f_lo, side = (f_lo / 2 if side == 1 else f_lo), 1
    return lo, hi


def _parabola_root(surface: End, other: End | None, lo: End, hi: End) -> float:
    """Return the root in (lo, hi) of the parabola through (surface, 0), other and
    hi, or the midpoint of (lo, hi) if there is none (or no other point yet).

    With s = sigma - surface.sigma the parabola is s (p + q s): f / s is linear.
    """
    middle = 0.5 * (lo.sigma + hi.sigma)
    if other is None or not math.isfinite(other.f):
        return middle
    s1, s2 = hi.sigma - surface.sigma, other.sigma - surface.sigma
    if s2 == s1 or s2 == 0.0:
        return middle
    r1, r2 = hi.f / s1, other.f / s2
    q = (r2 - r1) / (s2 - s1)
    root = surface.sigma - (r1 - q * s1) / q if q != 0.0 else math.nan
    return root if lo.sigma < root < hi.sigma else middle
