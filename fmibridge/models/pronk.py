"""The pronking body of Burden et al., Sec. V-C: two leg springs, pitch allowed.

A rigid body (mass m, inertia I), state (x, z, theta, xd, zd, thetad), carries
two massless leg springs (stiffness k, rest length l) on pins d/2 ahead of
('front') and behind ('back') its centre of mass. In the air a leg keeps the
angle psi to the body, so the foot of the leg at hip offset s = +-d/2 is at
height ``z + s sin(theta) - l cos(theta + psi)``. Touchdown pins the foot
(states `p_front`, `p_back`); the leg pushes with k (l - L) along itself until
it is back at rest length, then stays lifted for the rest of the stride.

Modes are '<front>-<back>', each leg 'air', 'stance' or 'lifted'; the paper's
D_a, D_l, D_r, D_g are 'air-air', the single stances and 'stance-stance'.

References
----------
Burden et al., Sec. V-C, Figs. 15-17 (parameters and initial state). The foot
height and the lift-off rule are derived here from the model of Sec. V-C.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np

from ..core.guards import Edge, Guard
from ..core.system import HybridSystem, Mode
from ..flows.native import NativeFlow

__all__ = ["LEGS", "PronkParams", "contact_intervals", "pronk"]

STATE_NAMES = ("x", "z", "theta", "xd", "zd", "thetad", "p_front", "p_back")
LEGS = ("front", "back")
_HIP = {"front": 0.5, "back": -0.5}  # hip offset along the body, in units of d
_PIN = {"front": 6, "back": 7}  # index of the leg's foot pin in the state
_PHASES = ("air", "stance", "lifted")


@dataclass(frozen=True)
class PronkParams:
    """Body and leg parameters of Sec. V-C (the paper's values by default)."""

    m: float = 1.0
    inertia: float = 1.0
    k: float = 30.0
    l: float = 1.0  # noqa: E741 (the paper's symbol for the leg rest length)
    d: float = 1.0
    g: float = 9.81
    psi: float = math.pi / 5


def _hip(p: PronkParams, leg: str, x: np.ndarray) -> tuple[float, float]:
    s = _HIP[leg] * p.d
    return x[0] + s * math.cos(x[2]), x[1] + s * math.sin(x[2])


def _leg(p: PronkParams, leg: str):
    """The leg's touchdown guard (foot height), lift-off guard (l - L) and reset."""
    s, pin = _HIP[leg] * p.d, _PIN[leg]

    def foot_height(t: float, x: np.ndarray) -> float:
        return x[1] + s * math.sin(x[2]) - p.l * math.cos(x[2] + p.psi)

    def leg_slack(t: float, x: np.ndarray) -> float:
        hx, hz = _hip(p, leg, x)
        return p.l - math.hypot(hx - x[pin], hz)

    def pin_foot(t: float, x: np.ndarray) -> np.ndarray:
        x = x.copy()
        x[pin] = x[0] + s * math.cos(x[2]) + p.l * math.sin(x[2] + p.psi)
        return x

    foot_height.__name__, leg_slack.__name__ = f"{leg}_touchdown", f"{leg}_liftoff"
    return foot_height, leg_slack, pin_foot


def _flow(p: PronkParams, stance: tuple[str, ...]) -> NativeFlow:
    def body(t: float, x: np.ndarray, u: object) -> np.ndarray:
        fx, fz, torque = 0.0, -p.m * p.g, 0.0
        for leg in stance:
            hx, hz = _hip(p, leg, x)
            ax, az = hx - x[_PIN[leg]], hz
            length = math.hypot(ax, az)
            push = p.k * (p.l - length) / length
            rx, rz = hx - x[0], hz - x[1]
            fx, fz = fx + push * ax, fz + push * az
            torque += rx * push * az - rz * push * ax
        return np.array(
            [x[3], x[4], x[5], fx / p.m, fz / p.m, torque / p.inertia, 0.0, 0.0]
        )

    return NativeFlow(body, STATE_NAMES, name="pronk:" + ("+".join(stance) or "air"))


def _mode(p: PronkParams, phases: dict[str, str]) -> Mode:
    stance = tuple(leg for leg in LEGS if phases[leg] == "stance")
    edges = []
    for leg in LEGS:
        foot_height, leg_slack, pin_foot = _leg(p, leg)
        if phases[leg] == "air":
            target = _name({**phases, leg: "stance"})
            edges.append(Edge(Guard(foot_height, "falling"), target, pin_foot))
        elif phases[leg] == "stance":
            target = _name({**phases, leg: "lifted"})
            edges.append(Edge(Guard(leg_slack, "falling"), target))
    return Mode(_name(phases), _flow(p, stance), tuple(edges))


def _name(phases: dict[str, str]) -> str:
    return "-".join(phases[leg] for leg in LEGS)


def pronk(
    thetad0: float = 0.0,
    *,
    z0: float = 1.1,
    xd0: float = 3.4,
    params: PronkParams | None = None,
) -> HybridSystem:
    """Return the pronking body in the air.

    Parameters
    ----------
    thetad0 : float
        Initial pitch rate, rad/s (the paper runs 0 and -0.4).
    z0, xd0 : float
        Initial height (m) and forward speed (m/s).
    params : PronkParams, optional
        Body and leg parameters; the paper's by default.
    """
    p = PronkParams() if params is None else params
    modes = [
        _mode(p, dict(zip(LEGS, combo, strict=True)))
        for combo in itertools.product(_PHASES, repeat=len(LEGS))
    ]
    x0 = [0.0, z0, 0.0, xd0, 0.0, thetad0, 0.0, 0.0]
    return HybridSystem(
        modes, "air-air", x0, parameters=asdict(p) | {"thetad0": thetad0}, name="pronk"
    )


def contact_intervals(result) -> dict[str, list[tuple[float, float]]]:
    """Return, per leg, the (touchdown, lift-off) times of its stance phases
    (a stance running at the end closes at the Result's last time)."""
    intervals: dict[str, list[tuple[float, float]]] = {leg: [] for leg in LEGS}
    starts: dict[str, float] = {}
    for event in result.events:
        leg, _, kind = event.edge.partition("_")
        if kind == "touchdown":
            starts[leg] = event.t
        elif kind == "liftoff" and leg in starts:
            intervals[leg].append((starts.pop(leg), event.t))
    for leg, start in starts.items():
        intervals[leg].append((start, float(result.t[-1])))
    return intervals
