"""The examples that write files write them where the user says: a folder given
as their argument, else the working directory; never beside the script."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_ball_example_writes_into_the_working_directory_or_a_named_folder(
    tmp_path,
):
    said = run_example("bouncing_ball", tmp_path)
    assert f"wrote {tmp_path / 'bouncing_ball.csv'}" in said
    frame = pd.read_csv(tmp_path / "bouncing_ball.csv", index_col="time")
    assert list(frame.columns) == ["h", "v", "mode"] and frame.index[-1] == 3.0
    run_example("bouncing_ball", tmp_path, "runs/ball")
    assert (tmp_path / "runs" / "ball" / "bouncing_ball.csv").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "written"),
    [("zeno_ball", "zeno_ball.csv"), ("pronk", "pronk_contacts.png")],
)
def test_the_other_examples_write_into_a_named_folder(tmp_path, name, written):
    run_example(name, tmp_path, "out")
    assert (tmp_path / "out" / written).stat().st_size > 0


@pytest.mark.parametrize(
    "name",
    [
        "bouncing_ball",
        "newtons_cradle",
        "zeno_ball",
        pytest.param("coupled_controller", marks=pytest.mark.slow),
        pytest.param("pronk", marks=pytest.mark.slow),
        pytest.param("stop_oscillator_compiled", marks=pytest.mark.slow),
    ],
)
def test_each_example_runs_quiet(tmp_path, name):
    """A default run that is right is quiet: no FmibridgeWarning (pronk prints
    its paper's eps = 1e-2 displacement as an explained note instead)."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Warning" not in done.stderr, done.stderr[-2000:]
