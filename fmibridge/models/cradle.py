"""Newton's cradle: one CradleBall FMU per ball, impacts between neighbours.

Ball i is a pendulum of length L (`fmus/CradleBall`), the pivots spaced so that
neighbours touch at rest; ball i meets ball i+1 when
``g_i = L sin(theta_{i+1}) - L sin(theta_i)`` falls to zero. The impact is a
horizontal impulse with Newton's restitution e, which resets two FMUs at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..core.errors import FmibridgeError
from ..core.guards import Edge, Guard
from ..core.system import HybridSystem, Mode
from ..flows.cosim_master import Communication
from ..flows.coupled import couple
from ..flows.fmu import open_fmu


def newtons_cradle(
    fmu: str | Path,
    theta0: Sequence[float],
    *,
    e: float = 1.0,
    length: float = 1.0,
    mass: float | Sequence[float] = 1.0,
    g: float = 9.81,
    interface: str = "me",
    communication: Communication | None = None,
) -> HybridSystem:
    """Return a Newton's cradle of len(theta0) balls released at rest.

    Parameters
    ----------
    fmu : path
        The CradleBall FMU (FMI 2 or 3), one instance per ball.
    theta0 : sequence of float
        Initial angles, rad; neighbours must not overlap (g_i >= 0).
    e : float
        Coefficient of restitution in [0, 1].
    length, mass, g : float
        String length (m), ball mass (kg, or one per ball) and gravity.
    interface : {'me', 'cs'}
        Model Exchange (the master integrates all balls together) or
        Co-Simulation (each FMU steps itself; `communication` applies).

    Returns
    -------
    HybridSystem
        One mode, "cradle", with an edge "ball{i}-ball{i+1}" per neighbours.
    """
    n = len(theta0)
    masses = np.broadcast_to(np.asarray(mass, dtype=float), (n,))
    if n < 2 or not 0.0 <= e <= 1.0 or np.any(masses <= 0):
        raise FmibridgeError(
            f"newtons_cradle: needs two or more balls, e in [0, 1] and masses > 0; "
            f"got {n} balls, e = {e!r}, mass = {mass!r}."
        )
    balls = {
        f"ball{i + 1}": open_fmu(
            fmu,
            interface,
            parameters={"L": length, "m": float(masses[i]), "g": g},
            start={"theta": float(theta0[i]), "omega": 0.0},
        )
        for i in range(n)
    }
    flow = couple(balls, [], communication=communication)
    edges = [
        Edge(
            Guard(_gap(i, length), "falling"),
            "cradle",
            _impact(i, length, masses[i], masses[i + 1], e),
            f"ball{i + 1}-ball{i + 2}",
        )
        for i in range(n - 1)
    ]
    return HybridSystem(
        [Mode("cradle", flow, edges)],
        "cradle",
        flow.x0,
        parameters={"e": e, "L": length, "g": g},
        name=f"newtons_cradle_{n}",
    )


def _gap(i: int, length: float):
    """g_i(t, x) = L sin(theta_{i+1}) - L sin(theta_i); states are (theta, omega)."""

    def gap(t: float, x: np.ndarray) -> float:
        return length * (math.sin(x[2 * i + 2]) - math.sin(x[2 * i]))

    gap.__name__ = f"gap_{i + 1}"
    return gap


def _impact(i: int, length: float, m1: float, m2: float, e: float):
    """The impulse P between balls i and i+1 with restitution e on vx.

    With c_k = cos(theta_k), vx_k = L c_k omega_k, P changes omega_k by
    -/+ P c_k / (m_k L), and vx_{i+1} - vx_i -> -e (vx_{i+1} - vx_i) gives
    P = -(1 + e) (vx_{i+1} - vx_i) / (c_i^2 / m1 + c_{i+1}^2 / m2).
    """

    def impact(t: float, x: np.ndarray) -> np.ndarray:
        c1, c2 = math.cos(x[2 * i]), math.cos(x[2 * i + 2])
        relative = length * (c2 * x[2 * i + 3] - c1 * x[2 * i + 1])
        impulse = -(1.0 + e) * relative / (c1 * c1 / m1 + c2 * c2 / m2)
        y = x.copy()
        y[2 * i + 1] -= impulse * c1 / (m1 * length)
        y[2 * i + 3] += impulse * c2 / (m2 * length)
        return y

    return impact


def swing(theta0: float, length: float = 1.0, g: float = 9.81) -> tuple[float, float]:
    """Return (time to the bottom, angular speed there) of a pendulum released at
    rest from theta0: sqrt(L/g) K(sin^2(theta0/2)) (K the complete elliptic
    integral of the first kind) and 2 sqrt(g/L) sin(theta0/2)."""
    from scipy.special import ellipk

    k = math.sin(abs(theta0) / 2.0)
    return math.sqrt(length / g) * float(ellipk(k * k)), 2.0 * math.sqrt(g / length) * k
