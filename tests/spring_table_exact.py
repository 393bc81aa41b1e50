"""The exact motion of a ball bouncing on a table on a spring, the oracle of
tests/test_coupled_zeno.py (BouncingBall on SpringTable, without damping).

In flight both bodies move in closed form: the ball h(s) = h + v s - g s^2 / 2,
the table x(s) = x cos(w s) + (u / w) sin(w s) with w^2 = k / m_table. An
impact is a root of the gap h - x, found by scanning and Brent's method on
the gap divided by s (so that the root at s = 0 of a touching start drops
out); the impact law keeps m_ball v + m_table u and reverses the relative
velocity times e. The impacts accumulate at the Zeno time; from there the
two move as one mass on the spring, (m_ball + m_table) x'' = -k x - m_ball g,
with the contact force lam = m_ball (g + x''), until lam = 0 at
x = m_table g / k, where the ball lifts off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

# A series ends once the next flight would be shorter than this: the rest of a
# geometric tail with e = 0.3 adds less than 1.5e-15 s.
SHORTEST_FLIGHT = 1e-15
MAX_IMPACTS = 500


@dataclass(frozen=True)
class BallOnTable:
    """Ball mass, table mass, spring stiffness, gravity, restitution."""

    m_ball: float = 0.05
    m_table: float = 1.0
    k: float = 100.0
    g: float = 9.81
    e: float = 0.3

    @property
    def omega(self) -> float:
        """The table's angular frequency alone."""
        return math.sqrt(self.k / self.m_table)

    def flight(self, s: float, state: np.ndarray) -> np.ndarray:
        """(h, v, x, u) after s seconds of flight from `state`."""
        h, v, x, u = state
        w, c, sn = self.omega, math.cos(self.omega * s), math.sin(self.omega * s)
        return np.array(
            [h + v * s - self.g * s * s / 2, v - self.g * s, x * c + u / w * sn,
             -x * w * sn + u * c]
        )  # fmt: skip

    def _gap_over_s(self, s: float, state: np.ndarray) -> float:
        """(h - x)(s) / s, without cancellation for small s."""
        h, v, x, u = state
        w = self.omega
        table = 2.0 * x * math.sin(w * s / 2) ** 2 / s - u * np.sinc(w * s / math.pi)
        return (h - x) / s + v - self.g * s / 2 + table

    def flight_guess(self, state: np.ndarray) -> float:
        """2 (v - u) / (g + the table's acceleration): the next flight from a
        touching state, to first order (0 if the table does not push)."""
        _, v, x, u = state
        relative = self.g - self.omega**2 * x
        return 2.0 * max(v - u, 0.0) / relative if relative > 0 else 0.0

    def next_impact(self, state: np.ndarray) -> float:
        """The flight time to the next impact from `state` (h >= x)."""
        guess = self.flight_guess(state)
        step = min(guess / 8, 0.02 / self.omega) if guess > 0 else 0.02 / self.omega
        a, fa = step, self._gap_over_s(step, state)
        for i in range(2, 100_000):
            b = i * step
            fb = self._gap_over_s(b, state)
            if fb <= 0.0 < fa:
                return brentq(
                    self._gap_over_s, a, b, args=(state,), xtol=1e-18, rtol=1e-15
                )
            a, fa = b, fb
        raise RuntimeError("no impact found")

    def impact(self, state: np.ndarray) -> np.ndarray:
        """The state after Newton's impact law between ball and table."""
        h, v, x, u = state
        impulse = -(1 + self.e) * (v - u) / (1 / self.m_ball + 1 / self.m_table)
        return np.array([h, v + impulse / self.m_ball, x, u - impulse / self.m_table])

    def bounces(self, t: float, state: np.ndarray) -> tuple[list, float, np.ndarray]:
        """Return the impacts from (t, state) as (time, state before) up to the
        Zeno time, that time, and the common state (x, u) of ball and table there."""
        impacts = []
        for _ in range(MAX_IMPACTS):
            s = self.next_impact(state)
            t, state = t + s, self.flight(s, state)
            state[0] = state[2]  # touching: h - x is a root, up to round-off
            impacts.append((t, state))
            state = self.impact(state)
            if self.flight_guess(state) < SHORTEST_FLIGHT:
                return impacts, t, state[2:]
        raise RuntimeError("the impacts do not accumulate")

    # -- in contact: one mass on the spring --

    @property
    def omega_contact(self) -> float:
        return math.sqrt(self.k / (self.m_ball + self.m_table))

    def contact(self, tau: float, x: float, u: float) -> tuple[float, float, float]:
        """(x, u, lam) tau seconds after contact began at (x, u)."""
        w, rest = self.omega_contact, -self.m_ball * self.g / self.k
        c, sn = math.cos(w * tau), math.sin(w * tau)
        position = rest + (x - rest) * c + u / w * sn
        speed = -(x - rest) * w * sn + u * c
        lam = self.m_ball * (self.g - w * w * (position - rest))
        return position, speed, lam

    def lift_off(self, x: float, u: float) -> float:
        """The time in contact from (x, u) until lam = 0 (x = m_table g / k)."""
        w, rest = self.omega_contact, -self.m_ball * self.g / self.k
        amplitude = math.hypot(x - rest, u / w)
        phase = math.atan2(u / w, x - rest)
        # x - rest = A cos(w tau - phase) = g / w^2 on the way up (sin < 0)
        angle = -math.acos(self.g / (w * w * amplitude)) + phase
        return (angle % (2 * math.pi)) / w
