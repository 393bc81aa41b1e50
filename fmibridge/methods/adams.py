"""Variable-step, variable-order Adams predictor-corrector (PECE, orders 1-4).

Weights are integrals of Lagrange basis polynomials over the past nodes, so
the predictor is a polynomial in the step h: x^p(h) = x_k + sum_j B_j(h)
f_{k-j+1}. That polynomial is what the extrapolation method of Esposito and
Kumar differentiates along a guard (their eq. 15). Times are scaled by a
reference step so the Vandermonde systems stay well conditioned at any h.

References
----------
Esposito and Kumar (2007), Sec. 2.1, eqs. 4-5 (predictor, corrector) and
eq. 16 (Milne's error estimate), Secs. 2.3-2.4.
Ascher and Petzold (1998), Sec. 5.4 (variable-step Adams, Milne's device).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_ORDER = 4  # the paper's experiments use a fourth-order predictor-corrector
# Hairer-Norsett-Wanner (Sec. II.4) starting guess 0.01 * |x| / |x'| (in tolerance
# units), and 1e-6 when either norm is below 1e-5; only f at the start is needed.
START_FRACTION = 0.01
START_FLOOR = 1e-5
START_STEP = 1e-6


@dataclass(frozen=True)
class Node:
    """One accepted point of the history: time, state and x' there."""

    t: float
    x: np.ndarray
    f: np.ndarray


def integral_basis(nodes: np.ndarray) -> np.ndarray:
    """Return B with B[j] the power coefficients of int_0^u l_j(v) dv.

    l_j is the Lagrange basis polynomial of `nodes` that is 1 at nodes[j];
    B has shape (m, m + 1) and column k multiplies u**k.
    """
    m = len(nodes)
    inverse = np.linalg.inv(np.vander(nodes, m, increasing=True))
    basis = np.zeros((m, m + 1))
    basis[:, 1:] = inverse.T / np.arange(1, m + 1)
    return basis


def powers(u: float, degree: int) -> np.ndarray:
    """Return [1, u, ..., u**degree]."""
    return u ** np.arange(degree + 1)


def milne_constant(nodes: np.ndarray, u: float) -> float:
    """Return C with corrector error ~ C abs(x^p - x^c) for a step to u.

    Leading error terms of the order-m Adams-Bashforth predictor on `nodes`
    and of the order-m Adams-Moulton corrector on (u, nodes[:-1]) are
    E_p = int_0^u prod(v - nodes) dv and E_c = int_0^u (v - u) prod(v -
    nodes[:-1]) dv times the same derivative; C = abs(E_c / (E_p - E_c)). At
    constant steps this gives 1/2, 1/6, 1/10, 19/270 (Milne's constants).
    """
    e_p = _integral_of_product(nodes, u)
    e_c = _integral_of_product(np.r_[u, nodes[:-1]], u)
    return abs(e_c / (e_p - e_c))


def _integral_of_product(roots: np.ndarray, u: float) -> float:
    """Return int_0^u prod_r (v - r) dv."""
    coef = np.ones(1)
    for r in roots:
        coef = np.r_[0.0, coef] - r * np.r_[coef, 0.0]
    return float(
        coef @ (u ** np.arange(1, coef.size + 1) / np.arange(1, coef.size + 1))
    )


@dataclass(frozen=True)
class Stencil:
    """The Adams formulas on one history, in units of the reference step `scale`.

    Attributes
    ----------
    t, x : float, ndarray
        The current point (t_k, x_k).
    scale : float
        Reference step; u = h / scale.
    nodes : ndarray
        Past times relative to t_k, scaled: 0, -h_k/scale, ...
    forces : ndarray, shape (m, n)
        f at the nodes, newest first.
    predictor : ndarray, shape (m + 1, n)
        Power coefficients in u of x^p(u) - x_k.
    """

    t: float
    x: np.ndarray
    scale: float
    nodes: np.ndarray
    forces: np.ndarray
    predictor: np.ndarray

    @classmethod
    def on(cls, history: tuple[Node, ...], scale: float) -> Stencil:
        """Build the stencil of order len(history) (newest node first)."""
        nodes = np.array([(node.t - history[0].t) / scale for node in history])
        forces = np.array([node.f for node in history])
        predictor = scale * integral_basis(nodes).T @ forces
        return cls(history[0].t, history[0].x, scale, nodes, forces, predictor)

    @property
    def order(self) -> int:
        """The order of the Adams formula: its number of history nodes."""
        return len(self.nodes)

    @property
    def basis(self) -> np.ndarray:
        """Coefficients of B_j(u) (scaled by `scale`), shape (m, m + 1)."""
        return self.scale * integral_basis(self.nodes)

    def predict(self, h: float) -> np.ndarray:
        """Return x^p(t_k + h) (eq. 4)."""
        return self.x + powers(h / self.scale, self.order) @ self.predictor

    def correct(self, h: float, f_predicted: np.ndarray) -> np.ndarray:
        """Return the corrected x_{k+1} from f at the predicted point (eq. 5)."""
        u = h / self.scale
        nodes = np.r_[u, self.nodes[:-1]]
        weights = integral_basis(nodes) @ powers(u, self.order)
        forces = np.vstack([f_predicted, self.forces[:-1]])
        return self.x + self.scale * weights @ forces

    def milne(self, h: float) -> float:
        """Return Milne's constant C for a step h (eq. 16)."""
        return milne_constant(self.nodes, h / self.scale)


def starting_step(x: np.ndarray, f: np.ndarray, eps: np.ndarray, h_max: float) -> float:
    """Return a first step from x and f only (no evaluation elsewhere)."""
    d0 = float(np.max(np.abs(x) / eps))
    d1 = float(np.max(np.abs(f) / eps))
    if d0 < START_FLOOR or d1 < START_FLOOR:
        return min(h_max, START_STEP)
    return min(h_max, START_FRACTION * d0 / d1)
