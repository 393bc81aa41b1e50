"""Variable-step, variable-order Adams predictor-corrector (PECE, orders 1-4).

Weights are integrals of Lagrange basis polynomials over the past nodes, so
the predictor is a polynomial in the step h: x^p(h) = x_k + sum_j B_j(h)
f_{k-j+1}. That polynomial is what the extrapolation method of Esposito and
Kumar differentiates along a guard (their eq. 15). Times are scaled by a
reference step `scale` (u = h / scale), so the formulas stay well conditioned
at any h.

Like `core.bracket`, the functions use only loops over numpy arrays and
`math`, so `methods._unilateral_kernels` compiles this same source with numba,
and `Unilateral` runs it compiled on every path. History arrays hold the
newest node first.

References
----------
Esposito and Kumar (2007), Sec. 2.1, eqs. 4-5 (predictor, corrector) and
eq. 16 (Milne's error estimate), Secs. 2.3-2.4.
Ascher and Petzold (1998), Sec. 5.4 (variable-step Adams, Milne's device).
"""

from __future__ import annotations

import numpy as np

MAX_ORDER = 4  # the paper's experiments use a fourth-order predictor-corrector
# Hairer-Norsett-Wanner (Sec. II.4) starting guess 0.01 * |x| / |x'| (in tolerance
# units), and 1e-6 when either norm is below 1e-5; only f at the start is needed.
START_FRACTION = 0.01
START_FLOOR = 1e-5
START_STEP = 1e-6


def integral_basis(nodes: np.ndarray) -> np.ndarray:
    """Return B with B[j, k] the coefficient of u**k in int_0^u l_j(v) dv.

    l_j is the Lagrange basis polynomial of `nodes` that is 1 at nodes[j],
    multiplied out factor by factor; B has shape (m, m + 1).
    """
    m = nodes.shape[0]
    basis = np.zeros((m, m + 1))
    coef = np.zeros(m + 1)
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
        for i in range(m):
            basis[j, i + 1] = coef[i] / (i + 1)
    return basis


def predictor_of(basis: np.ndarray, forces: np.ndarray, scale: float) -> np.ndarray:
    """Return P with x^p(u) - x_k = sum_k P[k] u**k: scale B^T f (eq. 4).

    `basis` is `integral_basis` of the m nodes and `forces` holds f there (at
    least m rows, newest first).
    """
    predictor = np.zeros((basis.shape[0] + 1, forces.shape[1]))
    write_predictor(basis, forces, scale, predictor)
    return predictor


def write_predictor(
    basis: np.ndarray, forces: np.ndarray, scale: float, predictor: np.ndarray
) -> None:
    """Write rows 1 to m of `predictor_of` to `predictor` (row 0 is not read)."""
    m, n = basis.shape[0], forces.shape[1]
    for k in range(1, m + 1):
        for i in range(n):
            total = 0.0
            for j in range(m):
                total += basis[j, k] * forces[j, i]
            predictor[k, i] = scale * total


def predict(x: np.ndarray, predictor: np.ndarray, u: float) -> np.ndarray:
    """Return x^p = x_k + sum_k P[k] u**k, the predicted state at u (eq. 4)."""
    out = np.empty(x.shape[0])
    write_prediction(x, predictor, u, out)
    return out


def write_prediction(
    x: np.ndarray, predictor: np.ndarray, u: float, out: np.ndarray
) -> None:
    """Write `predict` (x, predictor, u) to out."""
    for i in range(x.shape[0]):
        total, power = 0.0, 1.0
        for k in range(1, predictor.shape[0]):
            power *= u
            total += power * predictor[k, i]
        out[i] = x[i] + total


def corrector_weights(nodes: np.ndarray, u: float) -> np.ndarray:
    """Return w with x_{k+1} = x_k + scale sum_j w_j f_j: the Adams-Moulton
    formula of order m on the nodes (u, nodes[:-1]) (eq. 5), f_0 at u."""
    m = nodes.shape[0]
    implicit = np.empty(m)
    implicit[0] = u
    for j in range(1, m):
        implicit[j] = nodes[j - 1]
    basis = integral_basis(implicit)
    weights = np.empty(m)
    for j in range(m):
        total, power = 0.0, 1.0
        for k in range(1, m + 1):
            power *= u
            total += basis[j, k] * power
        weights[j] = total
    return weights


def correct(
    x: np.ndarray,
    weights: np.ndarray,
    forces: np.ndarray,
    scale: float,
    f_predicted: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write the corrected x_{k+1} to out, from f at the predicted point (eq. 5),
    the `corrector_weights` of the step and the history's forces (newest first)."""
    for i in range(x.shape[0]):
        total = weights[0] * f_predicted[i]
        for j in range(1, weights.shape[0]):
            total += weights[j] * forces[j - 1, i]
        out[i] = x[i] + scale * total


def integral_of_product(roots: np.ndarray, u: float) -> float:
    """Return int_0^u prod_r (v - r) dv."""
    coef = np.zeros(roots.shape[0] + 1)
    coef[0] = 1.0
    for degree in range(roots.shape[0]):
        r = roots[degree]
        for i in range(degree + 1, 0, -1):
            coef[i] = coef[i - 1] - r * coef[i]
        coef[0] = -r * coef[0]
    total, power = 0.0, 1.0
    for k in range(coef.shape[0]):
        power *= u
        total += coef[k] * power / (k + 1)
    return total


def milne(nodes: np.ndarray, u: float) -> float:
    """Return C with corrector error ~ C abs(x^p - x^c) for a step to u (eq. 16).

    Leading error terms of the order-m Adams-Bashforth predictor on `nodes`
    and of the order-m Adams-Moulton corrector on (u, nodes[:-1]) are
    E_p = int_0^u prod(v - nodes) dv and E_c = int_0^u (v - u) prod(v -
    nodes[:-1]) dv times the same derivative; C = abs(E_c / (E_p - E_c)). At
    constant steps this gives 1/2, 1/6, 1/10, 19/270 (Milne's constants).
    """
    m = nodes.shape[0]
    implicit = np.empty(m)
    implicit[0] = u
    for j in range(1, m):
        implicit[j] = nodes[j - 1]
    e_p = integral_of_product(nodes, u)
    e_c = integral_of_product(implicit, u)
    return abs(e_c / (e_p - e_c))


def starting_step(x: np.ndarray, f: np.ndarray, eps: np.ndarray, h_max: float) -> float:
    """Return a first step from x and f only (no evaluation elsewhere)."""
    d0, d1 = 0.0, 0.0
    for i in range(x.shape[0]):
        d0 = max(d0, abs(x[i]) / eps[i])
        d1 = max(d1, abs(f[i]) / eps[i])
    if d0 < START_FLOOR or d1 < START_FLOOR:
        return min(h_max, START_STEP)
    return min(h_max, START_FRACTION * d0 / d1)
