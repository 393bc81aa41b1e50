"""Which steps a run may undo: those a guard may cross, forecast from past points.

A method undoes a step only to locate a guard's crossing (Halving halves it,
Unilateral rejects it). A flow that must save its state to undo a step (a
Co-Simulation FMU, whose fmi2GetFMUstate copies its whole internal state: FMI 2.0,
sec. 2.1.8) asks
`CrossingForecast` before each step whether to save: yes where a guard's values
at the last communication points, extrapolated over the step, may reach zero.
The guard is approached from the domain side (Esposito and Kumar's idea, applied
to the communication step): its values at the last three points t2 < t1 < t
give its slope s = (g(t) - g(t1)) / (t - t1) and its second divided difference
a, and its value at t + h is extrapolated by the quadratic through them,
g(t) + s h + a h (h + t - t1). Over the step it moves by about
m = abs(s) h + abs(a) (t - t1 + h) h. The step is saved where abs(g(t)) <= m
(a guard this near may turn), or where the extrapolated value is on g(t)'s side
by at most m (it crosses, or is one more step's motion from it): a guard
approached at speed v is saved within two steps of its crossing, one that
recedes only while within a step's motion of zero. Without three recent
points (the run's first steps, after a mode change or a long gap) every step
is saved.

It runs compiled (`_forecast`): it is asked before every communication step.
The points and the quadratic are the guard history's (`_guard_history`), which
Halving's walk of a flow stepped forward only reads too.

A crossing the forecast missed is still located: the flow then enters the
point it must return to without a saved state, and says so (`FmibridgeWarning`).

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
