"""Result: DataFrame, event table, CSV round trip, provenance."""

import pandas as pd
import pytest

from fmibridge import Halving
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
