"""`fmibridge run` (alias `simulate`): every flag has help and a test here.

Runs use the built-in ball (exact impact times: `bouncing_ball_impacts`) and the
FMUs in fmus/ (their DefaultExperiment: BouncingBallEvents stops at 3 s).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import fmibridge
from fmibridge.cli import _parser, main
from fmibridge.models import bouncing_ball_impacts


def parsers(parser: argparse.ArgumentParser):
    """The parser and every subcommand's parser, once each."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from parsers(sub)


def test_every_flag_of_every_command_has_help():
    missing = [
        (p.prog, a.option_strings or a.dest)
        for p in parsers(_parser())
        for a in p._actions
        if not isinstance(a, argparse._SubParsersAction) and not a.help
    ]
    assert missing == []


def test_no_flag_collides_with_dash_h():
    """`--h` next to `-h` made `run -h 1e-2` print help; the step is --step-size
    (FMPy's name), and --h is a hidden alias that says so."""
    shown = [
        o
        for p in parsers(_parser())
        for a in p._actions
        if a.help != argparse.SUPPRESS
        for o in a.option_strings
    ]
    assert "--h" not in shown and "--step-size" in shown


def run(tmp_path, *flags: str, model: str | None = None) -> tuple[int, pd.DataFrame]:
    out = tmp_path / "run.csv"
    argv = ["run", *([model] if model else []), "--no-progress", "--force"]
    argv += ["--out", str(out)]
    code = main([*argv, *flags])
    return code, pd.read_csv(out) if out.exists() else None


def events(tmp_path) -> pd.DataFrame:
    return pd.read_csv(tmp_path / "run.events.csv")


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"fmibridge {fmibridge.__version__}"


def test_simulate_is_run(tmp_path):
    out = tmp_path / "ball.csv"
    assert main(["simulate", "--no-progress", "--out", str(out)]) == 0
    assert len(pd.read_csv(tmp_path / "ball.events.csv")) == 6


def test_start_values_and_parameters_of_the_ball(tmp_path):
    flags = ["--start-values", "h=2", "--parameters", "e=0.5", "g=9.81"]
    code, _ = run(tmp_path, *flags, "--stop-time", "1.5")  # Zeno time 1.92 s
    assert code == 0
    exact = bouncing_ball_impacts(2, h0=2.0, e=0.5)  # 0.639, 1.277 s
    assert np.abs(events(tmp_path)["time"].to_numpy() - exact).max() < 1e-9


def test_unknown_names_and_malformed_values_are_refused(tmp_path, capsys):
    assert run(tmp_path, "--parameters", "mass=2")[0] == 2
    assert (
        "has no parameter(s) ['mass']; its parameters are ['h0', 'v0', 'g', 'e']"
        in (capsys.readouterr().err)
    )
    assert run(tmp_path, "--start-values", "x=1")[0] == 2
    assert "unknown start value(s) ['x']" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        main(["run", "--start-values", "h"])
    assert done.value.code == 2
    assert "--start-values takes NAME=VALUE" in capsys.readouterr().err


def test_fmu_start_values_parameters_and_the_default_stop_time(fmu_dir, tmp_path):
    model = str(fmu_dir / "BouncingBallEvents.fmu")
    code, frame = run(tmp_path, "--start-values", "h=2", model=model)
    assert code == 0 and frame["time"].iloc[-1] == 3.0  # its DefaultExperiment
    first = events(tmp_path)["time"].iloc[0]
    assert abs(first - math.sqrt(2 * 2 / 9.81)) < 1e-6
    code, _ = run(tmp_path, "--parameters", "g=4", model=model)
    assert abs(events(tmp_path)["time"].iloc[0] - math.sqrt(2 / 4)) < 1e-6


def test_stop_time_and_step_size(tmp_path):
    code, frame = run(tmp_path, "--stop-time", "0.3", "--step-size", "0.01")
    assert code == 0 and len(frame) == 31 and frame["time"].iloc[-1] == 0.3


def test_the_old_step_flag_still_works_and_says_so(tmp_path, capsys):
    code, frame = run(tmp_path, "--stop-time", "0.3", "--h", "0.01")
    assert code == 0 and len(frame) == 31
    assert "--h is deprecated; use --step-size." in capsys.readouterr().err


def test_output_interval_keeps_the_grid_and_the_event_rows(tmp_path):
    code, frame = run(tmp_path, "--stop-time", "1", "--output-interval", "0.25")
    impact = bouncing_ball_impacts(1)[0]
    assert code == 0
    assert frame["time"].to_numpy() == pytest.approx(
        [0.0, 0.25, impact, impact, 0.5, 0.75, 1.0], abs=1e-12
    )


def test_output_chooses_the_recorded_variables(fmu_dir, tmp_path, capsys):
    model = str(fmu_dir / "BouncingBallEvents.fmu")
    code, frame = run(tmp_path, "--output", "h", model=model)
    assert code == 0 and list(frame.columns) == ["time", "h", "v", "mode"]
    assert run(tmp_path, "--output", "h")[0] == 2  # the built-in ball
    assert "`--output`: a HybridSystem records its states" in capsys.readouterr().err


def test_tol_sets_the_unilateral_tolerance(tmp_path, capsys):
    code, _ = run(tmp_path, "--method", "unilateral", "--tol", "1e-10")
    assert code == 0
    errors = events(tmp_path)["time"].to_numpy() - bouncing_ball_impacts(6)
    assert np.abs(errors).max() < 1e-8  # tol 1e-6 gives 2.7e-5 (docs/guide)
    assert run(tmp_path, "--tol", "1e-10")[0] == 2
    assert "Method 'halving' takes no option(s) ['tol']" in capsys.readouterr().err


def test_zeno_eps_needs_zeno_complete(tmp_path, capsys):
    code, frame = run(
        tmp_path, "--zeno", "complete", "--zeno-eps", "0.1", "--stop-time", "5"
    )
    assert (
        code == 0
        and frame["h"].iloc[-1] == 0.0
        and frame["mode"].iloc[-1] == ("constrained")
    )
    assert len(events(tmp_path)) < 30  # eps = 1e-3 runs 42 impacts before the cut
    assert run(tmp_path, "--zeno-eps", "0.1")[0] == 2
    err = capsys.readouterr().err
    assert "`--zeno-eps`: only a run with `--zeno` 'complete' truncates" in err


def test_flags_the_method_would_ignore_are_refused(fmu_dir, tmp_path, capsys):
    assert run(tmp_path, "--method", "unilateral", "--integrator", "rk4")[0] == 2
    err = capsys.readouterr().err
    assert "`--integrator`: `--method` 'unilateral' ignores it" in err
    model = str(fmu_dir / "BouncingBallEvents.fmu")
    assert (
        run(tmp_path, "--interface", "cs", "--integrator", "rk4", model=model)[0] == 2
    )
    assert "a Co-Simulation FMU integrates itself" in capsys.readouterr().err
    assert not (tmp_path / "run.csv").exists()


def test_method_eps_integrator_and_interface(fmu_dir, tmp_path):
    code, _ = run(
        tmp_path, "--method", "relaxation", "--eps", "1e-7", "--integrator", "rk4"
    )
    assert code == 0
    errors = events(tmp_path)["time"].to_numpy() - bouncing_ball_impacts(6)
    assert np.abs(errors).max() < 1e-5
    model = str(fmu_dir / "BouncingBallEvents.fmu")
    code, frame = run(tmp_path, "--interface", "cs", model=model)
    assert code == 0 and frame["time"].iloc[-1] == 3.0


def test_the_output_path_is_checked_before_the_run(tmp_path, capsys):
    out = tmp_path / "missing" / "ball.csv"
    assert main(["run", "--step-size", "1e-6", "--out", str(out)]) == 2
    assert "missing" in capsys.readouterr().err


def test_no_progress_bar_in_a_log(tmp_path):
    """stderr that is not a terminal gets no bar frames (a run of about 2 s)."""
    done = subprocess.run(
        [sys.executable, "-m", "fmibridge.cli", "run", "--step-size", "2e-5"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stderr == ""
