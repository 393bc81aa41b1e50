"""The forced oscillator with a stop (Burden et al., Table I, Example 1: 49
impacts on [0, 40 pi]) run by Halving with RK4, against its exact solution
(eq. 28); rho-hat (eq. 30) is the largest position error over the samples.

    python docs/gallery/oscillator_exact.py [FOLDER]  # FOLDER/oscillator_exact.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fmibridge import Halving  # noqa: E402
from fmibridge.models import forced_oscillator  # noqa: E402
from fmibridge.validation import EXAMPLE_1, exact_solution, rho_hat  # noqa: E402

exact = exact_solution(EXAMPLE_1)
result = Halving(h=1e-2, integrator="rk4", locate="illinois").run(
    forced_oscillator(EXAMPLE_1), EXAMPLE_1.t_max
)
x_exact, _ = exact.state(result.t)
error = rho_hat(result.t, result["x"], exact)

fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 4))
top.plot(result.t, result["x"], lw=0.8, label="Halving, RK4, h = 0.01")
top.axhline(EXAMPLE_1.x_max, color="C3", lw=0.8, label="the stop, x = 14")
top.set_ylabel("x")
top.set_ylim(-26, 16)
top.legend(loc="lower right", ncol=2, fontsize=7, frameon=False)
top.set_title(
    f"Table I, Example 1: {len(result.event_times)} impacts "
    f"(exact: {exact.n_impacts}), rho-hat = {error:.1e}",
    fontsize=9,
)
bottom.semilogy(result.t, np.maximum(np.abs(result["x"] - x_exact), 1e-16), lw=0.6)
bottom.set_ylabel("|x - x exact|")
bottom.set_xlabel("t")
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "oscillator_exact.png", dpi=110)
plt.close(fig)
print(
    f"{len(result.event_times)} impacts (exact {exact.n_impacts}), rho-hat {error:.2g}"
)
