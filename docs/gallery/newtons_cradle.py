"""Newton's cradle: five CradleBall FMUs, one per ball, a guard between each
pair of neighbours and an impact law that sets the velocities of both FMUs.
Two balls pulled back 0.3 rad hit three at rest: two leave on the other side,
at the time the exact pendulum gives, with the speed the first two arrived with.

    python docs/gallery/newtons_cradle.py [FOLDER]  # FOLDER/newtons_cradle.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fmibridge import Halving  # noqa: E402
from fmibridge.examples import load_builder  # noqa: E402
from fmibridge.models.cradle import newtons_cradle, swing  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
fmu = load_builder(ROOT / "fmus").build_fmus(models=["CradleBall"])["CradleBall"]
THETA0 = 0.3
quarter, _ = swing(THETA0)  # time to the bottom, exact
cradle = newtons_cradle(fmu, [-THETA0, -THETA0, 0.0, 0.0, 0.0])
try:
    result = Halving(h=1e-3).run(cradle, 3.9 * quarter)
finally:
    cradle.close()

fig, ax = plt.subplots(figsize=(7, 3.2))
D = 0.1  # drawn as balls of diameter D hung D apart: touching when the sines meet
for i, name in enumerate(result.state_names[0::2]):
    ax.plot(result.t, D * i + np.sin(result[name]), lw=1, label=f"ball {i + 1}")
for t in result.event_times:
    ax.axvline(t, color="0.85", lw=0.5, zorder=0)
ax.set_xlabel("t / s")
ax.set_ylabel("x / m (L sin theta + 0.1 i)")
ax.legend(fontsize=7, ncol=5, frameon=False, loc="upper center")
ax.set_ylim(-0.35, 1.0)
ax.set_title(
    f"{len(result.event_times)} impacts; the first at {result.event_times[0]:.9f} s "
    f"(exact {quarter:.9f} s)",
    fontsize=9,
)
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "newtons_cradle.png", dpi=110)
plt.close(fig)
print(f"{len(result.event_times)} impacts, first at {result.event_times[0]:.12f} s")
