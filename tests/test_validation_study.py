"""The convergence claims of Burden et al., Sec. V-B, on Table I (rho-hat, eq. 30)."""

import dataclasses
import time

import numpy as np
import pandas as pd
import pytest

from fmibridge.cli import main
from fmibridge.validation.study import GRIDS, Case, fit_slope, run_study

SLOPE_TOL = 0.3


@pytest.mark.parametrize(
    ("integrator", "hs", "eps_of_h", "order"),
    [
        # eps << h**2: the midpoint rule's order shows (eps = 1e-3 h**2)
        ("midpoint", (2e-2, 1e-2, 5e-3), lambda h: 1e-3 * h**2, 2.0),
        # eps << h**4 at every h (RK4's error is ~1e-6 at h = 1e-2)
        ("rk4", (4e-2, 2e-2, 1e-2), lambda h: 1e-11, 4.0),
    ],
)
def test_example_1_converges_with_the_integrators_order(
    integrator, hs, eps_of_h, order
):
    frame = run_study(
        [Case("example_1", "relaxation", integrator, h, eps_of_h(h)) for h in hs]
    )
    assert list(frame["events"]) == [49, 49, 49]
    slope = fit_slope(frame["h"], frame["rho_hat"])
    assert abs(slope - order) <= SLOPE_TOL, (slope, frame["rho_hat"].tolist())


def test_example_1_converges_linearly_in_eps_when_eps_dominates():
    """RK4 at h = 1e-2 (error ~1e-6 << eps): each impact is late by O(eps)."""
    frame = run_study(
        [Case("example_1", "relaxation", "rk4", 1e-2, e) for e in (1e-3, 3e-4, 1e-4)]
    )
    slope = fit_slope(frame["eps"], frame["rho_hat"])
    assert abs(slope - 1.0) <= SLOPE_TOL, (slope, frame["rho_hat"].tolist())


@pytest.mark.slow
def test_example_1_midpoint_linear_in_eps_when_eps_much_larger_than_h_squared():
    frame = run_study(
        [
            Case("example_1", "relaxation", "midpoint", 1e-3, e)
            for e in (1e-3, 3e-4, 1e-4)
        ]
    )
    slope = fit_slope(frame["eps"], frame["rho_hat"])
    assert abs(slope - 1.0) <= SLOPE_TOL, (slope, frame["rho_hat"].tolist())


def test_example_2_headline_of_the_paper():
    """h = 1e-2, eps = 2e-7, midpoint: rho-hat <= 1e-4 through sticking and Zeno."""
    case = Case("example_2", "relaxation", "midpoint", 1e-2, 2e-7)
    (row,) = run_study([case]).to_dict("records")
    assert row["rho_hat"] <= 1e-4, row
    assert row["events"] > 5_000  # chattering through the strips while stuck


def test_ps_needs_h_5e_4_for_the_same_accuracy_on_example_2():
    frame = run_study([Case("example_2", "ps", "central", h) for h in (1e-3, 5e-4)])
    assert frame["rho_hat"].iloc[0] > 1.5e-4 and frame["rho_hat"].iloc[1] <= 1.1e-4


def test_validate_tiny_writes_table_and_plots(tmp_path, capsys):
    assert main(["validate", "--tiny", "--out", str(tmp_path), "--no-progress"]) == 0
    frame = pd.read_csv(tmp_path / "validation.csv")
    assert list(frame.columns) == [
        "example",
        "method",
        "integrator",
        "h",
        "eps",
        "rho_hat",
        "wall_s",
        "events",
    ]
    assert set(frame["method"]) == {"relaxation", "ps"}
    for name in ("example_1.png", "example_2.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    assert "rho_hat" in capsys.readouterr().out


@pytest.mark.slow
def test_validate_quick_finishes_within_a_minute(tmp_path):
    wall = time.perf_counter()
    assert main(["validate", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    assert time.perf_counter() - wall < 60.0
    assert len(pd.read_csv(tmp_path / "validation.csv")) == 30


def test_validate_names_a_failed_case_and_exits_1(tmp_path, capsys, monkeypatch):
    """A case that raises keeps its row (rho_hat NaN, its message in `error`), the
    other cases run as in a study without it, and the command names it and exits
    1: a study with a failed case is not a result."""
    tiny = GRIDS["tiny"]
    grid = dataclasses.replace(tiny, integrators=("midpoint", "no-such-scheme"))
    monkeypatch.setitem(GRIDS, "tiny", grid)
    assert main(["validate", "--tiny", "--out", str(tmp_path), "--no-progress"]) == 1
    frame = pd.read_csv(tmp_path / "validation.csv")
    failed = frame[frame["error"].notna()]
    assert set(failed["integrator"]) == {"no-such-scheme"}
    assert failed["rho_hat"].isna().all()
    alone = run_study(tiny.cases())
    ok = frame[frame["error"].isna()]
    np.testing.assert_allclose(ok["rho_hat"], alone["rho_hat"], rtol=1e-12)
    err = capsys.readouterr().err
    assert err.count("failed:") == len(failed) and "no-such-scheme" in err
