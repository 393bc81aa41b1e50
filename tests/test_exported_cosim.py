"""Co-Simulation FMUs as real tools export them, driven by an input table.

Dymola 2025x's CoupledClutches (Co-Simulation with CVODE inside, FMI 1.0 and
2.0) with its own input table: `step2` steps from 0 to 1 at 0.9 s, which
engages the last clutch, and J4_w starts to turn at once (10 rad/s per second).
The jump is a time event: the communication step ends on it and the next one
starts with the input after it. Such an FMU runs an input's discontinuity as
an event at the start of doStep only where nothing evaluated the FMU with the
new value first; one fmi2GetReal in between (reading the recorded outputs for
the sample after the jump) makes it meet the step late. The outputs after the
jump equal those before it where none depends directly on the input
(ModelStructure, FMI 1.0 DirectDependency), so nothing is read there.

The Reference Feedthrough FMU and our MassSpringStop check the other side:
outputs that depend directly on an input show the value after the jump in the
sample after it; which outputs do is read from the model description (FMI 1.0
DirectDependency, FMI 2.0 / 3.0 ModelStructure).

The FMUs are third-party test data beside the repository
(``FMIBRIDGE_REAL_FMUS``, ``FMIBRIDGE_REFERENCE_FMUS``; `.ci/run` points them
at ``../shared``); the tests skip, saying so, where they are unset.
"""

from __future__ import annotations

import os
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd
import pytest

import fmibridge
from fmibridge.core.errors import FmibridgeError
from fmibridge.flows.fmu_archive import FmuArchive

FOLDER = Path(os.environ.get("FMIBRIDGE_REAL_FMUS", "/nonexistent"))
REFERENCE = Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "/nonexistent"))
needs_real = pytest.mark.skipif(
    not FOLDER.is_dir(),
    reason="FMIBRIDGE_REAL_FMUS is unset or not a folder: point it at the real "
    "exporters' FMUs (.ci/run sets it to ../shared/real-fmus)",
)
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)

DYMOLA = "Dymola2025xR1_CoupledClutches_{}_Cvode.fmu"
TABLE = "Dymola2025xR1_CoupledClutches_fmi2_Cvode_in.csv"
T_JUMP = 0.9  # s: the table's step of `step2`
STOP = 0.906  # s: a few steps past the jump
RATE = 10.0  # rad/s^2: J4_w's rate once the clutch engages (fmpy: 0.01 at 0.901)


@needs_real
@pytest.mark.parametrize("version", ["fmi1", "fmi2", "fmi3"])
@pytest.mark.parametrize("h", [0.001, 0.002])
def test_a_jump_of_the_input_table_reaches_the_fmu_at_its_time(version, h):
    """J4_w after the jump equals fmpy's at every communication point (both
    run the same doSteps; FMI 3.0 runs the jump in Event Mode), and it grows
    from the jump's time on."""
    path = FOLDER / DYMOLA.format(version)
    try:
        FmuArchive(path)
    except FmibridgeError as exc:  # FMI 3.0.1: read by a change of its own
        pytest.skip(f"this FMU is not read here yet: {exc}")
    table = np.genfromtxt(FOLDER / TABLE, delimiter=",", names=True)
    keywords = dict(input=table, fmi_type="CoSimulation", stop_time=STOP)
    ref = fmpy.simulate_fmu(path, output_interval=h, **keywords)
    result = fmibridge.simulate(path, step_size=h, output_interval=h, **keywords)
    assert result.status.is_success
    assert result.event_times.tolist() == [T_JUMP]  # the jump, a time event
    frame = result.to_pandas()
    before, after = frame.loc[T_JUMP, "J4_w"]  # the two rows of the event
    assert before == after  # J4_w depends on states only: the FMU was not read
    ours = frame[~frame.index.duplicated(keep="last")]["J4_w"]
    expected = pd.Series(ref["J4_w"], index=ref["time"])
    for t in (0.902, 0.904):
        assert ours.loc[t] == pytest.approx(expected.loc[t], abs=1e-12)
        assert ours.loc[t] == pytest.approx(RATE * (t - T_JUMP), rel=1e-6)
    if h == 0.001:
        assert ours.loc[0.901] == pytest.approx(expected.loc[0.901], abs=1e-12)


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_outputs_that_feed_through_show_the_jump_in_the_row_after_it(version):
    """The Reference Feedthrough's outputs equal its inputs (declared in its
    ModelStructure): the row after the jump holds the input after it, the row
    before it the input of the step that ended there (0.8, set at 0.4 s and
    held). FMI 3.0 runs the jump in Event Mode, as it asks of an FMU that uses
    Event Mode."""
    table = pd.DataFrame(
        {
            "time": [0.0, 0.5, 0.5, 1.0],
            "Float64_continuous_input": [0.0, 1.0, 3.0, 2.0],
            "Int32_input": [0, 0, 2, 2],
        }
    )
    path = REFERENCE / f"fmi{version}" / "Feedthrough.fmu"
    result = fmibridge.simulate(
        path, input=table, fmi_type="CoSimulation", output_interval=0.1
    )
    assert result.status.is_success
    frame = result.to_pandas()
    assert frame.loc[0.5, "Float64_continuous_output"].tolist() == [0.8, 3.0]
    assert frame.loc[0.5, "Int32_output"].tolist() == [0.0, 2.0]


BUILDS = ["MassSpringStop.fmu", "MassSpringStop_fmi3.fmu", "MassSpringStop_fmi1cs.fmu"]


@pytest.mark.parametrize(
    ("model", "declared"),
    [
        ("MassSpringStop", {"x": set(), "a": {"F"}, "gap": set()}),
        ("PositionController", {"z": set(), "F": {"x_meas", "v_meas", "a_meas"}}),
    ],
)
def test_fmi1_direct_dependencies_are_the_fmi2_model_structure(
    fmu_dir, model, declared
):
    """Our FMI 1.0 build's DirectDependency and FMI 2.0 build's ModelStructure
    name the same inputs for every output, states (outputs here) included."""
    fmi1 = FmuArchive(fmu_dir / f"{model}_fmi1cs.fmu")
    fmi2 = FmuArchive(fmu_dir / f"{model}.fmu")
    outputs = [v.name for v in fmi2.variables.values() if v.causality == "output"]
    found = {name: fmi1.feedthrough(name) for name in outputs}
    assert found == {name: fmi2.feedthrough(name) for name in outputs}
    assert {name: found[name] for name in declared} == declared


@pytest.mark.parametrize("build", BUILDS)
def test_an_output_that_depends_on_the_jumping_input_jumps_with_it(fmu_dir, build):
    """MassSpringStop's a = (F - k x - d v) / m depends on F directly: the row
    after F's jump from 0 to 2 N at 0.5 s holds a 2 m/s^2 higher (m = 1 kg); the
    states are the same as in a run that records only the gap (which reads
    nothing at the jump)."""
    table = pd.DataFrame({"time": [0.0, 0.5, 0.5, 1.0], "F": [1.0, 1.0, 3.0, 3.0]})
    runs = {
        tuple(outputs): fmibridge.simulate(
            fmu_dir / build,
            input=table,
            output=outputs,
            fmi_type="CoSimulation",
            step_size=0.01,
            stop_time=1.0,
        )
        for outputs in (["a", "gap"], ["gap"])
    }
    both, gap_only = (runs[k].to_pandas() for k in (("a", "gap"), ("gap",)))
    before, after = both.loc[0.5, "a"]
    assert after - before == pytest.approx(2.0, abs=1e-12)
    np.testing.assert_array_equal(both["x"].to_numpy(), gap_only["x"].to_numpy())
    np.testing.assert_array_equal(both["gap"].to_numpy(), gap_only["gap"].to_numpy())


@needs_reference
def test_fmi3_time_events_are_communication_points():
    """The Reference Stair (FMI 3.0 CS, Event Mode, early return) announces a
    time event each second; with a communication step of 0.3 s that never
    lands there, each event still falls on its second exactly (the FMU
    returns early there and fmibridge runs it in Event Mode), and the counter
    steps in the row after it."""
    result = fmibridge.simulate(
        REFERENCE / "fmi3" / "Stair.fmu",
        fmi_type="CoSimulation",
        step_size=0.3,
        output_interval=0.3,
        stop_time=3.5,
    )
    assert result.event_times.tolist() == [1.0, 2.0, 3.0]
    counter = result.to_pandas()["counter"]
    for k in (1, 2, 3):  # 3.0 is an output time too: a third row, after
        rows = counter.loc[float(k)].tolist()
        assert rows[0] == k and rows[1:] == [k + 1] * (len(rows) - 1)
