"""The tutorial's last figure, from the tutorial's own adapter: the ```toml
blocks of docs/tutorial.md are written to a scratch folder beside a copy of
BouncingBall.fmu, and run as its step 6 runs them.

    python docs/gallery/tutorial_ball.py [FOLDER]  # FOLDER/tutorial_ball.png
"""

import re
import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fmibridge  # noqa: E402
from fmibridge.examples import load_builder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
fmu = load_builder(ROOT / "fmus").build_fmus(models=["BouncingBall"])["BouncingBall"]
page = (ROOT / "docs" / "tutorial.md").read_text()
with tempfile.TemporaryDirectory() as scratch:
    folder = Path(scratch) / "tutorial"
    folder.mkdir()
    shutil.copy(fmu, folder / "BouncingBall.fmu")
    for block in re.findall(
        r"```toml\n(# (?:append to )?tutorial/ball\.toml\n.*?)```", page, re.S
    ):
        with open(folder / "ball.toml", "a") as file:
            file.write(block)
    result = fmibridge.simulate(folder / "ball.toml", stop_time=4, zeno="complete")
axes = result.plot(["h", "v"])
axes[0].set_title(
    f"tutorial/ball.toml: {result.status.name}, {len(result.event_times)} events",
    fontsize=9,
)
out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
out.mkdir(parents=True, exist_ok=True)
plt.savefig(out / "tutorial_ball.png", dpi=110)
plt.close("all")
print(result.status.value, len(result.event_times))
