"""First time at which a set of polynomials are all non-negative.

A grazing contact gives a double root, which a companion-matrix solver may
return as a complex pair. Here the real roots of each P and P' in (0, upper)
come from the chain of derivatives (between two roots of a derivative lies at
most one root of the one above, found by bisection), so a double root is a
breakpoint; signs are checked at the breakpoints and midpoints, and a crossing
is narrowed by bisection to ROOT_XTOL. Polynomials are rows of power
coefficients, lowest degree first.

References
----------
Esposito and Kumar (2007), Sec. 2.4 (roots of eq. 15, grazing roots included).
"""

from libc.math cimport INFINITY, fabs

import numpy as np

# A crossing is narrowed until its bracket is below this fraction of its far end
# (4 ulps: round-off of the polynomial's evaluation).
cdef double _ROOT_XTOL = 4 * 2.0**-52
ROOT_XTOL = _ROOT_XTOL
# Bisections of one bracket: enough to reach ROOT_XTOL from any bracket in (0, 1e300].
cdef long MAX_BISECTIONS = 1100


cdef double polyval(const double* p, Py_ssize_t width, double u) noexcept nogil:
    """Return sum_k p[k] u**k (Horner)."""
    cdef double value = 0.0
    cdef Py_ssize_t k
    for k in range(width - 1, -1, -1):
        value = value * u + p[k]
    return value


cdef double bisect(const double* p, Py_ssize_t width, double a,
                   double b) noexcept nogil:
    """A root of p in [a, b], p(a) and p(b) of opposite signs, to ROOT_XTOL of b."""
    cdef double f_a = polyval(p, width, a), mid, f_mid
    cdef long _i
    for _i in range(MAX_BISECTIONS):
        if b - a <= _ROOT_XTOL * fabs(b):
            break
        mid = 0.5 * (a + b)
        if not a < mid < b:
            break
        f_mid = polyval(p, width, mid)
        if f_mid == 0.0:
            return mid
        if (f_mid < 0.0) == (f_a < 0.0):
            a, f_a = mid, f_mid
        else:
            b = mid
    return 0.5 * (a + b)


cdef Py_ssize_t real_roots(const double* p, Py_ssize_t width, double lo, double hi,
                           double* roots) noexcept nogil:
    """Write the real roots of p in (lo, hi), sorted, double ones kept, to roots
    and return how many."""
    cdef Py_ssize_t d = width - 1, j, k, count = 0, n_found
    cdef double chain[MAX_WIDTH * MAX_WIDTH]  # row j: the j-th derivative of p
    cdef double found[MAX_WIDTH]
    cdef double root, a, f_a, b, f_b
    cdef const double* q
    while d >= 0 and p[d] == 0.0:  # the degree
        d -= 1
    if d <= 0:
        return 0
    for k in range(d * (d + 1)):
        chain[k] = 0.0
    for k in range(d + 1):
        chain[k] = p[k]
    for j in range(1, d):
        for k in range(d + 1 - j):
            chain[j * (d + 1) + k] = (k + 1) * chain[(j - 1) * (d + 1) + k + 1]
    q = chain + (d - 1) * (d + 1)  # linear
    root = -q[0] / q[1]
    if lo < root < hi:
        roots[0] = root
        count = 1
    for j in range(d - 2, -1, -1):  # roots of derivative j from those of j + 1
        q, n_found = chain + j * (d + 1), 0
        a, f_a = lo, polyval(q, d + 1, lo)
        for k in range(count + 1):
            b = roots[k] if k < count else hi
            f_b = polyval(q, d + 1, b)
            if f_a * f_b < 0.0:
                found[n_found] = bisect(q, d + 1, a, b)
                n_found += 1
            if k < count and f_b == 0.0:
                found[n_found] = b
                n_found += 1
            a, f_a = b, f_b
        for k in range(n_found):
            roots[k] = found[k]
        count = n_found
    return count


cdef Py_ssize_t breakpoints(const double* polys, Py_ssize_t k, Py_ssize_t width,
                            double upper, double* found) noexcept nogil:
    """Write the real roots of each p and p' in (0, upper), and upper, sorted,
    once each, to found; return how many."""
    cdef double slope[MAX_WIDTH]
    cdef const double* p
    cdef Py_ssize_t row, i, j, n = 1, m = 0
    cdef double value
    found[0] = upper
    for row in range(k):
        p = polys + row * width
        for i in range(width):
            slope[i] = 0.0
        for i in range(width - 1):
            slope[i] = (i + 1) * p[i + 1]
        n += real_roots(p, width, 0.0, upper, found + n)
        n += real_roots(slope, width, 0.0, upper, found + n)
    for i in range(1, n):  # insertion sort in numpy's order (nan last): a few values
        value, j = found[i], i
        while j > 0 and (value < found[j - 1] or (
                found[j - 1] != found[j - 1] and value == value)):
            found[j] = found[j - 1]
            j -= 1
        found[j] = value
    for i in range(n):
        if m == 0 or found[i] != found[m - 1]:
            found[m] = found[i]
            m += 1
    return m


cdef double _crossing(const double* p, Py_ssize_t width, double a,
                      double b) noexcept nogil:
    """The first point of [a, b] with p >= 0 (p monotone, p(a) < 0 <= p(b))."""
    cdef double mid
    cdef long _i
    if polyval(p, width, b) == 0.0:
        return b
    for _i in range(MAX_BISECTIONS):
        if b - a <= _ROOT_XTOL * fabs(b):
            break
        mid = 0.5 * (a + b)
        if not a < mid < b:
            break
        if polyval(p, width, mid) >= 0.0:
            b = mid
        else:
            a = mid
    return b


cdef Py_ssize_t first_reach_scratch(Py_ssize_t k, Py_ssize_t width) noexcept nogil:
    """The scratch doubles `first_reach_in` needs."""
    return 2 * k + 3 * (2 * k * width + 1)


cdef double first_reach_in(const double* polys, Py_ssize_t k, Py_ssize_t width,
                           double upper, double* scratch) noexcept nogil:
    """The smallest u in (0, upper] with each of the k rows of `polys` >= 0 (0.0
    if all are just after 0), or inf."""
    cdef double* at_a = scratch
    cdef double* at_b = scratch + k
    cdef double* ends = scratch + 2 * k
    cdef double* points = ends + 2 * k * width + 1
    cdef Py_ssize_t i, j, n_ends
    cdef double previous = 0.0, a = 0.0, b, reach
    cdef bint all_at
    all_at = True
    for i in range(k):  # p >= 0 just after 0: its first non-zero coefficient
        j = i * width
        while j < (i + 1) * width - 1 and polys[j] == 0.0:
            j += 1
        at_a[i] = not polys[j] < 0.0
        all_at = all_at and at_a[i] != 0.0
    if all_at:
        return 0.0
    n_ends = breakpoints(polys, k, width, upper, ends)
    for j in range(n_ends):
        points[2 * j], points[2 * j + 1] = 0.5 * (previous + ends[j]), ends[j]
        previous = ends[j]
    for j in range(2 * n_ends):
        b = points[j]
        all_at = True
        for i in range(k):
            at_b[i] = polyval(polys + i * width, width, b) >= 0.0
            all_at = all_at and at_b[i] != 0.0
        if all_at:
            reach = 0.0
            for i in range(k):
                reach = max(
                    reach,
                    a if at_a[i] != 0.0 else _crossing(polys + i * width, width, a, b),
                )
            return reach
        a = b
        for i in range(k):
            at_a[i] = at_b[i]
    return INFINITY


def first_reach(polys, double upper):
    """Return the smallest u in (0, upper] with every row of `polys` >= 0, or inf."""
    cdef double[:, ::1] p = np.ascontiguousarray(np.atleast_2d(polys), dtype=float)
    cdef Py_ssize_t k = p.shape[0], width = p.shape[1]
    if not (k >= 1 and 1 <= width <= MAX_WIDTH):
        raise ValueError(
            f"`polys` must hold rows of 1 to {MAX_WIDTH} coefficients, got {width}."
        )
    cdef double[::1] scratch = np.empty(first_reach_scratch(k, width))
    return first_reach_in(&p[0, 0], k, width, upper, &scratch[0])
