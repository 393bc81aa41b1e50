"""The ball's events: an FMU's own impacts (``when h <= 0 then reinit(v, ...)``
in BouncingBallEvents.fmu), located by Halving to 1e-10 s, against the exact
impact times.

    python docs/gallery/ball_events.py [FOLDER]  # FOLDER/ball_events.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fmibridge  # noqa: E402
from fmibridge.examples import load_builder  # noqa: E402
from fmibridge.models import bouncing_ball_impacts  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
builder = load_builder(ROOT / "fmus")  # fmus/build.py
fmu = builder.build_fmus(models=["BouncingBallEvents"])["BouncingBallEvents"]
result = fmibridge.simulate(fmu, stop_time=3.0, output_interval=0.01)
times = result.event_times
error = np.abs(times - bouncing_ball_impacts(len(times)))

fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 4))
top.plot(result.t, result["h"], lw=1)
top.plot(times, np.zeros_like(times), "v", color="C3", label="the FMU's events")
top.set_ylabel("h / m")
top.legend(loc="upper right", frameon=False)
top.set_title(f"BouncingBallEvents.fmu: {len(times)} impacts to 3 s", fontsize=9)
bottom.semilogy(times, np.maximum(error, 1e-17), "o", color="C3")
bottom.set_ylabel("|t - t exact| / s")
bottom.set_xlabel("t / s")
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "ball_events.png", dpi=110)
plt.close(fig)
print(f"{len(times)} impacts, largest error {error.max():.2g} s")
