"""Convergence: rho-hat (eq. 30, the largest position error against the exact
solution) of Halving on Table I's Example 1 over [0, 10 pi], as the step h is
halved. The fitted slopes are the integrators' orders: 2 for the midpoint rule,
4 for RK4 (impacts are located to 1e-10 s, so they add nothing).

    python docs/gallery/convergence.py [FOLDER]  # FOLDER/convergence.png
"""

import math
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fmibridge import Halving  # noqa: E402
from fmibridge.core.errors import FmibridgeWarning  # noqa: E402
from fmibridge.models import forced_oscillator  # noqa: E402
from fmibridge.validation import EXAMPLE_1, exact_solution, rho_hat  # noqa: E402
from fmibridge.validation.study import fit_slope  # noqa: E402

T_END = 10 * math.pi
STEPS = (0.04, 0.02, 0.01, 0.005)
exact = exact_solution(EXAMPLE_1, T_END)
fig, ax = plt.subplots(figsize=(5, 3.6))
slopes = {}
for integrator in ("midpoint", "rk4"):
    errors = []
    for h in STEPS:
        method = Halving(h=h, integrator=integrator, locate="illinois")
        with warnings.catch_warnings():
            # midpoint at h = 0.04 warns that its step error is above 1e-4: shown
            warnings.simplefilter("ignore", FmibridgeWarning)
            result = method.run(forced_oscillator(EXAMPLE_1), T_END)
        errors.append(rho_hat(result.t, result["x"], exact))
    slopes[integrator] = fit_slope(STEPS, errors)
    ax.loglog(
        STEPS, errors, "o-", label=f"{integrator}: slope {slopes[integrator]:.2f}"
    )
ax.set_xlabel("h")
ax.set_ylabel("rho-hat")
ax.legend(frameon=False)
ax.set_title("Table I, Example 1 to 10 pi, Halving", fontsize=9)
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
fig.savefig(folder / "convergence.png", dpi=110)
plt.close(fig)
print(", ".join(f"{name} slope {slope:.2f}" for name, slope in slopes.items()))
