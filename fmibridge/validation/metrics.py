"""Error metrics against the exact oscillator: rho-hat (eq. 30) and a rho^eps bound.

Where the paper is ambiguous (Burden et al., eq. 30 and Def. 22): `rho_hat`
takes every sample at its own time, duplicates (pre- and post-reset) included,
strip samples (``x > x_max``) as stored, as the reference code does, with no
time shift for eps-delays; `rho_eps_bound` bounds ``rho^eps`` from above by
0/1-hop path lengths in ``M^eps`` (Defs. 14-19), its sup taken over the samples
and ``n_sub`` interior points per sample interval.
"""

from __future__ import annotations

import math

import numpy as np

from ..models.oscillator import OscillatorParams
from .exact import AnalyticTrajectory

__all__ = ["quotient_distance_bound", "rho_eps_bound", "rho_hat"]

# Golden-section iterations for the hop point on the guard: 0.618**120 ~ 1e-25 of
# the initial bracket, below double precision for any bracket.
GOLDEN_ITERATIONS = 120
N_SUB_DEFAULT = 4  # interior evaluation points per sample interval (eq. 17's sup)


def _in_horizon(t: np.ndarray, exact: AnalyticTrajectory, t_max: float | None):
    """Return the mask of samples in ``[exact.t_start, t_max]``; some must be."""
    t_max = exact.t_end if t_max is None else t_max
    if t_max > exact.t_end:
        raise ValueError(
            f"`t_max`={t_max!r} exceeds the exact solution's t_end={exact.t_end!r}."
        )
    keep = (t >= exact.t_start) & (t <= t_max)
    if not keep.any():
        raise ValueError("no sample of `t` lies in the horizon [0, t_max].")
    return keep


def rho_hat(t, x, exact: AnalyticTrajectory, *, t_max: float | None = None) -> float:
    """Return the position error rho-hat of eq. 30 on ``[0, t_max]``.

    ``rho_hat = max{|z_pos(t_k) - x_analytic(t_k)| : t_k in [0, t_max]}``; a NaN
    position gives NaN.

    Parameters
    ----------
    t, x : array_like
        Sample times and positions (1-D, same length).
    exact : AnalyticTrajectory
        Exact solution (`exact_solution`).
    t_max : float, optional
        End of the horizon; defaults to ``exact.t_end``.

    Returns
    -------
    float

    References
    ----------
    Burden et al., eq. 30 (from Janin and Lamarque [34]).
    """
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    if t.shape != x.shape or t.ndim != 1:
        raise ValueError(
            f"`t` and `x` must be 1-D of equal length, got {t.shape}, {x.shape}."
        )
    keep = _in_horizon(t, exact, t_max)
    x_exact, _ = exact.state(t[keep])
    return float(np.max(np.abs(x[keep] - x_exact)))


def _hop(xp, vp, xq, vq, params: OscillatorParams, eps: float) -> np.ndarray:
    """Return ``min_{g>=0} |p - (x_max, g)| + eps + |(x_max, -c g) - q|``."""
    c, x_max = params.c, params.x_max
    dxp, dxq = x_max - xp, x_max - xq
    g1 = np.maximum(vp, 0.0)
    g2 = np.maximum(-vq / c, 0.0) if c > 0.0 else g1
    lo, hi = np.minimum(g1, g2), np.maximum(g1, g2)  # the convex sum's minimiser

    def cost(g):
        return np.hypot(dxp, vp - g) + np.hypot(dxq, vq + c * g)

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(GOLDEN_ITERATIONS):  # bounded golden-section search
        m1, m2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left = cost(m1) <= cost(m2)
        hi = np.where(left, m2, hi)
        lo = np.where(left, lo, m1)
    return cost(0.5 * (lo + hi)) + eps


def _domain_distance(xp, vp, xq, vq, params: OscillatorParams, eps: float):
    """Return the 0/1-hop bound of the distance between two points of D."""
    d = np.hypot(xp - xq, vp - vq)
    # A hop must reach the line x = x_max from both points and cross the strip:
    # try it only where that lower bound beats the straight path.
    far = d > eps + (params.x_max - xp) + (params.x_max - xq)
    if far.any():
        hop = np.minimum(
            _hop(xp[far], vp[far], xq[far], vq[far], params, eps),
            _hop(xq[far], vq[far], xp[far], vp[far], params, eps),
        )
        d[far] = np.minimum(d[far], hop)
    return d


def quotient_distance_bound(
    x1, v1, x2, v2, params: OscillatorParams, eps: float
) -> np.ndarray:
    """Return an upper bound of the distance in ``M^eps`` between two states.

    A state with ``x > x_max`` is the strip point ``((x_max, v), tau = x - x_max)``
    of ``S^eps = G x [0, eps]``; other states lie in D. Paths considered: straight
    in D; one crossing of the strip (cost eps) with the reset identification
    ``(q, eps) ~ R(q)``; from a strip point, back to G (cost tau) or forward to
    the reset (cost ``eps - tau``), with moves along G at cost ``|dv|``.
    ``eps = 0`` bounds the unrelaxed quotient metric of Thm 13.

    References
    ----------
    Burden et al., Defs. 5, 14, 15 (eq. 12), 19.
    """
    arrays = (np.atleast_1d(np.asarray(z, dtype=float)) for z in (x1, v1, x2, v2))
    x1, v1, x2, v2 = (np.array(z) for z in np.broadcast_arrays(*arrays))
    if eps < 0.0:
        raise ValueError(f"`eps` must be >= 0, got {eps!r}.")
    x_max = params.x_max
    # Put the strip point (if any) first; the exact solution is never on a strip.
    swap = (x2 > x_max) & ~(x1 > x_max)
    x1, x2 = np.where(swap, x2, x1), np.where(swap, x1, x2)
    v1, v2 = np.where(swap, v2, v1), np.where(swap, v1, v2)
    out = np.empty_like(x1)
    s = x1 > x_max  # on the strip
    d = ~s
    out[d] = _domain_distance(x1[d], v1[d], x2[d], v2[d], params, eps)
    if s.any():
        tau = x1[s] - x_max
        base = np.full_like(tau, x_max)
        back = tau + _domain_distance(base, v1[s], x2[s], v2[s], params, eps)
        # Forward: along G to g (|zeta - g|), across the rest |eps - tau|, reset.
        forward = np.abs(eps - tau) + _hop(base, v1[s], x2[s], v2[s], params, 0.0)
        out[s] = np.minimum(back, forward)
        both = s & (x2 > x_max)  # both on the strip: inside it, or both reset
        tau1, tau2 = x1[both] - x_max, x2[both] - x_max
        dv = np.abs(v1[both] - v2[both])
        out[both] = np.minimum(
            dv + np.abs(tau1 - tau2), (2 * eps - tau1 - tau2) + params.c * dv
        )
    return out


def _evaluation_grid(t, x, v, x_max: float, eps: float, n_sub: int):
    """Return times and numerical states at the samples and between them: linear
    (Fig. 12 step 10), but after a strip sample (``x_k > x_max``) the strip flow
    ``tau = tau_k + (t - t_k)`` at fixed ``v_k``, capped at ``eps`` (step 14)."""
    length = np.diff(t)
    k = np.flatnonzero(length > 0.0)
    frac = np.arange(1, n_sub + 1) / (n_sub + 1)
    tk, lk = t[k][:, None], length[k][:, None]
    ti = tk + lk * frac
    xi = x[k][:, None] + (x[k + 1] - x[k])[:, None] * frac
    vi = v[k][:, None] + (v[k + 1] - v[k])[:, None] * frac
    strip = x[k] > x_max
    xi[strip] = np.minimum(x[k][strip][:, None] + lk[strip] * frac, x_max + eps)
    vi[strip] = v[k][strip][:, None]
    return (
        np.concatenate([t, ti.ravel()]),
        np.concatenate([x, xi.ravel()]),
        np.concatenate([v, vi.ravel()]),
    )


def rho_eps_bound(
    t,
    x,
    v,
    exact: AnalyticTrajectory,
    eps: float,
    *,
    n_sub: int = N_SUB_DEFAULT,
    t_max: float | None = None,
) -> float:
    """Return an upper-bound estimate of ``rho^eps_[0, t_max]`` (Def. 22, eq. 17).

    ``rho^eps = sup_t d_{M^eps}(exact(t), numerical(t))``, the distance bounded
    by `quotient_distance_bound`.

    Parameters
    ----------
    t, x, v : array_like
        Numerical samples (1-D, nondecreasing ``t``).
    exact : AnalyticTrajectory
        Exact solution.
    eps : float
        Strip width of the relaxation (``0`` for the unrelaxed metric).
    n_sub : int
        Interior evaluation points per sample interval.
    t_max : float, optional
        End of the horizon; defaults to ``exact.t_end``.

    Returns
    -------
    float

    References
    ----------
    Burden et al., Def. 22 (eq. 17), Thm 21.
    """
    t, x, v = (np.asarray(z, dtype=float) for z in (t, x, v))
    if not (t.ndim == 1 and t.shape == x.shape == v.shape):
        raise ValueError(
            f"`t`, `x`, `v` must be 1-D of equal length, got "
            f"{t.shape}, {x.shape}, {v.shape}."
        )
    if np.any(np.diff(t) < 0.0):
        raise ValueError("`t` must be nondecreasing.")
    if n_sub < 0:
        raise ValueError(f"`n_sub` must be >= 0, got {n_sub!r}.")
    tg, xg, vg = _evaluation_grid(t, x, v, exact.params.x_max, eps, n_sub)
    keep = _in_horizon(tg, exact, t_max)
    x_ex, v_ex = exact.state(tg[keep])
    d = quotient_distance_bound(xg[keep], vg[keep], x_ex, v_ex, exact.params, eps)
    return float(np.max(d))
