"""Which steps a run may undo: those a guard may cross, forecast from past points.

A flow that must save its state to undo a step (a Co-Simulation FMU:
fmi2GetFMUstate copies its whole state, FMI 2.0 sec. 2.1.8) asks
`CrossingForecast` before each step whether to save. A guard's values at the
last three points t2 < t1 < t give its slope s and second divided difference
a; over a step h it moves by about m = abs(s) h + abs(a) (t - t1 + h) h. The
step is saved where abs(g(t)) <= m, or where the quadratic through the points
at t + h is on g(t)'s side by at most m; without three recent points, always.
A crossing the forecast missed is still located, with a warning that no state
was saved (`FmibridgeWarning`).

References
----------
Esposito and Kumar, "An asynchronous integration and event detection algorithm
for simulating multi-agent hybrid systems", ACM TOMACS 14(4), 2004 (approaching
guards from the domain side by their extrapolation).
"""

from __future__ import annotations

from ._forecast import REACH, CrossingForecast
from ._guard_history import POINTS

__all__ = ["POINTS", "REACH", "CrossingForecast"]
