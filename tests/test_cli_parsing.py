"""The command line's parsing and `info`: misspelled flags, --start-time,
choices in any case, and `info` on adapter files and SSPs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from fmibridge.cli import main
from fmibridge.models import bouncing_ball_impacts

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("flag", "meant"),
    [("--stop_time", "--stop-time"), ("--output_interval", "--output-interval"),
     ("--Start-Time=1", "--start-time"), ("--integrater", "--integrator")],
)  # fmt: skip
def test_a_misspelled_flag_names_the_flag_meant(flag, meant, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", flag, "3", "--no-progress"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert (
        f"fmibridge run: error: unrecognized arguments: {flag} (did you mean {meant}"
        in err
    )


def test_an_unknown_argument_without_a_near_flag_is_named_alone(capsys):
    with pytest.raises(SystemExit):
        main(["info", "--colour", "ball.fmu"])
    assert capsys.readouterr().err.endswith("unrecognized arguments: --colour\n")


def test_start_time_shifts_the_run(tmp_path):
    """The built-in ball from rest at t = 0.5 s lands at 0.5 s + its first
    impact time from t = 0."""
    out = tmp_path / "ball.csv"
    argv = ["run", "--start-time", "0.5", "--stop-time", "1", "--out", str(out)]
    assert main([*argv, "--no-progress", "--locate", "illinois"]) == 0
    assert pd.read_csv(out)["time"].iloc[[0, -1]].tolist() == [0.5, 1.0]
    events = pd.read_csv(tmp_path / "ball.events.csv")
    assert abs(events["time"].iloc[0] - (0.5 + bouncing_ball_impacts(1)[0])) < 1e-9


def test_start_time_is_refused_for_an_adapter_with_the_flag_named(fmu_dir, capsys):
    adapter = ROOT / "adapters" / "bouncing_ball.toml"
    assert main(["run", str(adapter), "--start-time", "1", "--no-progress"]) == 2
    assert "`--start-time`: an adapter starts at" in capsys.readouterr().err


@pytest.mark.parametrize(("given", "meant"), [("ME", "me"), ("CoSimulation", "cs")])
def test_interface_in_any_case_or_fmpys_name(given, meant, fmu_dir, tmp_path):
    fmu = str(fmu_dir / "BouncingBallEvents.fmu")
    frames = []
    for interface in (given, meant):
        out = tmp_path / f"{interface}.csv"
        argv = ["run", fmu, "--interface", interface, "--stop-time", "1"]
        assert main([*argv, "--out", str(out), "--no-progress"]) == 0
        frames.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(*frames, check_exact=True)
    assert len(frames[0]) > 10


def test_method_and_integrator_in_any_case(tmp_path):
    out = tmp_path / "ball.csv"
    argv = ["run", "--method", "Halving", "--integrator", "RK4", "--out", str(out)]
    assert main([*argv, "--stop-time", "1", "--no-progress"]) == 0
    assert pd.read_csv(out)["h"].min() >= -1e-9


def test_info_on_an_adapter_names_its_fmu_edges_and_constraint(fmu_dir, capsys):
    adapter = ROOT / "adapters" / "bouncing_ball.toml"
    assert main(["info", str(adapter)]) == 0
    out = capsys.readouterr().out
    fmu = (fmu_dir / "BouncingBall.fmu").resolve()
    assert f"{fmu}: BouncingBall, FMI 2.0, ModelExchange + CoSimulation; " in out
    assert "states h, v; 0 event indicator(s)" in out
    assert "name = floor, guard = h, direction = falling, reset = {v = -e * v}" in out
    assert "constraint: gap = h, velocity = v, restitution = e" in out


def test_info_on_a_coupled_adapter_lists_components_and_connections(fmu_dir, capsys):
    assert main(["info", str(ROOT / "adapters" / "controlled_stop.toml")]) == 0
    out = capsys.readouterr().out
    assert "components (2):" in out and "connections (3):" in out
    assert "    controller.F -> plant.F\n" in out
    assert "PositionController_fmi3.fmu: PositionController, FMI 3.0" in out


def test_info_on_an_adapter_of_an_ssp_shows_the_ssp(fmu_dir, capsys):
    assert main(["info", str(ROOT / "adapters" / "controlled_stop_ssp.toml")]) == 0
    out = capsys.readouterr().out
    assert f"{(fmu_dir / 'ControlledStop.ssp').resolve()}: SSP 2.0" in out
    assert "plant: resources/MassSpringStop.fmu" in out
    assert "    plant.x -> controller.x_meas\n" in out


def test_info_on_an_adapter_whose_fmu_is_missing_says_so(tmp_path, capsys):
    shutil.copy(ROOT / "adapters" / "bouncing_ball.toml", tmp_path)
    assert main(["info", str(tmp_path / "bouncing_ball.toml")]) == 0
    missing = (tmp_path / "../fmus/build/BouncingBall.fmu").resolve()
    assert f"{missing}: missing;" in capsys.readouterr().out


def test_info_on_an_ssp_lists_components_and_connections(fmu_dir, capsys):
    assert main(["info", str(fmu_dir / "ControlledStop.ssp")]) == 0
    out = capsys.readouterr().out
    assert "system ControlledStop: 2 component(s)" in out
    assert "connections: 3" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--start-values", "h=1", "h=2"],
        ["--start-values", "h=1", "--start-values", "h=2"],
    ],
)
def test_a_name_given_twice_is_refused_not_the_last_kept(argv, capsys):
    """`--start-values h=1 h=2` ran from h = 2 (the last, silently): a typo of
    another name, most likely. Each name is given once."""
    with pytest.raises(SystemExit) as exit_:
        main(["run", *argv, "--no-progress"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --start-values: 'h' is given twice (=2 after =1.0)" in err
