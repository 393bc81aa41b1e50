"""The unicycle in a corridor (Esposito and Kumar, Example 1, eqs. 22-23).

x' = cos(theta), y' = sin(theta), theta' = u2 with u2 = 0 for x < 1.75 and
0.2 after: a straight line, then a counter-clockwise arc of radius 5. The
collision set is the top wall y >= 0.5, the right wall x >= 3.5 and the
block {y <= -0.4 and x <= 2.8}, a conjunction of two guards. The paper's
initial condition is only in its Fig. 6, so the nominal one here is chosen
[decision] to clip the block's corner (2.8, -0.4) by a small margin.
"""

from __future__ import annotations

import math

import numpy as np

from fmibridge.core.guards import Edge, Guard
from fmibridge.core.system import HybridSystem, Mode
from fmibridge.flows.native import NativeFlow

SWITCH_X, TURN_RATE = 1.75, 0.2  # eq. 22
TOP, RIGHT, BLOCK_X, BLOCK_Y = 0.5, 3.5, 2.8, -0.4  # eq. 23
NOMINAL = (
    0.0,
    0.1376,
    -0.2321,
)  # x0, y0, theta0: the arc dips 0.01 below the block top


def _affine(fn, gradient):
    fn.affine = True
    fn.gradient = lambda t, x: (np.array(gradient, dtype=float), 0.0)
    return fn


def corridor(x0: float, y0: float, theta0: float) -> HybridSystem:
    """Return the unicycle of eq. 22 with the three collision guards of eq. 23.

    Every collision leads to the mode "crashed" (at rest), so the first
    event of a run is the first collision.
    """

    def drive(t, x, u):
        turn = TURN_RATE if x[0] >= SWITCH_X else 0.0
        return np.array([math.cos(x[2]), math.sin(x[2]), turn])

    top = _affine(lambda t, x: TOP - x[1], [0.0, -1.0, 0.0])
    right = _affine(lambda t, x: RIGHT - x[0], [-1.0, 0.0, 0.0])
    above = _affine(lambda t, x: x[1] - BLOCK_Y, [0.0, 1.0, 0.0])
    past = _affine(lambda t, x: x[0] - BLOCK_X, [1.0, 0.0, 0.0])

    def block(t, x):
        return max(above(t, x), past(t, x))  # > 0 outside the block

    vars(block).update(components=(above, past))  # what `Guard` reads
    names = ["x", "y", "theta"]
    edges = (
        Edge(Guard(top, name="top"), "crashed"),
        Edge(Guard(right, name="right"), "crashed"),
        Edge(Guard(block, name="block"), "crashed"),
    )
    still = NativeFlow(lambda t, x, u: np.zeros(3), names, name="crashed")
    return HybridSystem(
        [
            Mode("drive", NativeFlow(drive, names, name="unicycle"), edges),
            Mode("crashed", still),
        ],
        "drive",
        [x0, y0, theta0],
        name="corridor",
    )


def corridor_first_collision(x0: float, y0: float, theta0: float, ds: float = 1e-4):
    """Return (guard name, time, depth) of the exact first collision, or None.

    The path is analytic (a line, then an arc); it is sampled every `ds` of
    arc length. `depth` is how far the path enters the block's region (the
    largest min(-(y + 0.4), 2.8 - x) along it), a measure of the margin.
    """
    t_switch = (SWITCH_X - x0) / math.cos(theta0)
    s = np.arange(0.0, 8.0, ds)  # every collision of this geometry comes before s = 8
    phi = theta0 + TURN_RATE * np.maximum(s - t_switch, 0.0)
    line_x, line_y = x0 + s * math.cos(theta0), y0 + s * math.sin(theta0)
    y1 = y0 + t_switch * math.sin(theta0)
    cx, cy = SWITCH_X - math.sin(theta0) / TURN_RATE, y1 + math.cos(theta0) / TURN_RATE
    arc_x, arc_y = cx + np.sin(phi) / TURN_RATE, cy - np.cos(phi) / TURN_RATE
    x = np.where(s < t_switch, line_x, arc_x)
    y = np.where(s < t_switch, line_y, arc_y)
    inside = np.minimum(BLOCK_Y - y, BLOCK_X - x)
    hits = {"top": y >= TOP, "right": x >= RIGHT, "block": inside >= 0.0}
    first = {k: int(np.argmax(v)) for k, v in hits.items() if v.any()}
    if not first:
        return None
    name = min(first, key=lambda k: first[k])
    stop = first[name]
    return name, float(s[stop]), float(np.max(inside[: stop + int(1.0 / ds)]))
