"""Relaxation's strips (Burden et al., Fig. 12): a step that ends beyond the
floor by tau <= eps is kept there, on the strip, for eps - tau, then the reset
acts on the point where the step entered the guard. No crossing is located;
each impact is late by at most eps, so the impact times' error follows eps.

    python docs/gallery/relaxation_strips.py [FOLDER]  # FOLDER/relaxation_strips.png
"""

import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fmibridge import Relaxation  # noqa: E402
from fmibridge.core.errors import FmibridgeWarning  # noqa: E402
from fmibridge.models import bouncing_ball, bouncing_ball_impacts  # noqa: E402

EPS = 0.05  # wide, to be seen
errors = {}
with warnings.catch_warnings():
    # Strips wider than 2e-5 s warn that their wait displaces h: here on purpose.
    warnings.simplefilter("ignore", FmibridgeWarning)
    wide = Relaxation(h=1e-2, eps=EPS).run(bouncing_ball(), 1.0)
    for eps in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
        times = Relaxation(h=1e-3, eps=eps).run(bouncing_ball(), 3.0).event_times
        errors[eps] = np.abs(times - bouncing_ball_impacts(len(times))).max()

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4))
t_impact = bouncing_ball_impacts(1)[0]
near = (wide.t > t_impact - 0.08) & (wide.t < t_impact + 0.12)
left.axhspan(-EPS, 0.0, color="C1", alpha=0.2, label=f"strip, eps = {EPS}")
left.plot(wide.t[near], wide["h"][near], ".-", lw=0.8, label="Relaxation, h = 0.01")
left.axvline(t_impact, color="0.5", ls="--", lw=0.8, label="exact impact")
left.set_xlabel("t / s")
left.set_ylabel("h / m")
left.legend(fontsize=7, frameon=False, loc="upper center")
left.set_title("a step lands on the strip (h < 0); the reset follows", fontsize=9)
right.loglog(list(errors), list(errors.values()), "o-", label="largest error")
right.loglog(list(errors), list(errors), "--", color="0.5", lw=0.8, label="eps")
right.set_xlabel("eps")
right.set_ylabel("impact-time error / s")
right.legend(fontsize=7, frameon=False)
right.set_title("the ball to 3 s, h = 1e-3: error O(eps)", fontsize=9)
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "relaxation_strips.png", dpi=110)
plt.close(fig)
print(", ".join(f"eps {eps:g}: {error:.2g} s" for eps, error in errors.items()))
