"""Which steps a run may undo: those a guard may cross, forecast from past points.

A flow that must save its state to undo a step (fmi2GetFMUstate, FMI 2.0 sec.
2.1.8) asks `CrossingForecast` before each step. A guard's last three points
give its slope s and divided difference a; over h it moves about m = abs(s) h +
abs(a) (t - t1 + h) h. The step is saved where abs(g(t)) <= m or the quadratic
at t + h is within m of the surface; without three recent points, always.

References
----------
Esposito and Kumar, "An asynchronous integration and event detection algorithm
for simulating multi-agent hybrid systems", ACM TOMACS 14(4), 2004 (approaching
guards from the domain side by their extrapolation).
"""

from __future__ import annotations

from ._guard_history import POINTS, REACH, CrossingForecast

__all__ = ["POINTS", "REACH", "CrossingForecast"]
