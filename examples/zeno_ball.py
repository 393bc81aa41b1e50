"""Complete Zeno executions (Or and Ames): the flat ball, the ball on a sine surface.

    python examples/zeno_ball.py [FOLDER]

zeno_ball.csv goes into FOLDER (made if missing; default: the working directory).

The flat ball ends at rest with h = v = 0 exactly; the ball on y = sin x
(the paper's Example 1) truncates near t = 2.725, slides, lifts off near
t = 3.732 and is trapped sliding in a valley after a second truncation.
"""

import sys
from pathlib import Path

from fmibridge.methods import Halving
from fmibridge.methods.completion import Completion
from fmibridge.models import bouncing_ball, bouncing_ball_zeno_time
from fmibridge.models.lagrangian import to_hybrid
from fmibridge.models.or_ames import sine_ball

flat = Completion(Halving(h=1e-2)).run(bouncing_ball(h0=1.0, g=9.81, e=0.8), t_end=10.0)
(zeno,) = [e for e in flat.events if e.edge == "zeno"]
print(
    f"flat ball: switched to contact at t = {zeno.t:.12f} s, exact Zeno time "
    f"{bouncing_ball_zeno_time():.12f} s, {len(flat.events)} events, final "
    f"h = {flat['h'][-1]}, v = {flat['v'][-1]}, lam = {flat['lam'][-1]:.4g}"
)

system = to_hybrid(sine_ball(), q0=[0.0, 2.0], v0=[1.5, 0.0])
result = Completion(Halving(h=1e-2), eps=1e-3, switch="truncation").run(system, 20.0)
events = result.events_frame()
print(
    events[events["edge"] != "impact"][
        ["time", "edge", "x_after", "x_dot_after"]
    ].to_string(index=False)
)
print(result.status.value, result.stats)

folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
out = result.to_csv(folder / "zeno_ball.csv")
print(f"wrote {out.resolve()} (columns x, y, x_dot, y_dot, lam, mode)")
