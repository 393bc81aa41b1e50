"""The bouncing ball: a native model with its exact impact and Zeno times."""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import FmibridgeError
from ..core.guards import Edge, Guard, UnilateralConstraint
from ..core.system import HybridSystem, Mode
from ..flows.native import NativeFlow


def bouncing_ball(
    h0: float = 1.0, v0: float = 0.0, g: float = 9.81, e: float = 0.8
) -> HybridSystem:
    """Return the ball bouncing on a floor: h' = v, v' = -g; at h = 0, v -> -e v.

    Parameters
    ----------
    h0, v0 : float
        Initial height (m, >= 0) and velocity (m/s).
    g : float
        Gravity, m/s^2 (> 0).
    e : float
        Coefficient of restitution in [0, 1].
    """
    if not g > 0:
        raise FmibridgeError(f"bouncing_ball: `g` must be > 0, got {g!r}.")
    if not 0.0 <= e <= 1.0:
        raise FmibridgeError(f"bouncing_ball: `e` must be in [0, 1], got {e!r}.")

    def flight(t, x, u):
        return np.array([x[1], -g])

    def floor(t, x):
        return x[0]

    def bounce(t, x):
        return np.array([x[0], -e * x[1]])

    edge = Edge(Guard(floor, "falling"), "flight", bounce, name="floor")
    mode = Mode("flight", NativeFlow(flight, ["h", "v"], name="bouncing_ball"), (edge,))
    return HybridSystem(
        [mode],
        "flight",
        {"h": h0, "v": v0},
        parameters={"g": g, "e": e},
        constraint=UnilateralConstraint("h", "v", e),
        name="bouncing_ball",
    )


def bouncing_ball_impacts(
    n: int, h0: float = 1.0, g: float = 9.81, e: float = 0.8
) -> np.ndarray:
    """Return the first `n` exact impact times of the ball dropped from rest at h0.

    t_1 = sqrt(2 h0 / g); the k-th flight after it lasts 2 e^k v_1 / g with
    v_1 = sqrt(2 g h0).
    """
    v1 = math.sqrt(2.0 * g * h0)
    flights = 2.0 * v1 / g * e ** np.arange(1, n)
    return math.sqrt(2.0 * h0 / g) + np.concatenate([[0.0], np.cumsum(flights)])


def bouncing_ball_zeno_time(h0: float = 1.0, g: float = 9.81, e: float = 0.8) -> float:
    """Return the Zeno time sqrt(2 h0/g) (1 + e)/(1 - e) of the ball dropped at rest."""
    return math.sqrt(2.0 * h0 / g) * (1.0 + e) / (1.0 - e)
