"""Variable-step, variable-order Adams predictor-corrector (PECE, orders 1-4).

Weights are integrals of Lagrange basis polynomials over the past nodes, so the
predictor is a polynomial in u = h / scale, x^p(u) = x_k + sum_j B_j(u)
f_{k-j+1} (Esposito and Kumar, eq. 15). History arrays hold the newest first.

References
----------
Esposito and Kumar (2007), Sec. 2.1, eqs. 4-5 (predictor, corrector), eq. 16
(Milne's error estimate). Ascher and Petzold (1998), Sec. 5.4.
"""

from libc.math cimport fabs

import numpy as np

# Hairer-Norsett-Wanner (Sec. II.4) starting guess 0.01 * |x| / |x'| (in tolerance
# units), and 1e-6 when either norm is below 1e-5; only f at the start is needed.
cdef double START_FRACTION = 0.01
cdef double START_FLOOR = 1e-5
cdef double START_STEP = 1e-6


cdef void write_basis(const double* nodes, Py_ssize_t m, double* basis,
                      Py_ssize_t stride) noexcept nogil:
    """Write B, B[j, k] the coefficient of u**k in int_0^u l_j(v) dv (l_j the
    Lagrange basis polynomial of `nodes`, 1 at nodes[j]), to the m rows of
    `basis` (m + 1 entries each, rows `stride` apart)."""
    cdef double coef[MAX_ORDER + 1]
    cdef double scale
    cdef Py_ssize_t j, k, i, degree
    for i in range(m + 1):
        coef[i] = 0.0
    for j in range(m):
        coef[0], degree = 1.0, 0
        for k in range(m):
            if k == j:
                continue
            scale = 1.0 / (nodes[j] - nodes[k])
            coef[degree + 1] = 0.0
            for i in range(degree + 1, 0, -1):
                coef[i] = (coef[i - 1] - nodes[k] * coef[i]) * scale
            coef[0] = -nodes[k] * coef[0] * scale
            degree += 1
        basis[j * stride] = 0.0
        for i in range(m):
            basis[j * stride + i + 1] = coef[i] / (i + 1)


cdef void write_predictor(const double* basis, Py_ssize_t stride, Py_ssize_t m,
                          const double* forces, Py_ssize_t n, double scale,
                          double* predictor) noexcept nogil:
    """Write P = scale B^T f, x^p(u) - x_k = sum_k P[k] u**k (eq. 4), to rows
    1 to m of `predictor` (n columns), from `write_basis` of the m nodes and f
    there (`forces`, rows of n)."""
    cdef Py_ssize_t k, i, j
    cdef double total
    for k in range(1, m + 1):
        for i in range(n):
            total = 0.0
            for j in range(m):
                total += basis[j * stride + k] * forces[j * n + i]
            predictor[k * n + i] = scale * total


cdef void write_prediction(const double* x, Py_ssize_t n, const double* predictor,
                           Py_ssize_t rows, double u, double* out) noexcept nogil:
    """Write x^p = x_k + sum_k P[k] u**k (eq. 4) to out; `predictor` has `rows`
    rows (row 0 not read)."""
    cdef Py_ssize_t i, k
    cdef double total, power
    for i in range(n):
        total, power = 0.0, 1.0
        for k in range(1, rows):
            power *= u
            total += power * predictor[k * n + i]
        out[i] = x[i] + total


cdef double corrector(const double* nodes, Py_ssize_t m, double u,
                      double* weights) noexcept nogil:
    """Write w, x_{k+1} = x_k + scale sum_j w_j f_j, to weights: the
    Adams-Moulton formula of order m on the nodes (u, nodes[:-1]) (eq. 5), f_0
    at u. Return Milne's constant C, corrector error ~ C abs(x^p - x^c) (eq.
    16): abs(E_c / (E_p - E_c)) of the leading error terms E_p = int_0^u
    prod(v - nodes) dv and E_c = int_0^u (v - u) prod(v - nodes[:-1]) dv; 1/2,
    1/6, 1/10, 19/270 at constant steps (Milne's constants)."""
    cdef double implicit[MAX_ORDER]
    cdef double basis[MAX_ORDER * (MAX_ORDER + 1)]
    cdef double total, power
    cdef Py_ssize_t j, k
    implicit[0] = u
    for j in range(1, m):
        implicit[j] = nodes[j - 1]
    write_basis(implicit, m, basis, m + 1)
    for j in range(m):
        total, power = 0.0, 1.0
        for k in range(1, m + 1):
            power *= u
            total += basis[j * (m + 1) + k] * power
        weights[j] = total
    cdef double e_p = _integral_of_product(nodes, m, u)
    cdef double e_c = _integral_of_product(implicit, m, u)
    return fabs(e_c / (e_p - e_c))


cdef void correct(const double* x, Py_ssize_t n, const double* weights, Py_ssize_t m,
                  const double* forces, double scale, const double* f_predicted,
                  double* out) noexcept nogil:
    """Write the corrected x_{k+1} (eq. 5) to out, from f at the predicted point,
    the m `corrector_weights` and the history's forces (rows of n)."""
    cdef Py_ssize_t i, j
    cdef double total
    for i in range(n):
        total = weights[0] * f_predicted[i]
        for j in range(1, m):
            total += weights[j] * forces[(j - 1) * n + i]
        out[i] = x[i] + scale * total


cdef double _integral_of_product(const double* roots, Py_ssize_t m,
                                 double u) noexcept nogil:
    """int_0^u prod_r (v - r) dv over the m roots."""
    cdef double coef[MAX_ORDER + 1]
    cdef double r, total = 0.0, power = 1.0
    cdef Py_ssize_t degree, i, k
    coef[0] = 1.0
    for i in range(1, m + 1):
        coef[i] = 0.0
    for degree in range(m):
        r = roots[degree]
        for i in range(degree + 1, 0, -1):
            coef[i] = coef[i - 1] - r * coef[i]
        coef[0] = -r * coef[0]
    for k in range(m + 1):
        power *= u
        total += coef[k] * power / (k + 1)
    return total


cdef double starting_step(const double* x, const double* f, Py_ssize_t n, double tol,
                          double rtol, double h_max) noexcept nogil:
    """Return a first step from x and f only (no evaluation elsewhere), with
    the tolerance tol + rtol abs(x_i) per component."""
    cdef double d0 = 0.0, d1 = 0.0, eps
    cdef Py_ssize_t i
    for i in range(n):
        eps = tol + rtol * fabs(x[i])
        d0 = max(d0, fabs(x[i]) / eps)
        d1 = max(d1, fabs(f[i]) / eps)
    if d0 < START_FLOOR or d1 < START_FLOOR:
        return min(h_max, START_STEP)
    return min(h_max, START_FRACTION * d0 / d1)


def _order_of(nodes):
    cdef double[::1] values = np.ascontiguousarray(nodes, dtype=float)
    if not 1 <= values.shape[0] <= MAX_ORDER:
        raise ValueError(f"1 to {MAX_ORDER} nodes are needed, got {values.shape[0]}.")
    return values


def integral_basis(nodes):
    """Return B, shape (m, m + 1), of the m `nodes` (`write_basis`)."""
    cdef double[::1] values = _order_of(nodes)
    cdef Py_ssize_t m = values.shape[0]
    cdef double[:, ::1] out = np.empty((m, m + 1))
    write_basis(&values[0], m, &out[0, 0], m + 1)
    return np.asarray(out)


def predictor_of(basis, forces, double scale):
    """Return P = scale B^T f (eq. 4, `write_predictor`) from `integral_basis`
    of m nodes and f there (`forces`, at least m rows)."""
    cdef double[:, ::1] b = np.ascontiguousarray(basis, dtype=float)
    cdef double[:, ::1] f = np.ascontiguousarray(forces, dtype=float)
    cdef Py_ssize_t m = b.shape[0], n = f.shape[1]
    if b.shape[1] != m + 1 or f.shape[0] < m:
        raise ValueError("`basis` must be (m, m + 1) and `forces` hold m rows.")
    cdef double[:, ::1] p = np.zeros((m + 1, n))
    if n:
        write_predictor(&b[0, 0], m + 1, m, &f[0, 0], n, scale, &p[0, 0])
    return np.asarray(p)


def predict(x, predictor, double u):
    """Return x^p = x_k + sum_k P[k] u**k, the predicted state at u (eq. 4)."""
    cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
    cdef double[:, ::1] p = np.ascontiguousarray(predictor, dtype=float)
    cdef Py_ssize_t n = xs.shape[0]
    if p.shape[1] != n:
        raise ValueError(f"`predictor` must have {n} columns, got {p.shape[1]}.")
    cdef double[::1] y = np.empty(n)
    if n:
        write_prediction(&xs[0], n, &p[0, 0], p.shape[0], u, &y[0])
    return np.asarray(y)


def milne(nodes, double u):
    """Return Milne's constant C of a step to u from the nodes."""
    cdef double[::1] values = _order_of(nodes)
    cdef double weights[MAX_ORDER]
    return corrector(&values[0], values.shape[0], u, weights)
