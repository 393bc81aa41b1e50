"""Pronk one stride (Burden et al., Sec. V-C) with the relaxation method.

theta' = 0 passes through the intersection of the two touchdown guards (both
feet land at once: a simultaneous transition); theta' = -0.4 lands front foot
first. Prints the event tables and writes the contact sequence as a PNG.

    python examples/pronk.py [FOLDER]

pronk_contacts.png goes into FOLDER (made if missing; default: the working directory).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from fmibridge import Relaxation
from fmibridge.models.pronk import LEGS, contact_intervals, pronk

H, EPS, T_END = 1e-3, 1e-2, 0.8  # the paper's h and eps; one stride
RUNS = (0.0, -0.4)  # initial pitch rates of Sec. V-C

fig, axes = plt.subplots(
    2, 2, figsize=(11, 5), sharex=True, gridspec_kw={"height_ratios": [1, 2]}
)
for column, thetad0 in enumerate(RUNS):
    result = Relaxation(h=H, eps=EPS, integrator="midpoint").run(pronk(thetad0), T_END)
    print(f"theta'0 = {thetad0}: {result.status.value}")
    print(
        result.events_frame()[
            ["time", "edge", "source", "target", "simultaneous"]
        ].to_string(index=False)
    )
    bars, states = axes[0, column], axes[1, column]
    for row, spans in enumerate(contact_intervals(result).values()):
        bars.broken_barh(
            [(t0, t1 - t0) for t0, t1 in spans], (row - 0.4, 0.8), color=f"C{row}"
        )
    bars.set(
        yticks=range(len(LEGS)),
        yticklabels=[f"{leg} stance" for leg in LEGS],
        title=f"contact sequence, theta'(0) = {thetad0}",
    )
    states.plot(result.t, result["z"], label="z / m")
    states.plot(result.t, result["theta"], label="theta / rad")
    for event in result.events:
        states.axvline(event.t, color="0.8", lw=0.8, zorder=0)
    states.set(xlabel="time / s")
    states.legend()
fig.tight_layout()
folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
folder.mkdir(parents=True, exist_ok=True)
out = folder / "pronk_contacts.png"
fig.savefig(out, dpi=120)
print(f"wrote {out.resolve()}")
