"""Illinois regula falsi on a bracketed sign change: where events are narrowed.

The algorithm is a state machine on floats (`start`, `propose`, `narrow`,
`is_narrow`) that the caller drives: `illinois` drives it in Python, and
`flows._kernels` compiles the same functions with numba to narrow a crossing
inside the compiled loop. Only `math` is used inside them, and no helper
function, so numba compiles them as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# A start value below this fraction of |f| at the far end counts as zero: the
# start lies on the surface to round-off (1e-16 after a reset, against 1e-3).
SURFACE_RTOL = 1e-10

# The state's entries: the bracket's ends (abscissa and value), their values as
# the secant uses them (halved by Illinois), the side the last trial fell on
# (-1 lo, +1 hi, 0 none yet or non-finite), the hi replaced by the last finite
# hi ('before', nan value if none), the surface point (nan if none), whether lo
# is still that surface point (1.0 or 0.0), and the target width.
LO, LO_F, HI, HI_F, F_LO, F_HI, SIDE = range(7)
BEFORE, BEFORE_F, SURFACE, LO_IS_SURFACE, WIDTH = range(7, 12)
STATE_SIZE = 12


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
    # a list: Python floats, and faster to index than an array outside numba
    state = start(lo.sigma, lo.f, hi.sigma, hi.f, width).tolist()
    for _ in range(max_iter):
        if is_narrow(state):
            break
        trial = fun(propose(state))
        if narrow(state, trial.sigma, trial.f):
            lo = trial
        else:
            hi = trial
    return lo, hi


def is_bracket(lo_f: float, hi_f: float) -> bool:
    """Return True if ends with these values bracket a root as `illinois` needs:
    hi_f < 0 <= lo_f, where lo_f may lie below zero by round-off of the
    surface (SURFACE_RTOL of abs(hi_f): a reset's state one ulp beyond it)."""
    return hi_f < 0.0 and lo_f >= -SURFACE_RTOL * abs(hi_f)


def start(
    lo_sigma: float, lo_f: float, hi_sigma: float, hi_f: float, width: float
) -> np.ndarray:
    """Return the state of a bracket [lo, hi] to narrow to `width` (see `illinois`).

    A start within round-off of the surface (a reset's state) counts as on it.
    """
    state = np.empty(STATE_SIZE)
    state[LO], state[LO_F], state[HI], state[HI_F] = lo_sigma, lo_f, hi_sigma, hi_f
    state[F_LO], state[F_HI], state[SIDE] = lo_f, hi_f, 0.0
    state[BEFORE], state[BEFORE_F] = math.nan, math.nan
    on_surface = lo_f <= SURFACE_RTOL * abs(hi_f)
    state[SURFACE] = lo_sigma if on_surface else math.nan
    state[LO_IS_SURFACE] = 1.0 if on_surface else 0.0
    state[WIDTH] = width
    return state


def is_narrow(state) -> bool:
    """Return True once the bracket is no wider than its target width."""
    return state[HI] - state[LO] <= state[WIDTH]


def propose(state) -> float:
    """Return the next trial abscissa, width/2 inside the bracket (see `illinois`).

    The parabola through (surface, 0), another point and hi is s (p + q s) with
    s = sigma - surface, so f / s is linear in s; other is lo once lo has left
    the surface, else the hi before the last.
    """
    lo, hi = state[LO], state[HI]
    middle = 0.5 * (lo + hi)
    sigma = middle
    if state[LO_F] == 0.0 and state[LO_IS_SURFACE] == 0.0:  # a root: step past it
        sigma = lo
    elif not math.isnan(state[SURFACE]) and math.isfinite(state[HI_F]):
        surface = state[SURFACE]
        if state[LO_IS_SURFACE] == 0.0:
            other, other_f = lo, state[LO_F]
        else:
            other, other_f = state[BEFORE], state[BEFORE_F]
        s1, s2 = hi - surface, other - surface
        if math.isfinite(other_f) and s2 != s1 and s2 != 0.0:
            r1, r2 = state[HI_F] / s1, other_f / s2
            q = (r2 - r1) / (s2 - s1)
            root = surface - (r1 - q * s1) / q if q != 0.0 else math.nan
            if lo < root < hi:
                sigma = root
    elif math.isfinite(state[F_HI]) and state[F_LO] > 0.0:
        f_lo = state[F_LO]
        sigma = lo + (hi - lo) * f_lo / (f_lo - state[F_HI])
    low, high = lo + 0.5 * state[WIDTH], hi - 0.5 * state[WIDTH]
    if low > sigma:  # min(max(sigma, low), high), nan kept as Python's min/max do
        sigma = low
    if high < sigma:
        sigma = high
    return sigma


def narrow(state, sigma: float, f: float) -> bool:
    """Replace the end on the trial's side by (sigma, f); return True if it was lo.

    A non-finite f counts as beyond. The end's value as the secant uses it is
    halved when the other end moved twice in a row (Illinois).
    """
    if not math.isfinite(f):
        state[HI], state[HI_F], state[F_HI], state[SIDE] = sigma, f, math.nan, 0.0
        return False
    if f >= 0.0:
        state[LO], state[LO_F], state[F_LO] = sigma, f, f
        if state[SIDE] == -1.0:
            state[F_HI] = state[F_HI] / 2
        state[SIDE], state[LO_IS_SURFACE] = -1.0, 0.0
        return True
    finite_hi = math.isfinite(state[HI_F])
    state[BEFORE] = state[HI]
    state[BEFORE_F] = state[HI_F] if finite_hi else math.nan
    state[HI], state[HI_F], state[F_HI] = sigma, f, f
    if state[SIDE] == 1.0:
        state[F_LO] = state[F_LO] / 2
    state[SIDE] = 1.0
    return False
