"""The `fmibridge` command line."""

import subprocess
import sys

import pandas as pd

from fmibridge.cli import main


def test_run_writes_ball_csv_that_never_goes_below_floor(tmp_path, capsys):
    out = tmp_path / "ball.csv"
    assert main(["run", "--t-end", "3", "--out", str(out), "--no-progress"]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["time", "h", "v", "mode"]
    assert frame["h"].min() >= -1e-9
    assert frame["time"].iloc[-1] == 3.0
    assert "6 events" in capsys.readouterr().out


def test_bad_option_is_one_line_and_exit_2(capsys):
    assert main(["run", "--h", "-1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "fmibridge: error: `h` must be a finite number > 0, got -1.0."


def test_console_script_help():
    done = subprocess.run(
        [sys.executable, "-m", "fmibridge.cli", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "run" in done.stdout
