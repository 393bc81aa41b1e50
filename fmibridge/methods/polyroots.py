"""First time at which a set of polynomials are all non-negative.

The extrapolation method needs the smallest positive u at which a guard's
extrapolation polynomial P(u) reaches zero (for a conjunction of guards: at
which every component's P has reached zero). Filtering the real roots of P is
fragile: at a grazing contact P has a double root, which a companion-matrix
solver may return as a complex pair with a tiny imaginary part, and the event
is lost. Here the real roots of P and of P' in (0, upper) are found from the
chain of derivatives (the roots of each derivative split the interval into
pieces on which the one above is monotone, so each piece holds at most one of
its roots, found by bisection): a double root is a root of P', so it is a
breakpoint. Between breakpoints each P is monotone, so checking signs at the
breakpoints and at the midpoints between them (a root evaluates to +-round-off,
so an interval where several P are >= 0 may be seen only inside) cannot step
over a touching maximum or a short common interval; each crossing is then
bracketed and narrowed by bisection to ROOT_XTOL.

Like `core.bracket`, the functions use only loops and `math`, so
`methods._unilateral_kernels` compiles this same source with numba. A
polynomial is an array of power coefficients, lowest degree first; a set of
them is the rows of a 2-D array.

References
----------
Esposito and Kumar (2007), Sec. 2.4 (roots of eq. 15, grazing roots included).
"""

from __future__ import annotations

import math

import numpy as np

# A crossing is narrowed until its bracket is below this fraction of its far end
# (4 ulps: round-off of the polynomial's evaluation).
ROOT_XTOL = 4 * np.finfo(float).eps
# Bisections of one bracket: enough to reach ROOT_XTOL from any bracket in (0, 1e300].
MAX_BISECTIONS = 1100


def polyval(p: np.ndarray, u: float) -> float:
    """Return sum_k p[k] u**k (Horner)."""
    value = 0.0
    for k in range(p.shape[0] - 1, -1, -1):
        value = value * u + p[k]
    return value


def degree(p: np.ndarray) -> int:
    """Return the index of the highest non-zero coefficient (-1 for zero)."""
    for k in range(p.shape[0] - 1, -1, -1):
        if p[k] != 0.0:
            return k
    return -1


def bisect(p: np.ndarray, a: float, b: float) -> float:
    """Return a root of p in [a, b], where p(a) and p(b) differ in sign (or one
    is zero), to ROOT_XTOL of b or the resolution of floats."""
    f_a = polyval(p, a)
    for _ in range(MAX_BISECTIONS):
        if b - a <= ROOT_XTOL * abs(b):
            break
        mid = 0.5 * (a + b)
        if not a < mid < b:
            break
        f_mid = polyval(p, mid)
        if f_mid == 0.0:
            return mid
        if (f_mid < 0.0) == (f_a < 0.0):
            a, f_a = mid, f_mid
        else:
            b = mid
    return 0.5 * (a + b)


def real_roots(p: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Return the real roots of p in (lo, hi), sorted; a touching (double) root is
    a root of p' where p vanishes, and is kept."""
    d = degree(p)
    if d <= 0:
        return np.empty(0)
    chain = np.zeros((d, d + 1))  # row j: the j-th derivative of p
    for k in range(d + 1):
        chain[0, k] = p[k]
    for j in range(1, d):
        for k in range(d + 1 - j):
            chain[j, k] = (k + 1) * chain[j - 1, k + 1]
    roots, count = np.empty(d), 0
    linear = chain[d - 1]
    root = -linear[0] / linear[1]
    if lo < root < hi:
        roots[0] = root
        count = 1
    for j in range(d - 2, -1, -1):  # roots of derivative j from those of j + 1
        q, found, n_found = chain[j], np.empty(d), 0
        a, f_a = lo, polyval(chain[j], lo)
        for k in range(count + 1):
            b = roots[k] if k < count else hi
            f_b = polyval(q, b)
            if f_a * f_b < 0.0:
                found[n_found] = bisect(q, a, b)
                n_found += 1
            if k < count and f_b == 0.0:
                found[n_found] = b
                n_found += 1
            a, f_a = b, f_b
        roots, count = found, n_found
    return roots[:count].copy()


def _breakpoints(polys: np.ndarray, upper: float) -> np.ndarray:
    """The real roots of each p and p' in (0, upper), and upper, sorted, once each."""
    width = polys.shape[1]
    found = np.empty(2 * polys.shape[0] * width + 1)
    found[0] = upper
    n = 1
    for row in range(polys.shape[0]):
        p = polys[row]
        slope = np.zeros(width)
        for k in range(width - 1):
            slope[k] = (k + 1) * p[k + 1]
        for q in (p, slope):
            roots = real_roots(q, 0.0, upper)
            found[n : n + roots.shape[0]] = roots
            n += roots.shape[0]
    ordered = np.sort(found[:n])
    unique, m = np.empty(n), 0
    for k in range(n):
        if m == 0 or ordered[k] != unique[m - 1]:
            unique[m] = ordered[k]
            m += 1
    return unique[:m].copy()


def _negative_after_zero(p: np.ndarray) -> bool:
    """True if p(u) < 0 for small u > 0 (sign of the first non-zero coefficient)."""
    for k in range(p.shape[0]):
        if p[k] != 0.0:
            return p[k] < 0.0
    return False


def _crossing(p: np.ndarray, a: float, b: float) -> float:
    """The first point of [a, b] with p >= 0, p monotone there with p(a) < 0 <= p(b),
    to ROOT_XTOL of b."""
    if polyval(p, b) == 0.0:
        return b
    for _ in range(MAX_BISECTIONS):
        if b - a <= ROOT_XTOL * abs(b):
            break
        mid = 0.5 * (a + b)
        if not a < mid < b:
            break
        if polyval(p, mid) >= 0.0:
            b = mid
        else:
            a = mid
    return b


def first_reach(polys: np.ndarray, upper: float) -> float:
    """Return the smallest u in (0, upper] with every p(u) >= 0, or inf.

    Parameters
    ----------
    polys : ndarray, shape (k, degree + 1)
        Power coefficients (increasing degree) of each polynomial, one per row.
    upper : float
        End of the search interval, > 0.

    Returns
    -------
    float
        The first reach; 0.0 if all are already >= 0 just after u = 0.
    """
    k = polys.shape[0]
    at_a = np.empty(k, dtype=np.bool_)
    for i in range(k):
        at_a[i] = not _negative_after_zero(polys[i])
    if at_a.all():
        return 0.0
    ends = _breakpoints(polys, upper)
    points = np.empty(2 * ends.shape[0])
    previous = 0.0
    for j in range(ends.shape[0]):
        points[2 * j], points[2 * j + 1] = 0.5 * (previous + ends[j]), ends[j]
        previous = ends[j]
    a, at_b = 0.0, np.empty(k, dtype=np.bool_)
    for b in points:
        for i in range(k):
            at_b[i] = polyval(polys[i], b) >= 0.0
        if at_b.all():
            reach = 0.0
            for i in range(k):
                reach = max(reach, a if at_a[i] else _crossing(polys[i], a, b))
            return reach
        a = b
        at_a[:] = at_b
    return math.inf
