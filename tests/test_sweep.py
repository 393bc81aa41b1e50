"""Sweeps on Dask: exact bouncing-ball impacts and Zeno times over restitution,
failed runs recorded, a dask.distributed cluster agreeing with the default
local run, Ctrl-C keeping finished runs, the CLI on the example spec."""

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.sweep_speedup import sweep_speedup
from fmibridge.cli import main
from fmibridge.core.errors import FmibridgeError
from fmibridge.models import bouncing_ball_impacts, bouncing_ball_zeno_time
from fmibridge.sweep import (
    Run,
    Sweep,
    SweepInterrupted,
    load_sweep,
    map_runs,
    run_sweep,
)
from fmibridge.sweep.batch import ERROR
from fmibridge.sweep.execution import LOOPBACK_HTTP

REPO = Path(__file__).resolve().parents[1]
# max_events: more impacts than any run makes before its Zeno stop (217 at e = 0.9,
# where the intervals 0.9^k 2 v1/g reach Halving's t_tol = 1e-10 s)
N_EVENTS = 300
H0, G = 1.0, 9.81
# s: halving locates impacts to t_tol = 1e-10 per impact, and the errors add up
# (measured: 9.4e-11 at most over these 20 runs)
EVENT_TOL = 1e-8
ZENO_TOL = 1e-6  # s: Aitken extrapolation of impact times with EVENT_TOL errors


def restitution_sweep(values) -> Sweep:
    """The native ball dropped from H0, run until it stops at its Zeno point."""
    base = Run(
        "bouncing_ball",
        t_end=10.0,
        parameters={"h0": H0, "g": G},
        method={"name": "halving", "h": 1e-3, "max_events": N_EVENTS},
    )
    return Sweep(base, grid={"parameters.e": list(values)}, metrics=["zeno_time"])


def test_restitution_sweep_matches_exact_impacts_and_zeno_time():
    """20 runs: first impact, last impact and Zeno time against the formulas.

    Halving does not pass a Zeno point: each run stops there (Status.ZENO),
    before max_events, once its impacts come closer than the t_tol it places
    them to (issue 28). The Zeno time
    is checked twice: the last logged impact lies within
    the exact remaining time 2 v1 e^N / (g (1 - e)) of it, and the `zeno_time`
    metric (accumulation of the last three impact times) matches it.
    """
    e_values = np.linspace(0.5, 0.9, 20)
    summary = run_sweep(restitution_sweep(e_values), scheduler="serial").summary
    assert len(summary) == 20 and (summary["status"] == "ZENO").all()
    assert (summary["n_events"] < N_EVENTS).all()
    v1 = math.sqrt(2 * G * H0)
    for row in summary.itertuples():
        impacts = bouncing_ball_impacts(row.n_events, H0, G, row.e)
        zeno = bouncing_ball_zeno_time(H0, G, row.e)
        assert row.first_event_time == pytest.approx(impacts[0], abs=EVENT_TOL)
        assert row.last_event_time == pytest.approx(impacts[-1], abs=EVENT_TOL)
        remaining = 2 * v1 / G * row.e**row.n_events / (1 - row.e)
        assert abs(row.last_event_time - zeno) <= remaining + EVENT_TOL
        assert remaining < 1e-8 * zeno  # stopped at the accumulation point
        assert row.zeno_time == pytest.approx(zeno, abs=ZENO_TOL)


def test_failing_runs_are_recorded_and_the_others_complete():
    sweep = Sweep(
        Run("bouncing_ball", t_end=1.0),
        runs=[
            {"parameters.e": 0.8},
            {"parameters.e": 1.5},
            {"parameters.g": -1.0},
            {"parameters.e": 0.5},
        ],
    )
    summary = run_sweep(sweep, scheduler="serial").summary
    assert list(summary["status"]) == ["REACHED_END", ERROR, ERROR, "REACHED_END"]
    assert "`e` must be in [0, 1], got 1.5" in summary.loc[1, "error"]
    assert "`g` must be > 0, got -1.0" in summary.loc[2, "error"]
    assert summary.loc[[0, 3], "error"].eq("").all()
    assert summary.loc[0, "n_events"] == 1 and pd.isna(summary.loc[1, "n_events"])


@pytest.fixture(scope="module")
def cluster():
    """A two-process dask.distributed cluster on loopback only."""
    from dask.distributed import LocalCluster

    with LocalCluster(
        host="127.0.0.1",
        processes=True,
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=None,
        scheduler_kwargs=LOOPBACK_HTTP,
    ) as cluster:
        yield cluster


def test_cluster_runs_fmus_like_the_default_local_run(cluster, fmu_dir):
    """FMU runs load their FMU in the worker; a cluster gives the same summaries."""
    base = Run(
        str(fmu_dir / "BouncingBallEvents.fmu"),
        t_end=2.0,
        interface="me",
        method={"h": 1e-3},
    )
    sweep = Sweep(base, grid={"parameters.e": [0.5, 0.7, 0.9, math.nan]})
    on_cluster = run_sweep(sweep, scheduler=cluster.scheduler_address).summary
    local = run_sweep(sweep).summary
    columns = [c for c in local.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(on_cluster[columns], local[columns])
    # e = 0.5 accumulates at 1.36 s, before t_end: the run stops there
    assert list(local["status"]) == ["ZENO"] + ["REACHED_END"] * 2 + [ERROR]
    assert "must be finite" in local.loc[3, "error"]
    impacts = bouncing_ball_impacts(1, H0, G)
    np.testing.assert_allclose(local["first_event_time"][:3], impacts[0], atol=1e-8)


def test_map_runs_keeps_order_and_errors(cluster):
    calls = [{"base": 4.0, "exp": 0.5}, {"base": 0.0, "exp": -1}, {"base": 3, "exp": 2}]
    outcomes = map_runs(pow, calls, scheduler=cluster.scheduler_address)
    assert [o.value for o in outcomes] == [2.0, None, 9]
    assert outcomes[1].error.startswith("ZeroDivisionError:")


def _interrupt_at_three(x: int) -> int:
    if x == 3:
        raise KeyboardInterrupt
    return x


def interrupt_at_high_restitution(result, run) -> float:
    """A metric that presses Ctrl-C when the run has e >= 0.7."""
    if run.parameters["e"] >= 0.7:
        raise KeyboardInterrupt
    return 0.0


def test_ctrl_c_keeps_finished_runs():
    with pytest.raises(SweepInterrupted) as caught:
        map_runs(_interrupt_at_three, [{"x": i} for i in range(6)], scheduler="serial")
    assert [o and o.value for o in caught.value.outcomes] == [0, 1, 2, None, None, None]

    sweep = Sweep(
        Run("bouncing_ball", t_end=0.5),
        grid={"parameters.e": [0.5, 0.6, 0.7, 0.8]},
        metrics=[f"{__name__}:interrupt_at_high_restitution"],
    )
    result = run_sweep(sweep, scheduler="serial")
    assert result.is_interrupted and not result.is_terminated
    assert list(result.summary["e"]) == [0.5, 0.6, 0.7, 0.8]
    assert list(result.summary["status"]) == ["REACHED_END"] * 2 + ["NOT_RUN"] * 2


def test_trajectories_as_one_frame_and_as_files(tmp_path):
    sweep = Sweep(Run("bouncing_ball", t_end=0.5), grid={"parameters.e": [0.5, 0.8]})
    frame = run_sweep(sweep, scheduler="serial", trajectories=True).trajectories
    assert frame.index.names == ["run", "time"]
    assert sorted(frame.index.get_level_values("run").unique()) == [0, 1]
    run_sweep(sweep, scheduler="serial", trajectories=tmp_path / "runs")
    written = pd.read_csv(tmp_path / "runs" / "run_00001.csv", index_col="time")
    pd.testing.assert_frame_equal(
        written[["h", "v"]], frame.loc[1][["h", "v"]], check_exact=False, rtol=1e-12
    )


def test_grid_columns_and_bad_keys():
    grid = {"start.h": [1.0, 2.0], "method.h": [1e-3]}
    sweep = Sweep(Run("bouncing_ball"), grid=grid)
    assert sweep.points()[1] == {"start.h": 2.0, "method.h": 1e-3}
    assert [r.start for r in sweep.expand()] == [{"h": 1.0}, {"h": 2.0}]
    with pytest.raises(FmibridgeError, match="'params.e' must be"):
        Sweep(Run("bouncing_ball"), grid={"params.e": [0.5]})


def test_cli_runs_the_example_spec(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    spec = load_sweep("examples/sweep_restitution.toml")
    assert spec.sweep.base.model == "bouncing_ball"
    out = tmp_path / "summary.csv"
    code = main(
        [
            "sweep",
            "examples/sweep_restitution.toml",
            "--scheduler",
            "serial",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    summary = pd.read_csv(out, index_col="run")
    assert len(summary) == len(spec.sweep.points())
    zeno = [bouncing_ball_zeno_time(H0, G, e) for e in summary["e"]]
    np.testing.assert_allclose(summary["zeno_time"], zeno, rtol=1e-6)
    assert "runs finished (0 failed)" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores")
def test_two_workers_are_faster_than_one():
    """Needs two idle cores: other load on the machine slows the workers."""
    timing = sweep_speedup(n_runs=40, workers=2)
    assert timing["speedup_excluding_startup"] > 1.3


def test_adapter_sweep_varies_fmu_parameters_and_zeno_completion(fmu_dir, tmp_path):
    """An adapter file swept over restitution (an FMU parameter) with completion on."""
    text = (REPO / "adapters" / "bouncing_ball.toml").read_text()
    adapter = tmp_path / "ball.toml"
    adapter.write_text(text.replace('"../fmus/build/', f'"{fmu_dir}/'))
    base = Run(str(adapter), t_end=8.0, method={"zeno": "complete"})
    sweep = Sweep(base, grid={"parameters.e": [0.5, 0.7]}, metrics=["zeno_time"])
    summary = run_sweep(sweep, scheduler="serial").summary
    assert (summary["status"] == "REACHED_END").all()
    for row in summary.itertuples():
        assert row.first_event_time == pytest.approx(math.sqrt(2 * H0 / G), abs=1e-9)
        assert row.zeno_time == pytest.approx(
            bouncing_ball_zeno_time(H0, G, row.e), abs=1e-6
        )


def test_every_problem_of_a_spec_is_in_one_error(tmp_path):
    """Keys, metrics and the grid are checked together (the grid came second)."""
    spec = tmp_path / "bad.toml"
    spec.write_text(
        'model = "bouncing_ball"\ncolour = "red"\nmetrics = ["nope"]\n'
        "[grid]\nparameters.e = []\nspeed = [1, 2]\n"
    )
    with pytest.raises(FmibridgeError) as info:
        load_sweep(spec)
    message = str(info.value)
    assert "unknown key 'colour'" in message and "metric 'nope'" in message
    assert "grid['parameters.e'] must be a non-empty list" in message
    assert "'speed' must be 't_end' or 'group.name'" in message


@pytest.mark.parametrize("key", ["output", "parameters", "start", "method"])
@pytest.mark.parametrize("value", ["3", '"out.csv"', "[1, 2]"])
def test_a_section_that_is_no_table_is_a_problem_of_the_spec(tmp_path, key, value):
    spec = tmp_path / "bad.toml"
    spec.write_text(f'model = "bouncing_ball"\ncolour = 1\n{key} = {value}\n')
    with pytest.raises(FmibridgeError) as info:
        load_sweep(spec, tmp_path)
    message = str(info.value)
    assert f"`{key}` must be a table" in message and "unknown key 'colour'" in message
