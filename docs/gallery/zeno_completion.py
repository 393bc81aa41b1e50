"""A Zeno execution on an FMU, completed: the ball's impacts accumulate at
t = 4.0637 s; Completion projects it onto the floor and holds it there with the
contact force lam = m g (Or and Ames).

    python docs/gallery/zeno_completion.py [FOLDER]  # FOLDER/zeno_completion.png
"""

import sys
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fmibridge  # noqa: E402
from fmibridge.examples import load_builder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# incremental: once per checkout
load_builder(ROOT / "fmus").build_fmus(models=["BouncingBall"])
result = fmibridge.simulate(
    ROOT / "adapters" / "bouncing_ball.toml", stop_time=5.0, zeno="complete"
)
(zeno,) = [e for e in result.events if e.edge == "zeno"]

fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 4))
top.plot(result.t, result["h"], lw=1)
impacts = [e.t for e in result.events if e.edge == "floor"]
top.plot(impacts, [0.0] * len(impacts), "|", color="C3", ms=8, label="impacts")
top.axvline(zeno.t, color="0.5", ls="--", lw=0.8)
top.set_ylabel("h / m")
top.legend(loc="upper right", frameon=False)
top.set_title(
    f"BouncingBall.fmu, zeno='complete': {len(impacts)} impacts, "
    f"Zeno at t = {zeno.t:.4f} s, then at rest",
    fontsize=9,
)
# lam is recorded in the constrained mode only (NaN in flight, where it is 0)
bottom.plot(result.t, np.nan_to_num(result["lam"]), color="C2", lw=1)
bottom.set_ylabel("lam / N")
bottom.set_ylim(-1, 11)
bottom.set_xlabel("t / s")
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "zeno_completion.png", dpi=110)
plt.close(fig)
lam = result["lam"][-1]
print(f"Zeno at t = {zeno.t:.12f} s, {len(impacts)} impacts, lam = {lam:.4g} N")
