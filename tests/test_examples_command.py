"""`fmibridge examples DIR`: the README's adapter files and FMUs, outside the clone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fmibridge
from fmibridge.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_examples_refuses_a_folder_with_files(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["examples", str(tmp_path)]) == 2
    assert "is a folder with files in it; pass --force" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.slow  # compiles every FMU of fmus/ (about 30 s on two cores)
def test_examples_folder_runs_the_readme_as_the_clone_does(fmu_dir, tmp_path, capsys):
    folder = tmp_path / "examples"
    assert main(["examples", str(folder)]) == 0
    adapters = sorted(p.name for p in (folder / "adapters").glob("*.toml"))
    assert adapters == sorted(p.name for p in (ROOT / "adapters").glob("*.toml"))
    fmu = "fmus/build/BouncingBallEvents.fmu"
    here = fmibridge.simulate(folder / fmu, stop_time=3)
    clone = fmibridge.simulate(ROOT / fmu, stop_time=3)
    assert np.array_equal(here.event_times, clone.event_times)
    assert len(here.events) == 6
    ball = folder / "adapters" / "bouncing_ball.toml"
    argv = ["run", str(ball), "--stop-time", "10", "--zeno", "complete"]
    assert main([*argv, "--no-progress"]) == 0
    assert "Reached t_end. t = 10 s, 42 events" in capsys.readouterr().out
