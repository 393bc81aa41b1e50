"""FMUs we did not write: every Reference FMU x interface runs and matches fmpy.

The Reference FMUs (the FMI standard's own examples, FMI 2.0 and 3.0) are test
data outside the repository: the tests find them through the environment
variable FMIBRIDGE_REFERENCE_FMUS (`.ci/run` points it at
../shared/reference-fmus) and skip, saying so, where it is unset.

Each FMU x interface runs through fmibridge (`fmu_system` + Halving, and
`fmibridge run`) and is compared with `fmpy.simulate_fmu` on the same FMU:

- Model Exchange: fmibridge with RK4 at a small step against fmpy's CVode at
  relative tolerance 1e-10, on fmpy's output grid (fmibridge's samples
  interpolated linearly), away from events (EVENT_WINDOW); the error of each
  column relative to its largest magnitude must be <= ME_RTOL.
- Co-Simulation: the same communication step h in both; the columns at the
  same communication points must agree to CS_RTOL (relative as above).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd
import pytest

from fmibridge import (
    Edge,
    FmibridgeError,
    FmibridgeWarning,
    Guard,
    Halving,
    HybridSystem,
    Mode,
)
from fmibridge.cli import main
from fmibridge.flows.fmu import fmu_event_edges, fmu_system, open_fmu

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
pytestmark = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder: point it at the "
    "Reference FMUs (.ci/run sets it to ../shared/reference-fmus)",
)

COMMON = ["BouncingBall", "Dahlquist", "Feedthrough", "Resource", "Stair", "VanDerPol"]
MODELS = {2: COMMON, 3: [*COMMON, "Roberts", "StateSpace"]}
CASES = [(v, m, i) for v in MODELS for m in MODELS[v] for i in ("me", "cs")]
ME_RTOL = 1e-6  # the bound for Model Exchange, away from events
CS_RTOL = 1e-9  # the bound for Co-Simulation at the same step
FMPY_RTOL = 1e-10  # CVode's tolerance for the Model Exchange reference
ME_STEP = {"BouncingBall": 1e-4, "VanDerPol": 2.5e-4, "Roberts": 2e-4}  # s, RK4;
# small enough that linear interpolation between samples (h^2/8 |x''|) is < 1e-7
ME_STEP_DEFAULT = 1e-3
EVENT_WINDOW = 2e-3  # s: fmpy grid points this near an event are not compared
STOP = {("Roberts", "me"): 10.0, ("Roberts", "cs"): 1.0}  # stiff: not to 1e8 s
CS_STEP_DEFAULT = 1e-2  # s, where the DefaultExperiment gives no stepSize
BALL_HALF_TIME_ME = 0.3192754284  # h = 0.5 in Model Exchange (Reference BouncingBall)


def reference(version: int, model: str) -> Path:
    return Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"


def columns(result: np.ndarray) -> dict[str, np.ndarray]:
    """fmpy's result as float columns, arrays split into y[1], y[2], ..."""
    out = {}
    for name in result.dtype.names[1:]:
        values = np.asarray(result[name], dtype=float)
        if values.ndim == 1:
            out[name] = values
        else:
            for k in range(values.shape[1]):
                out[f"{name}[{k + 1}]"] = values[:, k]
    return out


def relative_error(ours: np.ndarray, theirs: np.ndarray, column: np.ndarray) -> float:
    scale = float(np.max(np.abs(column))) or 1.0
    return float(np.max(np.abs(ours - theirs), initial=0.0)) / scale


def run_fmibridge(path: Path, interface: str, h: float, stop: float | None):
    system = fmu_system(path, interface)
    try:
        return Halving(h=h, t_tol=1e-12).run(system, stop)
    finally:
        system.close()


def me_errors(version: int, model: str) -> dict[str, float]:
    path, stop = reference(version, model), STOP.get((model, "me"))
    result = run_fmibridge(path, "me", ME_STEP.get(model, ME_STEP_DEFAULT), stop)
    assert result.status.is_success, result.status
    ref = fmpy.simulate_fmu(
        path,
        fmi_type="ModelExchange",
        relative_tolerance=FMPY_RTOL,
        stop_time=stop,
        record_events=False,
    )
    frame = result.to_pandas()
    frame = frame[~frame.index.duplicated(keep="last")]  # the sample after an event
    t = ref["time"]
    keep = np.all([np.abs(t - e) > EVENT_WINDOW for e in result.event_times], axis=0)
    keep &= t <= frame.index[-1]
    assert keep.sum() > len(t) / 2
    return {
        name: relative_error(
            np.interp(t[keep], frame.index, frame[name].to_numpy(float)),
            column[keep],
            column,
        )
        for name, column in columns(ref).items()
    }


def cs_errors(version: int, model: str) -> dict[str, float]:
    path, stop = reference(version, model), STOP.get((model, "cs"))
    system = fmu_system(path, "cs")
    h = system.experiment.step or CS_STEP_DEFAULT
    system.close()
    result = run_fmibridge(path, "cs", h, stop)
    assert result.status.is_success, result.status
    ref = fmpy.simulate_fmu(
        path, fmi_type="CoSimulation", stop_time=stop, output_interval=h
    )
    frame = result.to_pandas()
    frame = frame[~frame.index.duplicated(keep="last")]
    rows = [int(np.argmin(np.abs(frame.index - t))) for t in ref["time"]]
    assert np.allclose(frame.index[rows], ref["time"], rtol=0, atol=1e-9 * h)
    return {
        name: relative_error(frame[name].to_numpy(float)[rows], column, column)
        for name, column in columns(ref).items()
    }


@pytest.mark.parametrize("version, model, interface", CASES)
def test_matches_fmpy_on_the_same_fmu(version, model, interface):
    errors = (
        me_errors(version, model) if interface == "me" else cs_errors(version, model)
    )
    bound = ME_RTOL if interface == "me" else CS_RTOL
    worst = max(errors, key=errors.get)
    assert errors[worst] <= bound, (
        f"FMI {version} {model} {interface}: {worst} differs from fmpy by "
        f"{errors[worst]:.2e} of its range (bound {bound:g}); all: {errors}"
    )


@pytest.mark.parametrize("version, model, interface", CASES)
def test_fmibridge_run_defaults_to_the_default_experiment(
    version, model, interface, tmp_path
):
    path, out = reference(version, model), tmp_path / "out.csv"
    argv = ["run", str(path), "--interface", interface, "--out", str(out)]
    if model == "Roberts":  # stiff: explicit RK4 needs a short horizon and step
        argv += ["--stop-time", "1", "--step-size", "1e-4"]
    assert main([*argv, "--no-progress"]) == 0
    frame = pd.read_csv(out, index_col="time")
    md = fmpy.read_model_description(path)
    outputs = {v.name for v in md.modelVariables if v.causality == "output"}
    arrays = {v.name for v in md.modelVariables if v.shape}
    expected = {f"{n}[1]" if n in arrays else n for n in outputs} - {"String_output"}
    expected -= {"Binary_output"}
    assert expected <= set(frame.columns)
    stop = 1.0 if model == "Roberts" else 9.0 if model == "Stair" else None
    assert frame.index[-1] == (stop or float(md.defaultExperiment.stopTime))


@pytest.mark.parametrize("interface", [None, "me", "cs"])
def test_clocks_is_refused_naming_scheduled_execution(interface):
    path = reference(3, "Clocks")
    with pytest.raises(FmibridgeError) as error:
        fmu_system(path, interface)
    assert str(error.value) == (
        f"{path}: the FMU offers Scheduled Execution only, neither Model Exchange "
        f"nor Co-Simulation, which fmibridge runs (Scheduled Execution needs a "
        f"clock-driven scheduler, which fmibridge does not have)."
    )


def test_clocks_is_refused_by_the_cli_in_one_line(capsys):
    path = reference(3, "Clocks")
    assert main(["run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fmibridge: error: {path}: the FMU offers Scheduled ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("version", [2, 3])
def test_stair_steps_exactly_at_the_integer_times(version):
    """Time events: the master lands on nextEventTime and iterates there."""
    system = fmu_system(reference(version, "Stair"), "me")
    try:
        result = Halving(h=0.3).run(system)  # h does not divide 1: events cut steps
    finally:
        system.close()
    assert [e.t for e in result.events] == [float(k) for k in range(1, 10)]
    counter = result["counter"]
    after = [counter[np.nonzero(result.t == k)[0][-1]] for k in range(1, 10)]
    assert after == [float(k + 1) for k in range(1, 10)]
    assert result.status.name == "TERMINATED" and result.t[-1] == 9.0


def test_fmi3_cs_events_are_located_by_the_fmu_and_logged():
    """Event Mode + early return: the FMU stops at its own events, fmibridge runs
    them (Event Mode) and logs each; fmpy with the same settings agrees."""
    path = reference(3, "BouncingBall")
    result = run_fmibridge(path, "cs", 1e-2, None)
    ref = fmpy.simulate_fmu(
        path,
        fmi_type="CoSimulation",
        use_event_mode=True,
        early_return_allowed=True,
        output_interval=1e-2,
    )
    assert len(result.events) == 12  # the 11 bounces and the stop below v_min
    for event in result.events:
        rows = ref[ref["time"] == event.t]
        assert len(rows) == 2, event.t  # fmpy's samples before and after the event
        np.testing.assert_array_equal([rows["h"][0], rows["v"][0]], event.x_before)
        np.testing.assert_array_equal([rows["h"][1], rows["v"][1]], event.x_after)


def _ball_with_half_guard(path: Path, interface: str):
    """The Reference BouncingBall with a Python guard h - 0.5 to a second mode."""
    flow = open_fmu(path, interface)
    half = Edge(Guard(lambda t, x: x[0] - 0.5, "falling"), "below", name="half")
    modes = [
        Mode("above", flow, (half, *fmu_event_edges(flow, "above"))),
        Mode("below", flow, fmu_event_edges(flow, "below")),
    ]
    return HybridSystem(modes, "above", flow.x0)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("locate", ["halving", "illinois"])
def test_cs_guard_the_fmu_cannot_resolve_is_reported(version, locate):
    """The FMU takes 1e-3 s steps and ignores shorter ones: the crossing is placed
    where the FMU first is beyond it, and a warning says how well it is known."""
    path = reference(version, "BouncingBall")
    system = _ball_with_half_guard(path, "cs")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = Halving(h=1e-2, locate=locate).run(system, 0.5)
    finally:
        system.close()
    messages = [str(w.message) for w in caught if w.category is FmibridgeWarning]
    assert len(messages) == 1 and messages[0].startswith(f"{path}: guard 'half'")
    assert "so the crossing is located only to 0.000625 s, not t_tol" in messages[0]
    assert result.provenance["warnings"] == messages[0]
    event = result.events[0]
    assert (event.edge, event.t) == ("half", pytest.approx(0.32, abs=1e-12))
    h, v = event.x_before
    assert 0.5 + v * 1e-3 < h < 0.5  # beyond, by at most one internal step of 1e-3 s
    assert abs(event.t - BALL_HALF_TIME_ME) < 1e-3  # Euler's own error is 5e-4 s


@pytest.mark.parametrize("version", [2, 3])
def test_me_guard_is_located_to_t_tol(version):
    system = _ball_with_half_guard(reference(version, "BouncingBall"), "me")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", FmibridgeWarning)
            result = Halving(h=1e-2, t_tol=1e-12).run(system, 0.5)
    finally:
        system.close()
    assert result.events[0].t == pytest.approx(BALL_HALF_TIME_ME, abs=1e-9)
    assert result.events[0].x_before[0] == pytest.approx(0.5, abs=1e-11)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("interface", ["me", "cs"])
def test_feedthrough_outputs_follow_its_inputs_as_in_fmpy(version, interface):
    """No continuous states: the outputs still change with the inputs."""
    path, h = reference(version, "Feedthrough"), 0.05
    system = fmu_system(
        path,
        interface,
        inputs={"Float64_continuous_input": np.sin, "Int32_input": 3},
    )
    try:
        result = Halving(h=h).run(system, 2.0)
    finally:
        system.close()
    t = np.round(np.arange(0.0, 2.0 + h / 2, h), 12)
    signal = np.array(
        list(zip(t, np.sin(t), strict=True)),
        dtype=[("time", float), ("Float64_continuous_input", float)],
    )
    ref = fmpy.simulate_fmu(
        path,
        fmi_type="ModelExchange" if interface == "me" else "CoSimulation",
        input=signal,
        start_values={"Int32_input": 3},
        output_interval=h,
        stop_time=2.0,
        record_events=False,
    )
    frame = result.to_pandas()
    frame = frame[~frame.index.duplicated(keep="last")]
    ours = frame["Float64_continuous_output"].reindex(ref["time"], method="nearest")
    np.testing.assert_allclose(
        ours.to_numpy(), ref["Float64_continuous_output"], rtol=0, atol=1e-12
    )
    assert np.ptp(ref["Float64_continuous_output"]) > 0.9  # it did follow sin(t)
    assert set(frame["Int32_output"]) == {3.0}


def test_statespace_arrays_are_written_and_read():
    """FMI 3 arrays: parameters A, D and the input u set as arrays, y[1..3] read:
    x' = -x + u, y = x from x(0) = 0 gives y = u (1 - exp(-t))."""
    u = np.array([1.0, 2.0, -3.0])
    system = fmu_system(
        reference(3, "StateSpace"),
        "me",
        parameters={"A": (-np.eye(3)).ravel().tolist(), "D": [0.0] * 9},
        inputs={"u": u.tolist()},
    )
    try:
        result = Halving(h=1e-3).run(system)
    finally:
        system.close()
    assert system.state_names == ("x[1]", "x[2]", "x[3]")
    y = np.column_stack([result[f"y[{k}]"] for k in (1, 2, 3)])
    exact = np.outer(1 - np.exp(-result.t), u)
    np.testing.assert_allclose(y, exact, rtol=0, atol=1e-12)
    with pytest.raises(FmibridgeError, match="'A' takes 9 value"):
        fmu_system(reference(3, "StateSpace"), "me", parameters={"A": [1.0, 2.0]})


def test_info_shows_types_starts_units_dims_and_every_interface(capsys):
    for version, model in [(3, "StateSpace"), (2, "Feedthrough"), (3, "Clocks")]:
        assert main(["info", str(reference(version, model))]) == 0
    assert main(["info", str(reference(3, "BouncingBall"))]) == 0
    out = " ".join(capsys.readouterr().out.split())  # columns to single spaces
    assert "DefaultExperiment: start 0, stop 10, step -, tolerance -" in out
    assert "m structuralParameter tunable UInt64 3" in out
    assert "A parameter tunable Float64 1 0 0 0 1 0 0 0 1 [3,3]" in out
    assert "Boolean_input input discrete Boolean false" in out
    assert "String_input input discrete String Set me!" in out
    assert "ScheduledExecution: no state get/set (fmibridge cannot run it)" in out
    assert "hasEventMode, mightReturnEarlyFromDoStep" in out
    assert "g parameter fixed Float64 -9.81 m/s2" in out  # the declared type's unit
