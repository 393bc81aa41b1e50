"""Bounce a ball natively: print the event table and write the samples as CSV.

python examples/bouncing_ball.py [FOLDER]

writes bouncing_ball.csv into FOLDER (made if missing; default: the working directory).
"""

import sys
from pathlib import Path

from fmibridge import Halving
from fmibridge.models import bouncing_ball, bouncing_ball_impacts

system = bouncing_ball(h0=1.0, g=9.81, e=0.8)
result = Halving(h=1e-3, integrator="rk4").run(system, t_end=3.0)

events = result.events_frame()
events["exact"] = bouncing_ball_impacts(len(events))
events["error"] = events["time"] - events["exact"]
print(events[["time", "exact", "error", "v_before", "v_after"]].to_string(index=False))
print(result.status.value, result.stats)

folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
out = result.to_csv(folder / "bouncing_ball.csv")
print(f"wrote {out.resolve()}")
