"""The README's and the tutorial's commands, run in order as a reader runs them.

Each page is read top to bottom in one scratch folder that sees the repository's
fmus/ and adapters/: a ```sh block (or the README's plain ``` blocks) runs its
`fmibridge ...` commands with this tree's CLI and its `python ...` commands with
this tree's Python (other lines, such as mkdir and cp, run in bash; pip and
pytest lines are CI's), a ```toml block whose first line is
`# PATH` or `# append to PATH` is written to that file, a ```python block runs
in one namespace per page, and a ```text block must appear, line by line, in the
output of the block before it (wall times aside). A command exits 0 unless its
comment says `# exit code N`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmibridge.models import bouncing_ball_impacts, bouncing_ball_zeno_time

ROOT = Path(__file__).resolve().parent.parent
PYTHON = shlex.quote(sys.executable)
CLI = f"{PYTHON} -m fmibridge.cli"


def unclocked(text: str) -> str:
    """`text` without its wall times, which no two runs share."""
    return re.sub(r"wall [0-9.e+-]+ s", "wall - s", text)


def blocks(page: Path) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", page.read_text(), re.S)


def run_shell(block: str, cwd: Path, readme: bool) -> str:
    said = []
    for line in block.splitlines():
        command = line.split(" # ")[0].strip()
        if not command or command.startswith("#"):
            continue
        if readme:  # the quick start's last part; pip and pytest are CI's
            parts = [p.strip() for p in command.split("&&")]
            command = next((p for p in parts if p.startswith("fmibridge ")), "")
            if not command:
                continue
        expected = re.search(r"# exit code (\d+)", line)
        done = subprocess.run(
            re.sub(
                r"^python ", PYTHON + " ", re.sub(r"^fmibridge ", CLI + " ", command)
            ),
            shell=True,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        out = done.stdout + done.stderr
        assert done.returncode == (int(expected[1]) if expected else 0), (
            command,
            out[-3000:],
        )
        said.append(out)
    return "".join(said)


def follow(page: Path, cwd: Path) -> int:
    """Run `page`'s blocks in order in `cwd`; return how many outputs were checked."""
    import matplotlib

    matplotlib.use("Agg")
    scope: dict = {"__name__": page.stem}
    said, checked = "", 0
    for language, block in blocks(page):
        if language in ("sh", ""):
            said = run_shell(block, cwd, readme=page.name == "README.md")
        elif language == "toml":
            header = re.match(r"# (append to )?(\S+)\n", block)
            if header:
                with open(cwd / header[2], "a" if header[1] else "w") as file:
                    file.write(block)
        elif language == "python":
            buffer = io.StringIO()
            cwd_before = Path.cwd()
            os.chdir(cwd)
            try:
                with contextlib.redirect_stdout(buffer):
                    exec(compile(block, str(page), "exec"), scope)  # noqa: S102
            finally:
                os.chdir(cwd_before)
            said = buffer.getvalue()
        elif language == "text":
            for line in map(unclocked, block.splitlines()):
                if line.strip() and line.strip() != "...":
                    assert line.strip() in unclocked(said), (line, said[-3000:])
            checked += 1
    return checked


@pytest.fixture
def clone(fmu_dir, tmp_path):
    for folder in ("fmus", "adapters"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    return tmp_path


def test_the_readme_then_the_tutorial_run_in_order(clone):
    assert follow(ROOT / "README.md", clone) == 4
    # the numbers the README quotes: the quick start's impacts within 1.2e-14 s of
    # the exact times, the adapter's Zeno event at 4.063712768871555 s
    quick = pd.read_csv(clone / "ball.events.csv")["time"].to_numpy()
    assert np.abs(quick - bouncing_ball_impacts(6)).max() < 5e-14
    rest = pd.read_csv(clone / "ball_rest.events.csv")
    assert (rest["edge"] == "floor").sum() == 41
    (zeno,) = rest.loc[rest["edge"] == "zeno", "time"]
    assert abs(zeno - bouncing_ball_zeno_time()) < 1e-12
    assert pd.read_csv(clone / "ball_rest.csv")["lam"].iloc[-1] == pytest.approx(9.81)
    assert follow(ROOT / "docs" / "tutorial.md", clone) == 7
    assert (clone / "tutorial" / "ball.png").stat().st_size > 0
