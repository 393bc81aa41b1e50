"""Paoli-Schatzman scheme (the "PS method"), the paper's baseline (eq. 29).

A two-step central-difference scheme for the oscillator with stop, positions
only; the impact law projects ``z_{k+1} + c z_{k-1}`` onto ``(-inf, (1+c) x_max]``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..models.oscillator import OscillatorParams

__all__ = ["PSResult", "paoli_schatzman"]

# Grid points k h up to this fraction of h past t_end are kept, so that t_end = N h
# is not lost to rounding.
GRID_TOL = 1e-9
MAX_STEPS = 50_000_000  # bound on the steps of one run


@dataclass(frozen=True)
class PSResult:
    """Positions of the PS method on the uniform grid ``t_k = k h``."""

    t: np.ndarray
    x: np.ndarray
    h: float


def paoli_schatzman(
    params: OscillatorParams,
    h: float,
    t_end: float | None = None,
    *,
    compiled: bool = False,
) -> PSResult:
    """Run the PS method of eq. 29 with step ``h`` on ``[0, t_end]``.

    ``z_0 = x0``, ``z_1 = x0 + v0 h + h**2/2 (u(0)/m - 2 a v0 - omega**2 x0)``, and
    for ``k >= 1``::

        y_k     = (h**2 u(t_k)/m + (2 - h**2 omega**2) z_k
                   - ((1 - c) - (1 + c) a h) z_{k-1}) / (1 + a h)
        z_{k+1} = -c z_{k-1} + min(y_k, (1 + c) x_max)

    Parameters
    ----------
    params : OscillatorParams
        ``m = 1`` reproduces eq. 29 verbatim.
    h : float
        Step size, ``> 0``.
    t_end : float, optional
        Horizon; defaults to ``params.t_max``.
    compiled : bool
        Run the recursion compiled by numba (else in Python, on lists).

    Returns
    -------
    PSResult
        Positions on the grid ``t_k = k h <= t_end``.

    Raises
    ------
    ValueError
        If ``h <= 0`` or the grid would exceed ``MAX_STEPS``.

    References
    ----------
    Burden et al., eq. 29; Paoli and Schatzman, SIAM J. Numer. Anal. 40(2), 2003.
    """
    if not h > 0.0:
        raise ValueError(f"`h` must be > 0, got {h!r}.")
    t_end = params.t_max if t_end is None else float(t_end)
    n = math.floor(t_end / h + GRID_TOL)
    if n > MAX_STEPS:
        raise ValueError(
            f"`h`={h!r} needs {n} steps to reach t_end={t_end}; more than "
            f"MAX_STEPS={MAX_STEPS}. Raise `h`."
        )
    t = h * np.arange(n + 1)
    a, c, w2, m = params.a, params.c, params.omega**2, params.m
    x0, v0 = float(params.x0), float(params.v0)
    # eq. 29's coefficients over (1 + a h)
    inv = 1.0 / (1.0 + a * h)
    c_u = h * h * inv / m
    c_now = (2.0 - h * h * w2) * inv
    c_old = ((1.0 - c) - (1.0 + c) * a * h) * inv
    cap = (1.0 + c) * params.x_max
    z1 = x0 + v0 * h + 0.5 * h * h * (params.u(0.0) / m - 2.0 * a * v0 - w2 * x0)
    coefficients = (c_u, c_now, c_old, c, cap)
    z: np.ndarray | list[float]
    if compiled:
        z = np.empty(n + 1)
        z[0], z[1] = x0, z1
        _compiled_recursion()(z, params.u(t), *coefficients)
    else:  # CPython indexes lists faster than arrays
        z = [x0, float(z1)] + [0.0] * (n - 1)
        _ps_recursion(z, params.u(t).tolist(), *coefficients)
    return PSResult(t, np.asarray(z[: n + 1], dtype=float), h)


def _ps_recursion(z, u, c_u, c_now, c_old, c, cap) -> None:
    """Fill z[2:] by eq. 29 from z[0], z[1]: z[k+1] = -c z[k-1] + min(y_k, cap)."""
    z_old, z_now = z[0], z[1]
    for k in range(1, len(z) - 1):
        y = c_u * u[k] + c_now * z_now - c_old * z_old
        z_new = -c * z_old + (y if y < cap else cap)
        z[k + 1] = z_new
        z_old, z_now = z_now, z_new


@functools.cache
def _compiled_recursion():
    """Return `_ps_recursion` compiled by numba (once per process; cached on disk)."""
    import numba

    return numba.njit(cache=True)(_ps_recursion)
