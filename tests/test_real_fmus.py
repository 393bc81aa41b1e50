"""FMUs as real tools export them load and run as fmpy runs them (issue 38).

The exported FMUs (Dymola 2025x Refresh 1, MWORKS.Sysplorer 2025b) are test
data outside the repository: the tests find them through the environment
variable FMIBRIDGE_REAL_FMUS (`.ci/run` points it at ../shared/real-fmus) and
skip, saying so, where it is unset. Each is compared with `fmpy.simulate_fmu`
on the same FMU and with the exporter's own reference result (`_ref.csv`).
What no exported FMU here shows (an fmiVersion 2.0.x, an unknown version, a
clocked FMI 3 FMU) is made from our own FMUs in tmp_path, the model
description edited and the binary unchanged.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest

import fmibridge
from fmibridge import FmibridgeError
from fmibridge.flows.fmi import Fmi3Model, Fmi3Slave
from fmibridge.flows.fmu import open_fmu
from fmibridge.models import bouncing_ball_impacts

FOLDER = os.environ.get("FMIBRIDGE_REAL_FMUS", "")
needs_real_fmus = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REAL_FMUS is unset or not a folder: point it at the exported "
    "FMUs (.ci/run sets it to ../shared/real-fmus)",
)
CLUTCH_OUTPUTS = ["J1_w", "J2_w", "J3_w", "J4_w"]
FMPY_RTOL = 1e-10  # CVode's tolerance for fmpy's Model Exchange reference
CLUTCH_RTOL = 1e-5  # RK4 at h = 1e-3 s against it, relative to each column's scale
G_N = 9.80665  # m/s2, Modelica.Constants.g_n: Sysplorer's BouncingBall falls by it
T_TOL = 1e-10  # s, Halving's default t_tol: where it puts an impact


def real(name: str) -> Path:
    return Path(FOLDER) / name


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(ours - theirs)) / (np.max(np.abs(theirs)) or 1.0))


def edited(fmu: Path, target: Path, old: bytes, new: bytes) -> Path:
    """A copy of `fmu` whose model description has `old` (once) replaced by `new`."""
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w") as copy:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "modelDescription.xml":
                assert data.count(old) == 1
                data = data.replace(old, new)
            copy.writestr(item, data)
    return target


# -- 1. fmiVersion strings: chosen by major version, once --------------------------


@needs_real_fmus
def test_dymolas_fmi_3_0_1_runs_as_fmi_3_and_as_its_fmi_2_build():
    """Dymola writes fmiVersion="3.0.1" (refused before as "not supported"): it
    runs with the FMI 3 classes, gives its FMI 2 build's numbers (the same
    model), and agrees with fmpy's CVode."""
    path = real("Dymola2025xR1_CoupledClutches_fmi3_Cvode.fmu")
    u = fmpy.read_csv(real("Dymola2025xR1_CoupledClutches_fmi2_Cvode_in.csv"))
    with open_fmu(path, "me") as me, open_fmu(path, "cs") as cs:
        assert (me.archive.declared_version, me.archive.fmi_version) == ("3.0.1", "3.0")
        assert type(me.instance) is Fmi3Model and type(cs.instance) is Fmi3Slave
        assert me.describe()["fmi_version"] == "3.0.1"
    call = dict(input=u, step_size=1e-3, output_interval=0.01, record_events=False)
    ours = fmibridge.simulate(path, **call)
    fmi2 = fmibridge.simulate(
        real("Dymola2025xR1_CoupledClutches_fmi2_Cvode.fmu"), **call
    )
    ref = fmpy.simulate_fmu(
        path,
        input=u,
        fmi_type="ModelExchange",
        output_interval=0.01,
        relative_tolerance=FMPY_RTOL,
        record_events=False,
        output=CLUTCH_OUTPUTS,
    )
    assert np.array_equal(ours["time"], ref["time"]) and len(ours.t) == 151
    # the time events (0.4 s, the step input at 0.9 s) and the clutches' locking
    # and breaking loose, as its FMI 2 build reports them
    assert 0.4 in ours.event_times and 0.9 in ours.event_times
    assert len(ours.event_times) >= 9
    np.testing.assert_allclose(ours.event_times, fmi2.event_times, atol=1e-12)
    for name in CLUTCH_OUTPUTS:
        assert np.max(np.abs(ours[name] - fmi2[name])) <= 1e-12, name
        assert relative_error(ours[name], ref[name]) < CLUTCH_RTOL, name


@needs_real_fmus
def test_dymolas_co_simulation_events_are_fmpys_event_mode_entries():
    """Dymola's FMI 3.0.1 drive train in Co-Simulation with its input table:
    fmibridge handles the FMU's events in Event Mode, as FMPy does with
    use_event_mode=True (its default is no Event Mode, and no event at all).
    Each Event Mode entry of FMPy's is one of fmibridge's: an event in
    `Result.events` where the states or the outputs changed (the input's step
    at 0.9 s), else a silent one (a clutch that locks or breaks loose changes
    only a discrete state, which a Co-Simulation FMU does not show); on the
    same grid of samples."""
    path = real("Dymola2025xR1_CoupledClutches_fmi3_Cvode.fmu")
    u = fmpy.read_csv(real("Dymola2025xR1_CoupledClutches_fmi2_Cvode_in.csv"))
    calls: list[str] = []
    theirs = fmpy.simulate_fmu(
        path,
        input=u,
        use_event_mode=True,
        early_return_allowed=True,
        fmi_call_logger=calls.append,
    )
    ours = fmibridge.simulate_fmu(path, input=u)
    entries = sum(call.startswith("fmi3EnterEventMode(") for call in calls)
    assert entries > 10
    assert len(ours.events) + ours.stats["n_silent_events"] == entries
    assert [event.t for event in ours.events] == [0.9]
    repeated = theirs["time"][1:][np.diff(theirs["time"]) == 0]
    assert 0.9 in repeated  # FMPy's two rows of that event
    plain = fmpy.simulate_fmu(path, input=u)  # FMPy's grid, without Event Mode
    assert np.array_equal(ours["time"], plain["time"])


def test_an_fmi_2_0_x_version_runs_as_fmi_2(fmu_dir, tmp_path):
    """FMI 2.0.x are maintenance releases of FMI 2.0 (fmpy cannot read them)."""
    ball = fmu_dir / "BouncingBall.fmu"
    path = edited(
        ball, tmp_path / "Ball204.fmu", b'fmiVersion="2.0"', b'fmiVersion="2.0.4"'
    )
    with pytest.raises(Exception, match="Unsupported FMI version: 2.0.4"):
        fmpy.read_model_description(path)
    with open_fmu(path, "me") as flow:
        assert (flow.archive.declared_version, flow.archive.fmi_version) == (
            "2.0.4",
            "2.0",
        )
    ours = fmibridge.simulate(path, stop_time=0.4)
    plain = fmibridge.simulate(ball, stop_time=0.4)
    assert np.array_equal(ours.t, plain.t) and np.array_equal(ours.x, plain.x)
    t = ours["time"]  # free fall from h = 1 m: RK4 is exact on the parabola
    assert np.abs(ours["h"] - (1.0 - 9.81 / 2 * t**2)).max() < 1e-12


@pytest.mark.parametrize("version", ["4.0", "1.1", "2.1", "3", ""])
def test_an_unknown_fmi_version_is_refused_naming_file_and_version(
    fmu_dir, tmp_path, version
):
    path = edited(
        fmu_dir / "BouncingBall.fmu",
        tmp_path / "Unknown.fmu",
        b'fmiVersion="2.0"',
        f'fmiVersion="{version}"'.encode(),
    )
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(path)
    assert str(error.value) == (
        f"{path}: FMI {version!r} is not supported; fmibridge runs FMI 1.0, 2.0 "
        f"(and 2.0.x) and 3 (3.0, 3.0.x, 3.x): export one of them."
    )


# -- 2. FMI 1.0: the state vector is the FMU's, read after fmiInitialize ------------


def ball_h(result, grid: np.ndarray, column: str) -> np.ndarray:
    """h on the grid: the last sample at or before each time (after an event)."""
    t = np.asarray(result["time"], dtype=float)
    return np.asarray(result[column], dtype=float)[
        np.searchsorted(t, grid, side="right") - 1
    ]


@needs_real_fmus
def test_sysplorers_fmi_1_ball_runs_as_its_fmi_2_and_3_builds():
    """Sysplorer's FMI 1.0 BouncingBall sets stateValueReferencesChanged in
    fmiInitialize (refused before) and reports no value reference for its
    states: they are read after initialisation and named by position. Its h
    equals the FMI 2 and 3 builds' on a common grid, so it is as close to
    fmpy and to Sysplorer's own result as they are; its impacts are the exact
    ones of a ball dropped from 20 m (coef 0.75) to Halving's t_tol."""
    grid = np.linspace(0.0, 10.0, 1001)
    stem = "Sysplorer2025b_BouncingBall_fmi{}_me"
    hs, fmpys, refs = {}, {}, {}
    for version in (1, 2, 3):
        path = real(stem.format(version) + ".fmu")
        result = fmibridge.simulate(path, output=["h"] if version == 1 else None)
        if version == 1:
            assert result.state_names == ("state[1]", "state[2]")
            exact = bouncing_ball_impacts(4, h0=20.0, g=G_N, e=0.75)
            # two events at each impact, as fmpy reports them: the bounce, and
            # the indicator's return above zero (its relation switches back)
            impacts, returns = result.event_times[::2], result.event_times[1::2]
            assert len(impacts) == len(returns) == 4
            assert np.abs(returns - impacts).max() < 1e-9
            assert np.abs(impacts - exact).max() < 10 * T_TOL
        hs[version] = ball_h(result, grid, "h")
        fmpys[version] = ball_h(fmpy.simulate_fmu(path), grid, "y")
        refs[version] = ball_h(
            np.genfromtxt(
                real(stem.format(version) + "_ref.csv"), delimiter=",", names=True
            ),
            grid,
            "y",
        )
    assert np.abs(hs[1] - hs[2]).max() < 1e-9 and np.abs(hs[3] - hs[2]).max() < 1e-9
    for version in (1, 3):
        assert np.abs(hs[version] - fmpys[version]).max() <= (
            np.abs(hs[2] - fmpys[2]).max() + 1e-9
        )
        assert np.abs(hs[version] - refs[version]).max() <= (
            np.abs(hs[2] - refs[2]).max() + 1e-9
        )


# -- 5. CVode on a Model Exchange FMU without states ------------------------------


@needs_real_fmus
def test_cvode_runs_a_register_without_states_as_fmpy_and_sysplorer():
    """Sysplorer's DFFREG (a register: time events, no continuous states) with
    solver='CVode' (refused before: CVODE needs an equation): its outputs are
    fmpy's CVode ones and Sysplorer's reference, row for row."""
    path = real("Sysplorer2025b_DFFREG_fmi2_me.fmu")
    call = dict(stop_time=25.0, output_interval=0.05, solver="CVode")
    ours = fmibridge.simulate(path, record_events=False, **call)
    theirs = fmpy.simulate_fmu(path, record_events=False, **call)
    reference = np.genfromtxt(
        real("Sysplorer2025b_DFFREG_fmi2_me_ref.csv"), delimiter=",", names=True
    )
    rows = np.r_[np.diff(reference["time"]) > 0, True]  # after each event
    assert np.array_equal(ours["time"], theirs["time"]) and len(ours.t) == 501
    assert np.allclose(ours["time"], reference["time"][rows], rtol=0, atol=1e-12)
    for name in ("dateout1", "dateout2"):
        assert np.array_equal(ours[name], theirs[name]), name
        assert np.array_equal(ours[name], reference[name][rows]), name
    assert len(np.unique(ours["dateout1"])) == 3  # it does change: 1, 3, 4, 3


# -- 6. clocks ------------------------------------------------------------------


@pytest.mark.parametrize("interface", ["cs", "me"])
def test_a_clocked_fmi_3_fmu_is_refused_naming_its_clocks(fmu_dir, tmp_path, interface):
    """fmpy runs an FMI 3 FMU with Clock variables without activating them
    (its clocked variables would stay at their start values); fmibridge
    refuses it at load, naming the clocks."""
    path = edited(
        fmu_dir / "BouncingBall_fmi3.fmu",
        tmp_path / "Clocked.fmu",
        b"  </ModelVariables>",
        b'    <Clock name="tick" valueReference="100" causality="input" '
        b'intervalVariability="constant" intervalDecimal="0.1" />\n'
        b"  </ModelVariables>",
    )
    fmi_type = {"cs": "CoSimulation", "me": "ModelExchange"}[interface]
    assert len(fmpy.simulate_fmu(path, fmi_type=fmi_type, stop_time=0.1)) > 1
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(path, fmi_type=interface)
    title = {"cs": "Co-Simulation", "me": "Model Exchange"}[interface]
    assert str(error.value) == (
        f"{path}: the FMU has clocks (tick); fmibridge does not activate clocks, so "
        f"its clocked variables would never change in {title}. Run it with an "
        f"importer that supports FMI 3 clocks, or export it without them."
    )
