"""`python -m benchmarks`: the table is produced and finite (no timing is asserted)."""

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.__main__ import main
from benchmarks.suite import (
    BenchOptions,
    ivp_with_restarts,
    paired_times,
    reference_cs_rows,
)
from fmibridge.validation import EXAMPLE_1, exact_solution, rho_hat


def test_bench_quick_writes_a_finite_table(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("FMIBRIDGE_REFERENCE_FMUS", raising=False)
    frame = quick_sections(tmp_path, "fmu", "overhead")
    assert len(frame) == 6
    skipped = frame["case"] == "plain CS, Reference FMUs"  # without the folder
    assert skipped.sum() == 1
    timed = frame[~skipped]
    numbers = timed[["fmibridge_s", "peer_s", "time_ratio"]].to_numpy(dtype=float)
    assert np.all(np.isfinite(numbers)) and np.all(numbers > 0)
    assert "BouncingBallEvents" in capsys.readouterr().out
    # a plain CS run makes fmpy's doSteps: the same rows (its "error" column)
    plain = frame.set_index("case").loc["plain CS FMU (MassSpringStop)"]
    assert plain["fmibridge_error"] == 0.0


@pytest.mark.skipif(
    not Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")).is_dir()
    or not os.environ.get("FMIBRIDGE_REFERENCE_FMUS"),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
def test_bench_reference_cs_rows_equal_fmpys_rows_and_summarise_them():
    """A plain Co-Simulation call makes fmpy's doSteps: every Reference FMU's
    columns equal fmpy's (the row's error 0), and the last row is the
    geometric mean of the others' times."""
    rows = reference_cs_rows(BenchOptions.quick_options())
    *each, summary = rows
    assert len(each) == 13 and all(row.fmibridge_error == 0.0 for row in each)
    mean = math.exp(np.mean([math.log(row.time_ratio) for row in each]))
    assert summary.time_ratio == pytest.approx(mean, rel=1e-12)


def test_solve_ivp_peer_restarts_at_each_impact_of_example_1():
    run = ivp_with_restarts(EXAMPLE_1, "DOP853", 1e-10)
    assert run.is_complete and run.n_restarts == 49  # Table I: 49 impacts
    error = rho_hat(run.t, run.x, exact_solution(EXAMPLE_1), t_max=EXAMPLE_1.t_max)
    assert math.isfinite(error) and error < 1e-6


def test_paired_times_alternate_the_two_runs():
    calls = []
    options = BenchOptions(repeats=3, min_timed_s=0.0)
    ours, theirs = paired_times(
        lambda: calls.append("ours"), lambda: calls.append("theirs"), options
    )
    assert calls == ["ours", "theirs"] * 3
    assert ours >= 0.0 and theirs >= 0.0


def test_a_run_stopped_by_a_bound_scores_inf_not_its_partial_error():
    from benchmarks.suite import rho_hat_scorer, run_to_t_max
    from fmibridge import Halving

    stopped = run_to_t_max(Halving(h=0.1, max_events=3), EXAMPLE_1)
    assert stopped is None
    assert rho_hat_scorer(EXAMPLE_1, exact_solution(EXAMPLE_1))(stopped) == math.inf


def quick_sections(tmp_path, *sections: str) -> pd.DataFrame:
    """Run `python -m benchmarks --quick` on these sections; return its table."""
    out = tmp_path / "bench.csv"
    code = main(["--quick", "--repeats", "1", "--only", *sections,
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    return pd.read_csv(out)


def assert_timed_rows(frame: pd.DataFrame, cases: list[str]) -> None:
    """The table holds these cases, each with finite positive times and ratio."""
    assert frame["case"].tolist() == cases
    times = frame[["fmibridge_s", "peer_s", "time_ratio"]].to_numpy(dtype=float)
    assert np.all(np.isfinite(times)) and np.all(times > 0)


def test_bench_coupled_rows_agree_with_their_peers(tmp_path):
    frame = quick_sections(tmp_path, "coupled")
    assert_timed_rows(
        frame,
        [
            "coupled ME loop (2 FMUs)",
            "CS master, Jacobi (2 FMUs)",
            "CS master + guard, Jacobi (MassSpringStop)",
            "CS master + guard, Jacobi (MassSpringStopSlowSave)",
            "CS master + guard, Jacobi (MassSpringStopSlowSave), approached",
        ],
    )
    # the master and the plain fmpy loop run the same Jacobi scheme
    assert frame.loc[1, "fmibridge_error"] <= 1e-12
    # the guarded rows locate the first impact (1 s in --quick) and say what
    # they saved: a few FMU states around it, not two at each of 100 steps;
    # approached, no step is undone
    for k in (2, 3, 4):
        settings = frame.loc[k, "fmibridge_settings"]
        assert "1 impacts" in settings
        assert int(settings.rsplit("FMU state saves ", 1)[1]) <= 60
        undone = int(settings.split(" undone")[0].rsplit(", ", 1)[1])
        assert (undone == 0) == (k == 4), settings


def test_bench_adapter_rows_compare_compiled_guards_with_python(tmp_path):
    frame = quick_sections(tmp_path, "adapters", "cold")
    first_run = frame.loc[2, "case"]
    assert frame["case"].tolist() == [
        "adapter bouncing_ball.toml",
        "adapter ball_on_sine_surface.toml",
        first_run,
        "cold start",
    ]
    adapters = frame.iloc[:3]
    times = adapters[["fmibridge_s", "peer_s"]].to_numpy(dtype=float)
    assert np.all(np.isfinite(times)) and np.all(times > 0)
    assert np.all(frame.iloc[:2]["fmibridge_error"] == 0.0)  # the same samples
    assert "skipped in --quick" in frame.loc[3, "note"]
    # the first run in a new process, against fmpy's, both with their bytecode
    assert first_run.startswith("first run in a new process: import + simulate_fmu(")
    assert frame.loc[2, "peer"] == "fmpy" and "target <= x1.3" in frame.loc[2, "note"]
    assert "PYTHONDONTWRITEBYTECODE dropped" in frame.loc[2, "note"]


def test_bench_method_rows_time_the_compiled_loops_against_their_peers(tmp_path):
    frame = quick_sections(tmp_path, "methods")
    assert_timed_rows(
        frame,
        ["Unilateral vs Halving rk4, Example 1 10 s", "Relaxation, Example 2 3 s"],
    )
    assert "target <= x2" in frame.loc[0, "note"]
    # Example 1's impacts before 10 s, both methods within 1e-4 s of the exact times
    assert frame.loc[0, "fmibridge_error"] < 1e-4 and frame.loc[0, "peer_error"] < 1e-4
    assert frame.loc[1, "fmibridge_error"] == 0.0  # the same samples, bit for bit
