"""Pronk one stride (Burden et al., Sec. V-C) with the relaxation method.

theta' = 0 passes through the intersection of the two touchdown guards (both
feet land at once: a simultaneous transition); theta' = -0.4 lands front foot
first. Prints the event tables and writes the contact sequence as a PNG.

    python examples/pronk.py [FOLDER]

pronk_contacts.png goes into FOLDER (made if missing; default: the working directory).

The runs use the paper's strip width, eps = 1e-2 s: relaxation's error is
O(eps) by design (a state waits on its strip for up to eps), which is what buys
the simultaneous transition; fmibridge measures that displacement and says how
small eps must be for 1e-4 of each state's scale. The example prints that
measurement as a note after each run, an expected result here, not a fault.
"""

import sys
import warnings
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
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always")
        result = Relaxation(h=H, eps=EPS, integrator="midpoint").run(
            pronk(thetad0), T_END
        )
    print(f"theta'0 = {thetad0}: {result.status.value}")
    for note in notes:  # the O(eps) displacement of the paper's eps (docstring)
        print(f"  note (expected at eps = {EPS}): {note.message}")
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
