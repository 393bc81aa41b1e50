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

It runs compiled (`_forecast`): it is asked before every communication step.

A crossing the forecast missed is still located: the flow then enters the
point it must return to without a saved state, and says so (`FmibridgeWarning`).

References
----------
Esposito and Kumar, "An asynchronous integration and event detection algorithm
for simulating multi-agent hybrid systems", ACM TOMACS 14(4), 2004 (approaching
guards from the domain side by their extrapolation).
"""

from __future__ import annotations

from ._forecast import POINTS, REACH, SAFETY, CrossingForecast

__all__ = ["POINTS", "REACH", "SAFETY", "CrossingForecast"]
