"""FMPy scripts run on fmibridge by changing the import (issue 41).

The same script runs with ``import fmpy`` and with ``import fmibridge as fmpy``
on Reference FMUs (skipped where FMIBRIDGE_REFERENCE_FMUS is unset): the same
columns, the same number of rows, the same grid, and rows that agree within
the tolerance of what differs (none in Co-Simulation, where both call the same
FMU at the same communication points; two CVode runs in Model Exchange). The
Result then answers what a script asks of FMPy's structured array: len, rows,
slices, np.asarray, dtype and fmpy.util.write_csv.
"""

from __future__ import annotations

import inspect
import os
import zipfile
from pathlib import Path

import fmpy
import fmpy.util
import numpy as np
import pytest

import fmibridge
from fmibridge import FmibridgeError
from fmibridge.flows.fmu_archive import FmuArchive
from fmibridge.fmpy_api import DIFFERENT_DEFAULTS, fmpy_interval
from fmibridge.models import bouncing_ball

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
needs_reference = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
SCRIPT = """
{import_line}
description = fmpy.read_model_description(FMU)
result = fmpy.simulate_fmu(FMU, **KEYWORDS)
names = result.dtype.names
rows = len(result)
first, last = result[0], result[-1]
head = result[0:3]
array = np.asarray(result)
"""
CS_RTOL = 1e-12  # the same FMU stepped to the same points: round-off only
# two CVode runs at the FMU's DefaultExperiment tolerance (1e-4 for VanDerPol),
# or at the script's 1e-8, relative to each column's largest magnitude
ME_RTOL = {None: 1e-3, 1e-8: 1e-6}
CASES = [  # (FMI version, model, the script's keywords)
    (2, "BouncingBall", {}),  # Co-Simulation: FMPy's choice where both exist
    (3, "BouncingBall", {"stop_time": 2.0}),
    (2, "VanDerPol", {"fmi_type": "ModelExchange"}),
    (3, "Dahlquist", {"fmi_type": "ModelExchange", "relative_tolerance": 1e-8}),
    (2, "Stair", {}),  # time events only, no states
]


def run_script(import_line: str, fmu: Path, keywords: dict) -> dict:
    scope = {"np": np, "FMU": str(fmu), "KEYWORDS": keywords}
    exec(SCRIPT.format(import_line=import_line), scope)  # noqa: S102
    return scope


@needs_reference
@pytest.mark.parametrize(("version", "model", "keywords"), CASES)
def test_an_fmpy_script_gives_fmpys_columns_rows_and_values(version, model, keywords):
    fmu = Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"
    theirs = run_script("import fmpy", fmu, keywords)
    ours = run_script("import fmibridge as fmpy", fmu, keywords)
    assert isinstance(ours["result"], fmibridge.Result)
    assert ours["description"].modelName == theirs["description"].modelName
    assert ours["names"] == theirs["names"] and ours["names"][0] == "time"
    assert ours["rows"] == theirs["rows"] > 10
    is_me = keywords.get("fmi_type") == "ModelExchange"
    rtol = ME_RTOL[keywords.get("relative_tolerance")] if is_me else CS_RTOL
    a, b = theirs["array"], ours["array"]
    assert np.array_equal(a["time"], b["time"])  # FMPy's grid (no events here)
    for name in ours["names"][1:]:
        scale = max(1.0, float(np.abs(a[name]).max()))
        for row in ("first", "last"):
            assert abs(float(ours[row][name]) - float(theirs[row][name])) <= (
                rtol * scale
            ), (name, row)
        assert np.abs(b[name] - a[name]).max() <= rtol * scale, name
    assert np.array_equal(ours["head"]["time"], theirs["head"]["time"])


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_a_call_opens_the_fmu_once_beside_fmpys_reading(version, monkeypatch):
    """One open checks the archive, reads the fmiVersion and unpacks it; the
    others are fmpy.read_model_description's (FMI 3: its build description
    too). FMPy's own call opens it once more, to list its platforms."""
    fmu = Path(FOLDER) / f"fmi{version}" / "BouncingBall.fmu"
    opened: list[object] = []
    open_zip = zipfile.ZipFile.__init__

    def counted(self, file, *args, **kwargs):
        opened.append(file)
        open_zip(self, file, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counted)
    fmpy.read_model_description(fmu)
    n_reading, opened[:] = len(opened), []
    theirs = fmpy.simulate_fmu(fmu)
    n_fmpy, opened[:] = len(opened), []
    ours = fmibridge.simulate_fmu(fmu)
    assert len(opened) == 1 + n_reading < n_fmpy
    assert np.array_equal(np.asarray(ours), theirs)


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_outputs_of_every_type_are_fmpys_in_model_exchange(version):
    """Feedthrough has no states and outputs of each numeric type (read at
    every sample through their C gets): each column is FMPy's, value for value."""
    fmu = Path(FOLDER) / f"fmi{version}" / "Feedthrough.fmu"
    theirs = fmpy.simulate_fmu(fmu, fmi_type="ModelExchange")
    ours = fmibridge.simulate_fmu(fmu, fmi_type="ModelExchange")
    assert set(ours.dtype.names) == set(theirs.dtype.names)
    assert {"f", "i", "b"} <= {theirs.dtype[n].kind for n in theirs.dtype.names}
    for name in theirs.dtype.names:
        assert np.array_equal(ours[name], theirs[name].astype(float)), name


@needs_reference
@pytest.mark.filterwarnings("ignore:halving. Edge 'fmu_event_0'")  # its Zeno point
def test_model_exchange_keeps_fmpys_event_rows_and_grid():
    """The ball in Model Exchange: FMPy's grid (a step of 10^(round(log10 3) - 3)
    doubled to 4 ms) plus two rows per impact, at impacts CVode and fmibridge
    place within 2e-4 s of each other."""
    fmu = Path(FOLDER) / "fmi2" / "BouncingBall.fmu"
    theirs = fmpy.simulate_fmu(fmu, fmi_type="ModelExchange")
    ours = fmibridge.simulate_fmu(fmu, fmi_type="ModelExchange")
    assert len(ours) == len(theirs)
    repeated = np.flatnonzero(np.diff(ours["time"]) == 0)
    assert len(repeated) == len(np.flatnonzero(np.diff(theirs["time"]) == 0)) > 3
    assert np.abs(ours["time"] - theirs["time"]).max() < 2e-4
    grid = np.setdiff1d(ours["time"], ours["time"][repeated])
    assert np.allclose(np.diff(grid)[:10], 0.004)
    np.testing.assert_allclose(ours[-1].tolist(), theirs[-1].tolist(), atol=1e-9)


# Runs of one output interval or one step (issue 41): an output interval, stepSize
# or step_size as long as the run or longer, which FMPy runs (its steps end at the
# stop time) and fmibridge refused. The Reference FMUs step internally at their
# fixedInternalStepSize, so Co-Simulation values agree exactly whatever the
# communication steps. (model, fmi_type, keywords, rtol of the values)
EULER = {"solver": "Euler", "step_size": 3.0}
ONE_STEP = [
    # Co-Simulation: the stepSize (0.1 s) and the output interval beyond the run
    ("Dahlquist", "CoSimulation", {"stop_time": 0.05}, CS_RTOL),
    ("Dahlquist", "CoSimulation", {"stop_time": 0.05, "output_interval": 0.05}, 0),
    ("VanDerPol", "CoSimulation", {"stop_time": 1.0, "output_interval": 1.0}, 0),
    ("VanDerPol", "CoSimulation", {"stop_time": 1.0, "step_size": 3.0}, 0),
    # Model Exchange: CVode, and one forward Euler step of the span
    ("VanDerPol", "ModelExchange", {"stop_time": 1.0, "output_interval": 3.0}, 1e-3),
    ("VanDerPol", "ModelExchange", {"stop_time": 1.0, "step_size": 3.0}, 1e-3),
    ("VanDerPol", "ModelExchange", {"stop_time": 1.0, **EULER}, CS_RTOL),
    # a time event at the stop time: its two rows, as in Co-Simulation
    ("Stair", "ModelExchange", {"stop_time": 1.0, "output_interval": 1.0}, 0),
    ("Stair", "ModelExchange", {"stop_time": 2.0, **EULER}, 0),
]


@needs_reference
@pytest.mark.filterwarnings("ignore:halving. a step's local error")  # Euler's 1 s
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize(("model", "fmi_type", "keywords", "rtol"), ONE_STEP)
def test_a_step_as_long_as_the_run_gives_fmpys_rows(
    version, model, fmi_type, keywords, rtol
):
    fmu = Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"
    theirs = fmpy.simulate_fmu(fmu, fmi_type=fmi_type, **keywords)
    ours = np.asarray(fmibridge.simulate_fmu(fmu, fmi_type=fmi_type, **keywords))
    assert np.array_equal(ours["time"], theirs["time"])  # exactly FMPy's rows
    assert theirs["time"][-1] == keywords["stop_time"]
    for name in theirs.dtype.names[1:]:
        scale = max(1.0, float(np.abs(theirs[name]).max()))
        assert np.abs(ours[name] - theirs[name]).max() <= rtol * scale, name


@needs_reference
def test_roberts_in_co_simulation_steps_as_fmpy_and_its_timeout_ends_it(
    monkeypatch,
):
    """Roberts (FMI 3) in Co-Simulation: its fixedInternalStepSize of 1 ms gives
    FMPy's and fmibridge's communication step (the same rows, the same values
    over 1 s); over its DefaultExperiment's 1e8 s that step is doubled to
    134217.728 s, which the FMU's own fixed steps take 1.3e8 steps for inside
    one fmi3DoStep, in FMPy as here. `timeout` ends that run: the supervised
    child is killed past the limit and the samples so far come back."""
    from fmibridge import simulation

    fmu = Path(FOLDER) / "fmi3" / "Roberts.fmu"
    theirs = fmpy.simulate_fmu(fmu, fmi_type="CoSimulation", stop_time=1.0)
    ours = fmibridge.simulate_fmu(fmu, fmi_type="CoSimulation", stop_time=1.0)
    assert np.array_equal(np.asarray(ours), theirs)
    monkeypatch.setattr(simulation, "TIMEOUT_GRACE_S", 0.5)  # the kill comes sooner
    with pytest.warns(fmibridge.FmibridgeWarning, match="time limit"):
        stopped = fmibridge.simulate_fmu(fmu, fmi_type="CoSimulation", timeout=0.5)
    assert stopped.status.name == "TIME_LIMIT"
    assert stopped["time"][0] == 1e-5 and stopped["time"][-1] < 1e8


@needs_reference
@pytest.mark.parametrize("model", ["BouncingBall", "Stair"])
def test_co_simulation_events_are_fmpys_event_mode_entries(model):
    """FMI 3 in Co-Simulation, where fmibridge always uses Event Mode: each of
    FMPy's Event Mode entries (use_event_mode=True) is an event of the Result
    where it changed the states or outputs, at the time of FMPy's two rows,
    else a silent one (the ball asks again as it leaves the floor)."""
    fmu = Path(FOLDER) / "fmi3" / f"{model}.fmu"
    calls: list[str] = []
    theirs = fmpy.simulate_fmu(
        fmu,
        use_event_mode=True,
        early_return_allowed=True,
        fmi_call_logger=calls.append,
    )
    ours = fmibridge.simulate_fmu(fmu)
    entries = sum(call.startswith("fmi3EnterEventMode(") for call in calls)
    assert len(ours.events) + ours.stats["n_silent_events"] == entries > 5
    repeated = theirs["time"][1:][np.diff(theirs["time"]) == 0]
    assert set(ours.event_times) <= set(repeated)


def test_signature_is_fmpys_but_the_declared_defaults():
    theirs = inspect.signature(fmpy.simulate_fmu).parameters
    ours = inspect.signature(fmibridge.simulate_fmu).parameters
    assert list(ours) == list(theirs)
    assert all(p.kind == theirs[n].kind for n, p in ours.items())
    differ = {n for n in ours if ours[n].default != theirs[n].default}
    assert differ == set(DIFFERENT_DEFAULTS)
    for name, (fmpys, fmibridges, why) in DIFFERENT_DEFAULTS.items():
        assert theirs[name].default == fmpys and ours[name].default == fmibridges
        assert why


def test_read_model_description_and_dump_are_fmpys():
    assert fmibridge.read_model_description is fmpy.read_model_description
    assert fmibridge.dump is fmpy.dump


@needs_reference
def test_co_simulation_grid_is_fmpys_fixed_internal_step_doubled():
    """FMI 3 BouncingBall: fixedInternalStepSize 1 ms over 3 s, doubled to 4 ms
    (at most 1000 intervals), though its DefaultExperiment's stepSize is 10 ms."""
    archive = FmuArchive(Path(FOLDER) / "fmi3" / "BouncingBall.fmu")
    assert archive.experiment.step == 0.01
    assert fmpy_interval(archive, True, 3.0, None) == 0.004


@needs_reference
@pytest.mark.parametrize(
    ("model", "steps"), [("Resource", 1), ("StateSpace", 10), ("Feedthrough", 20)]
)
def test_without_a_step_size_co_simulation_steps_at_the_fixed_internal_step(
    model, steps
):
    """FMI 3 FMUs whose DefaultExperiment has no stepSize: `simulate_fmu` steps
    at their fixedInternalStepSize (Resource's 1 s is its whole run: one doStep,
    as FMPy's), not at FMPy's auto_interval of 500 steps or more; the rows are
    FMPy's."""
    fmu = Path(FOLDER) / "fmi3" / f"{model}.fmu"
    ours = fmibridge.simulate_fmu(fmu, fmi_type="CoSimulation")
    theirs = fmpy.simulate_fmu(fmu, fmi_type="CoSimulation")
    assert ours.stats["n_steps"] == steps == len(theirs) - 1
    assert np.array_equal(ours["time"], theirs["time"])
    for name in theirs.dtype.names[1:]:  # an array output: a column per element
        values = theirs[name].reshape(len(theirs), -1)
        columns = [name] if values.shape[1] == 1 else [
            f"{name}[{k + 1}]" for k in range(values.shape[1])
        ]  # fmt: skip
        for k, column in enumerate(columns):
            assert np.array_equal(ours[column], values[:, k]), column


@needs_reference
def test_numbers_as_text_and_refused_values_as_fmpy_scripts_give_them():
    fmu = Path(FOLDER) / "fmi2" / "Dahlquist.fmu"
    as_text = fmibridge.simulate_fmu(fmu, stop_time="2", output_interval="0.5")
    assert as_text["time"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert np.array_equal(
        np.asarray(as_text),
        np.asarray(fmibridge.simulate_fmu(fmu, stop_time=2, output_interval=0.5)),
    )
    with pytest.raises(FmibridgeError, match="`stop_time` must be a number"):
        fmibridge.simulate_fmu(fmu, stop_time="two")
    with pytest.raises(FmibridgeError, match="use_event_mode=False.*Event Mode"):
        fmibridge.simulate_fmu(fmu, use_event_mode=False)
    # FMPy ignores a solver in Co-Simulation; fmibridge says so
    with pytest.raises(FmibridgeError, match="`solver`: a Co-Simulation FMU"):
        fmibridge.simulate_fmu(fmu, solver="Euler")


def test_simulate_fmu_takes_an_fmu_only(tmp_path):
    adapter = tmp_path / "ball.toml"
    adapter.write_text('fmu = "BouncingBall.fmu"\n')
    with pytest.raises(FmibridgeError, match="ball.toml: simulate_fmu takes an FMU"):
        fmibridge.simulate_fmu(adapter)


@pytest.fixture(scope="module")
def result():
    """The built-in ball over 1 s on a 0.25 s grid, with its impact's two rows."""
    return fmibridge.simulate(bouncing_ball(), stop_time=1.0, output_interval=0.25)


def test_result_indexes_as_a_structured_array(result):
    array = result.to_structured()
    assert len(result) == len(array) == len(result.t) == 7
    assert result.dtype == array.dtype and result.dtype.names == ("time", "h", "v")
    assert result[-1].tolist() == (1.0, *result.x[-1])
    assert result[2]["time"] == result.events[0].t
    assert np.array_equal(result[0:3], array[0:3])
    assert np.array_equal(result[result["time"] > 0.5], array[array["time"] > 0.5])
    assert np.array_equal(result[["time", "v"]], array[["time", "v"]])
    assert [row["h"] for row in result] == array["h"].tolist()
    with pytest.raises(IndexError):
        result[7]
    with pytest.raises(KeyError, match="columns are \\['time', 'h', 'v'\\]"):
        result["x"]


def test_np_asarray_is_a_new_structured_array_with_time_first(result):
    array = np.asarray(result)
    assert array.dtype.names[0] == "time"
    assert np.array_equal(array, result.to_structured())
    array["h"] = -1.0  # the Result keeps its samples
    assert (result["h"] >= 0).all()
    cast = np.asarray(result, dtype=[("time", "f4"), ("h", "f4"), ("v", "f4")])
    assert cast.dtype["h"] == np.float32 and np.allclose(cast["h"], result["h"])


def test_fmpys_write_csv_round_trips(result, tmp_path):
    path = tmp_path / "ball.csv"
    fmpy.util.write_csv(path, result)
    back = np.genfromtxt(path, delimiter=",", names=True)
    assert back.dtype.names == result.dtype.names
    assert np.array_equal(back, np.asarray(result))  # repr of float64: exact
    fmpy.util.write_csv(path, result, columns=["v"])
    assert path.read_text().splitlines()[0] == '"time","v"'


def test_plot_result_draws_every_column_and_the_reference(result, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    path = tmp_path / "ball.png"
    fmibridge.plot_result(result, reference=result, filename=path, markers=True)
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(FmibridgeError, match="draws an fmibridge Result"):
        fmibridge.plot_result(np.asarray(result))
