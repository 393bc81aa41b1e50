"""Result: DataFrame, event table, CSV round trip, provenance, repr."""

import dataclasses

import pandas as pd
import pytest

from fmibridge import FmibridgeError, FmibridgeWarning, Halving
from fmibridge.models import bouncing_ball


@pytest.fixture(scope="module")
def result():
    return Halving(h=1e-2).run(bouncing_ball(), t_end=2.0)


def test_frame_has_time_index_states_and_mode(result):
    frame = result.to_pandas()
    assert frame.index.name == "time"
    assert list(frame.columns) == ["h", "v", "mode"]
    assert len(frame) == len(result.t)
    assert frame.attrs["method"] == "halving"


def test_csv_round_trip_is_identical(result, tmp_path):
    path = result.to_csv(tmp_path / "ball.csv")
    back = pd.read_csv(path, index_col="time")
    pd.testing.assert_frame_equal(back, result.to_pandas(), check_exact=True)


def test_events_frame_lists_each_transition(result):
    events = result.events_frame()
    assert len(events) == result.stats["n_events"] == 3
    assert list(events.columns[:4]) == ["time", "edge", "source", "target"]
    assert (events["v_after"] == -0.8 * events["v_before"]).all()


def test_provenance_records_method_parameters_and_versions(result):
    prov = result.provenance
    assert (
        "'h': 0.01" in prov["parameters"]
        and "'integrator': 'rk4'" in prov["parameters"]
    )
    assert "numpy" in prov["versions"] and "fmpy" in prov["versions"]
    assert float(prov["wall_time_s"]) > 0
    assert result.stats["n_steps"] > 0 and result.stats["n_rejected"] > 0


def test_repr_is_one_line_with_status_span_states_samples_events_and_wall(result):
    text = repr(result)
    wall = float(result.provenance["wall_time_s"])
    assert text == (
        f"<Result REACHED_END t = 0 .. 2 s, states h, v, {len(result.t)} samples, "
        f"3 events, wall {wall:.3g} s>"
    )
    assert str(result) == text and "\n" not in text


def test_repr_of_a_stopped_run_names_its_end_and_counts_many_states():
    with pytest.warns(FmibridgeWarning, match="Run stopped at t = 1.17"):
        stopped = Halving(h=1e-2, max_events=2).run(bouncing_ball(), 2.0)
    text = repr(stopped)
    assert text.startswith("<Result MAX_EVENTS t = 0 .. 1.17") and " s of 2, " in text
    many = dataclasses.replace(stopped, state_names=tuple(f"x{i}" for i in range(40)))
    assert "states x0, x1, x2, x3, x4, x5, ... (40 in all), " in repr(many)


def test_raise_for_status_returns_the_result_or_raises(result):
    assert result.raise_for_status() is result
    with pytest.warns(FmibridgeWarning, match="Run stopped at t = 1.17"):
        stopped = Halving(h=1e-2, max_events=2).run(bouncing_ball(), 2.0)
    with pytest.raises(FmibridgeError, match="Run stopped at t = 1.17"):
        stopped.raise_for_status()
