"""First time at which a set of polynomials are all non-negative.

The extrapolation method needs the smallest positive h at which a guard's
extrapolation polynomial P(h) reaches zero (for a conjunction of guards: at
which every component's P has reached zero). Filtering the real roots of P is
fragile: at a grazing contact P has a double root, which `numpy.roots` may
return as a complex pair with a tiny imaginary part, and the event is lost.
Here every real part of every root of P and of P' in (0, upper) is a
breakpoint; between breakpoints each P is monotone, so checking signs at the
breakpoints (the critical points included) and at the midpoints between
them (a root evaluates to +-round-off, so an interval where several P are
>= 0 may be seen only inside) cannot step over a touching maximum or a
short common interval; each crossing is then bracketed and found by
Brent's method.

References
----------
Esposito and Kumar (2007), Sec. 2.4 (roots of eq. 15, grazing roots included).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq

_poly = np.polynomial.polynomial
ROOT_XTOL = 4 * np.finfo(float).eps  # Brent's tolerance, relative to the bracket end


def first_reach(polys: Sequence[np.ndarray], upper: float) -> float:
    """Return the smallest u in (0, upper] with every p(u) >= 0, or inf.

    Parameters
    ----------
    polys : sequence of ndarray
        Power coefficients (increasing degree) of each polynomial.
    upper : float
        End of the search interval, > 0.

    Returns
    -------
    float
        The first reach; 0.0 if all are already >= 0 just after u = 0.
    """
    ends = _breakpoints(polys, upper)
    mids = [0.5 * (p + q) for p, q in zip([0.0, *ends], ends, strict=False)]
    points = sorted(ends + mids)
    a, at_a = 0.0, [not _negative_after_zero(p) for p in polys]
    if all(at_a):
        return 0.0
    for b in points:
        at_b = [_poly.polyval(b, p) >= 0.0 for p in polys]
        if all(at_b):
            pairs = zip(polys, at_a, strict=True)
            return max(a if ok else _crossing(p, a, b) for p, ok in pairs)
        a, at_a = b, at_b
    return math.inf


def _breakpoints(polys: Sequence[np.ndarray], upper: float) -> list[float]:
    """Real parts of the roots of each p and p' inside (0, upper), and upper."""
    found = [upper]
    for p in polys:
        for q in (p, _poly.polyder(p)):
            q = np.trim_zeros(q, "b")
            if len(q) > 1:
                re = _poly.polyroots(q).real
                found.extend(re[(re > 0.0) & (re < upper)].tolist())
    return sorted(set(found))


def _negative_after_zero(p: np.ndarray) -> bool:
    """True if p(u) < 0 for small u > 0 (sign of the first non-zero coefficient)."""
    nonzero = np.flatnonzero(p)
    return bool(nonzero.size) and p[nonzero[0]] < 0.0


def _crossing(p: np.ndarray, a: float, b: float) -> float:
    """The root of p, monotone on [a, b] with p(a) < 0 <= p(b)."""
    if _poly.polyval(b, p) == 0.0:
        return b
    return brentq(
        lambda u: _poly.polyval(u, p), a, b, xtol=ROOT_XTOL * b, rtol=ROOT_XTOL
    )
