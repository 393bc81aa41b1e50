"""Which steps a run may undo: those a guard may cross, forecast from past points.

A method undoes a step only to locate a guard's crossing (Halving halves it,
Unilateral rejects it). A flow that must save its state to undo a step (a
Co-Simulation FMU: get FMU state, 0.43 ms a save on a Dymola FMU) asks
`CrossingForecast` before each step whether to save: yes where a guard's values
at the last communication points, extrapolated over the step, may reach zero.
The guard is approached from the domain side (Esposito and Kumar's idea, applied
to the communication step): on the step from t, guard i moves by at most about
abs(s) h + abs(a) (t - t1 + h) h / 2, its slope s and curvature a estimated from
its values at the last three points t2 < t1 < t; the step is saved if abs(g_i(t)) is
within SAFETY times that. Without three recent points (the run's first steps,
after a mode change or a long gap) every step is saved.

A crossing the forecast missed is still located: the flow then enters the
point it must return to without a saved state, and says so (`FmibridgeWarning`).

References
----------
Esposito and Kumar, "An asynchronous integration and event detection algorithm
for simulating multi-agent hybrid systems", ACM TOMACS 14(4), 2004 (approaching
guards from the domain side by their extrapolation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.system import Guard

SAFETY = 4.0  # margin on the extrapolated motion of a guard over one step
REACH = 4.0  # points older than REACH steps back are not used (a gap, a mode change)
POINTS = 3  # the points kept: two slopes give the curvature


class CrossingForecast:
    """`forecast(t, x, h)`: may a guard cross the step of h from (t, x)?

    Parameters
    ----------
    guards : sequence of Guard
        The guards of the modes whose flow asks (all of them: a flow shared by
        modes saves where any of their guards may be crossed).
    """

    def __init__(self, guards: Sequence[Guard]) -> None:
        self.guards = tuple(guards)
        self._points: list[tuple[float, list[float]]] = []  # (t, g), oldest first

    def __call__(self, t: float, x: np.ndarray, h: float) -> bool:
        """True if a guard may cross the step of h from (t, x)."""
        if not self.guards:
            return False
        g = [float(guard.fn(t, x)) for guard in self.guards]
        # a point at or after t was left by an undone step or a reset: forget it
        points = self._points
        while points and points[-1][0] >= t:
            points.pop()
        if len(points) == POINTS:
            del points[0]
        points.append((t, g))
        if len(points) < POINTS or not all(map(math.isfinite, g)):
            return True
        (t2, g2), (t1, g1) = points[0], points[1]
        if t - t2 > REACH * abs(h):
            return True
        dt, dt1, dt2 = t - t1, t1 - t2, t - t2
        for gi, g1i, g2i in zip(g, g1, g2, strict=True):
            s = (gi - g1i) / dt
            a = 2.0 * (s - (g1i - g2i) / dt1) / dt2
            moves = abs(s) * h + abs(a) * (dt + h) * h / 2.0
            if abs(gi) <= SAFETY * moves:
                return True
        return False
