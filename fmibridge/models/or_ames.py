"""Lagrangian models with one unilateral contact: the examples of Or and Ames.

Each returns a `LagrangianSystem` (one per parameter set, so a process compiles
it once; its functions are numba-compilable); `to_hybrid(model, q0, v0)` makes
it a `HybridSystem`. Where a closed form exists, the model supplies bounds for
the reliable truncation conditions (Def. 7).

References
----------
Or and Ames, Examples 1-4 (Secs. II, VI).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.errors import FmibridgeError
from ..methods.contact import ZenoBounds
from .lagrangian import LagrangianSystem


def _positive(model: str, **values: float) -> None:
    for name, value in values.items():
        if not (math.isfinite(value) and value > 0):
            raise FmibridgeError(f"{model}: `{name}` must be > 0, got {value!r}.")


def _ball(name: str, g: float, e: float, m: float, **ground) -> LagrangianSystem:
    """A point mass m at q = (x, y) under gravity g over the ground `ground`."""
    _positive(name, g=g, m=m)
    return LagrangianSystem(
        ("x", "y"),
        lambda q: m * np.eye(2),
        lambda t, q, v: np.array([0.0, m * g]),
        restitution=e,
        parameters={"g": g, "e": e, "m": m},
        name=name,
        **ground,
    )


@functools.cache
def flat_ball(g: float = 9.81, e: float = 0.8, m: float = 1.0) -> LagrangianSystem:
    """Return a point mass over flat ground, h = y (Or and Ames, Sec. VI).

    hddot = -g everywhere, so a_min = a_max = g, eta = 1 and zeta = g exactly.
    """

    def bounds(t, x_star, eps_q, eps_v) -> ZenoBounds:
        return ZenoBounds(a_min=g, a_max=g, eta=1.0, zeta=g)

    return _ball(
        "flat_ball",
        g,
        e,
        m,
        gap=lambda q: q[1],
        gap_gradient=lambda q: np.array([0.0, 1.0]),
        gap_hessian=lambda q: np.zeros((2, 2)),
        bounds=bounds,
    )


@functools.cache
def sine_ball(g: float = 1.0, e: float = 0.5, m: float = 1.0) -> LagrangianSystem:
    """Return the ball on the sinusoidal surface h = y - sin x (Examples 1 and 3).

    Defaults are the paper's; start it at q = (0, 2), qdot = (1.5, 0). Over V,
    hddot = xdot^2 sin x - g is extreme at the corners of the intervals of
    xdot^2 and sin x; eta <= 1 (M = m I, abs(dh) >= 1) and zeta = g.

    References
    ----------
    Or and Ames, Example 1 and Fig. 4(a)-(d).
    """

    def bounds(t, x_star, eps_q, eps_v) -> ZenoBounds:
        speed = abs(x_star[2])
        squares = (max(speed - eps_v, 0.0) ** 2, (speed + eps_v) ** 2)
        s = math.sin(x_star[0])
        sines = (max(s - eps_q, -1.0), min(s + eps_q, 1.0))
        corners = [a * b for a in squares for b in sines]
        return ZenoBounds(
            a_min=g - max(corners), a_max=g - min(corners), eta=1.0, zeta=g
        )

    return _ball(
        "sine_ball",
        g,
        e,
        m,
        gap=lambda q: q[1] - math.sin(q[0]),
        gap_gradient=lambda q: np.array([-math.cos(q[0]), 1.0]),
        gap_hessian=lambda q: np.array([[math.sin(q[0]), 0.0], [0.0, 0.0]]),
        bounds=bounds,
    )


@functools.cache
def knee_pendulum(
    m1: float = 1.0,
    m2: float = 1.0,
    l1: float = 1.0,
    l2: float = 1.0,
    g: float = 1.0,
    e: float = 0.5,
) -> LagrangianSystem:
    """Return the double pendulum with a knee stop, h = theta2 (Examples 2 and 4).

    theta1 is link 1's angle from the downward vertical, theta2 the knee angle.
    Defaults are the paper's; start it at q = (30 deg, 25 deg), qdot = 0.

    References
    ----------
    Or and Ames, Example 2 and Fig. 4(e)-(f) (M, C qdot and N derived here).
    """
    _positive("knee_pendulum", m1=m1, m2=m2, l1=l1, l2=l2, g=g)

    def mass(q: np.ndarray) -> np.ndarray:
        c2 = math.cos(q[1])
        m11 = m1 * l1**2 / 3 + m2 * (l1**2 + l2**2 / 3 + l1 * l2 * c2)
        m12 = m2 * (3 * l1 * l2 * c2 + 2 * l2**2) / 6
        return np.array([[m11, m12], [m12, m2 * l2**2 / 3]])

    def bias(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        k = 0.5 * m2 * l1 * l2 * math.sin(q[1])
        coriolis = np.array([-k * (2 * v[0] * v[1] + v[1] ** 2), k * v[0] ** 2])
        s12 = 0.5 * m2 * l2 * g * math.sin(q[0] + q[1])
        gravity = np.array([(0.5 * m1 + m2) * l1 * g * math.sin(q[0]) + s12, s12])
        return coriolis + gravity

    return LagrangianSystem(
        ("theta1", "theta2"),
        mass,
        bias,
        gap=lambda q: q[1],
        gap_gradient=lambda q: np.array([0.0, 1.0]),
        gap_hessian=lambda q: np.zeros((2, 2)),
        restitution=e,
        parameters={"m1": m1, "m2": m2, "l1": l1, "l2": l2, "g": g, "e": e},
        name="knee_pendulum",
    )


@functools.cache
def stop_oscillator(params) -> LagrangianSystem:
    """Return the forced oscillator with a stop as a Lagrangian system, h = x_max - x.

    `params` is an `OscillatorParams`; start it at q = (x0,), qdot = (v0,).

    References
    ----------
    Burden et al., Sec. V-B, eq. 28 and Table I.
    """
    m, a, w2 = params.m, params.a, params.omega**2
    u_amp, u_freq, x_max = params.u_amp, params.u_freq, params.x_max

    def bias(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        u = u_amp * math.cos(u_freq * t)
        return np.array([m * (2 * a * v[0] + w2 * q[0]) - u])

    return LagrangianSystem(
        ("x",),
        lambda q: np.array([[m]]),
        bias,
        gap=lambda q: x_max - q[0],
        gap_gradient=lambda q: np.array([-1.0]),
        gap_hessian=lambda q: np.zeros((1, 1)),
        restitution=params.c,
        parameters=dict(vars(params)),
        name="stop_oscillator",
    )
