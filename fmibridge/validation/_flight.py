"""Closed-form free flight of the forced oscillator (eq. 28) from a start point.

For harmonic forcing eq. 28's convolution is a periodic ``p(t) = P cos(W t) +
Q sin(W t)`` plus a homogeneous term, so a flight from ``(t_s, x_s, v_s)`` is::

    x(t_s + s) = p(t_s + s) + e^{-a s} (e0 cos(wd s) + B sin(wd s)),
    e0 = x_s - p(t_s),   B = (v_s - p'(t_s) + a e0) / wd,

evaluated as ``x_s + [x(t_s + s) - x_s]`` with the bracket formed from ``expm1``
and half-angle sines: the gap stays accurate for flights of 1e-9 s near Zeno.
"""

from __future__ import annotations

import math

import numpy as np

from ..models.oscillator import OscillatorParams


class Flight:
    """Exact free flight of eq. 28 from ``(t_s, x_s, v_s)``; local time ``s``."""

    __slots__ = ("params", "t_s", "x_s", "v_s", "_P", "_Q", "_e0", "_d0", "_B", "_B1")

    def __init__(self, params: OscillatorParams, t_s: float, x_s: float, v_s: float):
        self.params, self.t_s, self.x_s, self.v_s = params, t_s, x_s, v_s
        P, Q = params.particular()
        W, a, wd = params.u_freq, params.a, params.omega_d
        phi = W * t_s
        e0 = x_s - (P * math.cos(phi) + Q * math.sin(phi))
        d0 = v_s - W * (-P * math.sin(phi) + Q * math.cos(phi))
        B = (d0 + a * e0) / wd
        self._P, self._Q, self._e0, self._d0, self._B = P, Q, e0, d0, B
        self._B1 = -(e0 * wd + a * B)  # y' = e^{-as}(d0 cos + B1 sin)

    def _pieces(self, s):
        """Return ``(e^{-as} cos(wd s) - 1, e^{-as} sin(wd s), W s / 2)``, stably."""
        p = self.params
        s = np.asarray(s, dtype=float)
        ws = p.omega_d * s
        cm1 = np.expm1(-p.a * s) * np.cos(ws) - 2.0 * np.sin(0.5 * ws) ** 2
        return cm1, np.exp(-p.a * s) * np.sin(ws), 0.5 * p.u_freq * s

    def displacement(self, s):
        """Return ``x(t_s + s) - x_s``."""
        cm1, es, half = self._pieces(s)
        mid = self.params.u_freq * self.t_s + half
        dp = -2.0 * np.sin(half) * (self._P * np.sin(mid) - self._Q * np.cos(mid))
        return dp + self._e0 * cm1 + self._B * es

    def position(self, s):
        """Return ``x(t_s + s)``."""
        return self.x_s + self.displacement(s)

    def velocity(self, s):
        """Return ``x'(t_s + s)``."""
        cm1, es, half = self._pieces(s)
        W = self.params.u_freq
        mid = W * self.t_s + half
        dv = -2.0 * W * np.sin(half) * (self._P * np.cos(mid) + self._Q * np.sin(mid))
        return self.v_s + dv + self._d0 * cm1 + self._B1 * es

    def gap(self, s):
        """Return ``x_max - x(t_s + s)`` (exact cancellation when ``x_s = x_max``)."""
        return (self.params.x_max - self.x_s) - self.displacement(s)

    def derivative(self, s, k: int):
        """Return the ``k``-th time derivative of ``x`` at ``t_s + s`` (closed form)."""
        p = self.params
        s = np.asarray(s, dtype=float)
        lam = complex(-p.a, p.omega_d)
        hom = (self._e0 - 1j * self._B) * lam**k * np.exp(lam * s)
        iw = 1j * p.u_freq
        part = (self._P - 1j * self._Q) * iw**k * np.exp(iw * (self.t_s + s))
        return np.real(hom + part)

    def bound(self, k: int) -> float:
        """Return an upper bound of ``|x^(k)|`` over the whole flight (``s >= 0``).

        ``|d^k/ds^k e^{-as}(e0 cos + B sin)| <= omega^k hypot(e0, B)`` since
        ``|-a + i wd| = omega``; the periodic part contributes ``W^k hypot(P, Q)``.
        """
        p = self.params
        return p.omega**k * math.hypot(self._e0, self._B) + p.u_freq**k * math.hypot(
            self._P, self._Q
        )
