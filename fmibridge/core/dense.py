"""A guard between two step ends: does it dip beyond its surface and come back?

A fixed step that starts and ends inside a guard's domain may still cross the
guard twice in between (a grazing impact, a hop shorter than the step), and the
signs at the ends do not show it. What the step knows does: the guard's value g
and its rate dg/dt along the flow at both ends. They fix the cubic Hermite
interpolant of g over the step (the dense output of the step's end slopes),
whose minimum locates where to look. `dips` says whether a guard approaches its
surface and then recedes within the step (an interior minimum of the guard,
signed positive inside by `inside_sign`), and `hermite_minimum` where the cubic
has it and its value there; the method then takes a trial step to that point
and sees whether the guard lies beyond it.

Like `bracket`, the functions use only `math`, so `flows._kernels` compiles the
same source with numba for the compiled loops.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.6 (dense output, cubic
Hermite interpolation from the step's end values and slopes).
"""

from __future__ import annotations

import math


def inside_sign(side: float, g0: float, g1: float) -> float:
    """Return the sign that makes a guard positive inside over a step from g0 to g1.

    `side` is +1 for a falling guard, -1 for a rising one and 0 for 'either'
    (an FMU's event indicator), whose inside is the side it starts on (or, from
    zero, the side it ends on).
    """
    if side != 0.0:
        return side
    if g0 != 0.0:
        return 1.0 if g0 > 0.0 else -1.0
    return 1.0 if g1 >= 0.0 else -1.0


def dips(s: float, g0: float, r0: float, g1: float, r1: float) -> bool:
    """Return True if the guard (signed by s, `inside_sign`) is inside at both
    ends, approaching at the start and receding at the end: it has a minimum
    inside the step, which may lie beyond its surface. g and r are its values
    and rates at the two ends."""
    return s * g0 >= 0.0 and s * g1 > 0.0 and s * r0 < 0.0 < s * r1


def hermite_minimum(
    s: float, g0: float, r0: float, g1: float, r1: float, hs: float
) -> tuple[float, float]:
    """Return (u, p): the minimum in (0, 1) of the cubic Hermite interpolant of
    s * g over a step of length hs (u the fraction of the step), and its value.

    With u the fraction of the step, p(u) = a u^3 + b u^2 + c u + d matches the
    values and rates at both ends; p'(0) < 0 < p'(1) (see `dips`), so p' has
    exactly one root in (0, 1), taken in the form that does not cancel.
    """
    d, c = s * g0, hs * s * r0
    e, f = s * g1, hs * s * r1
    b = 3.0 * (e - d) - 2.0 * c - f
    a = 2.0 * (d - e) + c + f
    if a == 0.0:  # p' = 2 b u + c is linear
        u = -c / (2.0 * b) if b != 0.0 else 0.5
    else:
        root = math.sqrt(max(b * b - 3.0 * a * c, 0.0))
        q = -(b + root) if b >= 0.0 else -(b - root)
        u1 = q / (3.0 * a)
        u2 = c / q if q != 0.0 else u1
        u = u1 if 0.0 < u1 < 1.0 else u2
    u = min(max(u, 0.0), 1.0)
    return u, ((a * u + b) * u + c) * u + d
