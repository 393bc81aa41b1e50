"""A plain Co-Simulation run steps its FMU in one compiled loop.

Without guards a run undoes no step, so `_cosim.FmuStepper` takes every
communication step after the first without Python: the inputs from their
tables, doStep through its C pointer, the states and the recorded outputs read
by value reference. It makes the same FMU calls as `CoSimulationFlow.advance`
(the path it replaces, kept for runs with guards and for the FMUs it cannot
take), so the samples are the same bit for bit; the Result's provenance says
which path ran (`steps=` in its flows). A coupling's master reads its recorded
variables in C after each plain step (`_cosim.MasterStepper`) likewise.

The Reference FMUs are third-party test data beside the repository
(``FMIBRIDGE_REFERENCE_FMUS``); those tests skip, saying so, where it is unset.
"""

from __future__ import annotations

import os
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd
import pytest
from test_cs_guards import T_TOL, impact_times, stateless
from test_fmu_flows import ball_on
from test_real_fmus import needs_real_fmus, real

import fmibridge
from fmibridge import Halving
from fmibridge.core.errors import FMUError
from fmibridge.core.result import Result, Status
from fmibridge.core.system import Edge, HybridSystem, Mode
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import CoSimulationFlow, open_fmu

REFERENCE = Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "/nonexistent"))
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
# F: a ramp, then a jump at 0.5 s (a time event) that the output `a` feeds through
TABLE = pd.DataFrame(
    {"time": [0.0, 0.25, 0.5, 0.5, 1.0], "F": [1.0, 0.0, 1.5, 3.0, 2.0]}
)


def both_paths(monkeypatch, run) -> tuple[Result, Result]:
    """Return run() on the compiled steps and on `advance` (compiled_steps off)."""
    results = []
    for compiled in (True, False):
        monkeypatch.setattr(CoSimulationFlow, "compiled_steps", compiled)
        results.append(run())
    return results[0], results[1]


def assert_same(compiled: Result, python: Result) -> None:
    """The same samples, columns, events and status, bit for bit."""
    np.testing.assert_array_equal(compiled.t, python.t)
    pd.testing.assert_frame_equal(compiled.to_pandas(), python.to_pandas())
    assert [e.t for e in compiled.events] == [e.t for e in python.events]
    assert compiled.status == python.status
    assert "steps=compiled" in compiled.provenance["flows"]
    assert compiled.provenance["python_callbacks"] == "none"
    assert "steps=python (compiled steps off)" in python.provenance["flows"]


@needs_reference
@pytest.mark.parametrize(
    ("version", "name"),
    [
        (2, "BouncingBall"),
        (2, "Dahlquist"),
        (2, "VanDerPol"),
        (2, "Stair"),
        (3, "VanDerPol"),
    ],  # fmt: skip
)
def test_reference_fmus_give_fmpys_samples_on_both_paths(monkeypatch, version, name):
    """fmpy's simulate_fmu makes the same doSteps: its rows equal ours exactly."""
    path = REFERENCE / f"fmi{version}" / f"{name}.fmu"
    compiled, python = both_paths(
        monkeypatch, lambda: fmibridge.simulate(path, fmi_type="CoSimulation")
    )
    assert_same(compiled, python)
    ref = fmpy.simulate_fmu(path, fmi_type="CoSimulation")
    ours = compiled.to_structured()
    assert ours.dtype.names == ref.dtype.names
    for column in ref.dtype.names:
        np.testing.assert_array_equal(ours[column], ref[column])


@needs_reference
def test_outputs_of_every_numeric_type_are_read_in_c(monkeypatch):
    """The Reference Feedthrough (FMI 3.0) outputs its inputs, here set as
    start values of every numeric type: each output is read by its own type's
    C get and converted as Python converts it (UInt64 2**63 + 1 rounds to
    the double 2**63), the same rows on both paths."""
    start = {
        "Float32_continuous_input": 1.5,
        "Int8_input": -7,
        "UInt8_input": 200,
        "Int16_input": -300,
        "UInt16_input": 60000,
        "Int32_input": -70000,
        "UInt32_input": 4_000_000_000,
        "Int64_input": -(2**40),
        "UInt64_input": 2**63 + 1,
        "Boolean_input": True,
        "Enumeration_input": 2,
    }
    path = REFERENCE / "fmi3" / "Feedthrough.fmu"
    compiled, python = both_paths(
        monkeypatch,
        lambda: fmibridge.simulate(
            path, fmi_type="CoSimulation", start_values=start, stop_time=0.2
        ),
    )
    assert_same(compiled, python)
    last = compiled.to_pandas().iloc[-1]
    for name, value in start.items():
        assert last[name.replace("_input", "_output")] == float(value)


@needs_reference
def test_fmi3_event_mode_steps_log_the_fmus_events_on_both_paths(monkeypatch):
    """The Reference BouncingBall (FMI 3.0, Event Mode, early return) bounces
    inside communication steps: each such step is finished in Python, its
    sample handed to the observer at once (which logs the FMU's event), the
    other steps run compiled; the same rows and events as `advance`, on an
    output grid coarser than the step."""
    path = REFERENCE / "fmi3" / "BouncingBall.fmu"
    keywords = dict(step_size=0.01, output_interval=0.05, stop_time=3.0)
    compiled, python = both_paths(
        monkeypatch,
        lambda: fmibridge.simulate(path, fmi_type="CoSimulation", **keywords),
    )
    assert_same(compiled, python)
    assert len(compiled.events) >= 5
    assert all(e.edge.endswith("fmu_event") for e in compiled.events)


@needs_reference
def test_a_step_that_fails_in_c_raises_as_advance_raises(monkeypatch):
    """With mu = 1e200 the Reference VanDerPol's states overflow in the fourth
    doStep (the third called in C): both paths raise the FMUError of a
    non-finite doStep at t = 0.04 s, with the same values."""
    path = REFERENCE / "fmi2" / "VanDerPol.fmu"
    messages = []
    for compiled in (True, False):
        monkeypatch.setattr(CoSimulationFlow, "compiled_steps", compiled)
        with pytest.raises(FMUError, match="non-finite values. at t = 0.04") as error:
            fmibridge.simulate(
                path, fmi_type="CoSimulation", start_values={"mu": 1e200}
            )
        messages.append(str(error.value))
    assert messages[0] == messages[1]


# Dymola's FMI 1.0 drive train and its input table (step2 jumps at 0.9 s)
CLUTCHES_FMI1 = "Dymola2025xR1_CoupledClutches_fmi1_Cvode.fmu"
CLUTCHES_INPUT = "Dymola2025xR1_CoupledClutches_fmi2_Cvode_in.csv"


@needs_real_fmus
def test_dymolas_fmi1_co_simulation_steps_in_c_as_fmpy_steps_it(monkeypatch):
    """Dymola's FMI 1.0 Co-Simulation drive train with its input table steps in
    C (no Python per step), recording a Real, a Boolean (FMI 1.0's char) and an
    Integer by their C gets: the same rows as `advance`, and fmpy's own values
    up to the input's jump (where fmpy's timing of the jump differs), while the
    first clutch locks and breaks loose."""
    path = real(CLUTCHES_FMI1)
    u = fmpy.read_csv(real(CLUTCHES_INPUT))
    recorded = ["J1_w", "clutch1.locked", "clutch1.mode"]
    compiled, python = both_paths(
        monkeypatch, lambda: fmibridge.simulate_fmu(path, input=u, output=recorded)
    )
    assert_same(compiled, python)
    theirs = fmpy.simulate_fmu(path, input=u, output=recorded)
    np.testing.assert_array_equal(compiled["time"], theirs["time"])
    before = theirs["time"] < 0.9
    for name in recorded:
        np.testing.assert_array_equal(compiled[name][before], theirs[name][before])
    locked = compiled["clutch1.locked"][before]
    assert set(locked) == {0.0, 1.0} and np.count_nonzero(np.diff(locked)) == 2
    assert set(compiled["clutch1.mode"][before]) == {-1.0, 0.0}


@needs_real_fmus
def test_an_fmi1_do_step_that_fails_in_c_raises_as_advance_raises(monkeypatch):
    """With step2 jumping to 1e300 at 0.9 s, Dymola's CVODE fails in the doStep
    from 0.9 s (called in C where the steps are compiled): both paths raise the
    FMUError of fmi1DoStep with the FMU's log (FMI 1.0 has no terminated status
    to end the run early), that doStep the last one logged."""
    jump = [(0.0, 0.0), (0.9, 0.0), (0.9, 1e300), (1.5, 1e300)]
    u = np.array(jump, dtype=[("time", float), ("step2", float)])
    for compiled in (True, False):
        monkeypatch.setattr(CoSimulationFlow, "compiled_steps", compiled)
        calls: list[str] = []
        with pytest.raises(FMUError, match=r"fmi1DoStep returned error\..*CVode"):
            fmibridge.simulate(
                real(CLUTCHES_FMI1), input=u, fmi_call_logger=calls.append
            )
        steps = [call for call in calls if call.startswith("fmi1DoStep(")]
        assert steps[-1].endswith("-> ERROR")
        assert "currentCommunicationPoint=0.9," in steps[-1]
        assert all(step.endswith("-> OK") for step in steps[:-1])
        assert len(steps) == 451  # 0.9 s in steps of 2 ms


@pytest.mark.parametrize(
    "build",
    ["MassSpringStop.fmu", "MassSpringStop_fmi3.fmu", "MassSpringStop_fmi1cs.fmu"],
)
@pytest.mark.parametrize("table", [None, TABLE])
def test_our_fmus_with_and_without_an_input_table(monkeypatch, fmu_dir, build, table):
    """MassSpringStop (FMI 2.0, 3.0, 1.0) with its force F from a table that ramps
    and jumps, on a grid coarser than the step: the same rows on both paths,
    and a = (F - k x - d v) / m (m = 1 kg) jumps with F at 0.5 s: from F(0.49)
    = 1.44 N, held over the step that ends there, to 3 N, set at once."""
    keywords = dict(
        fmi_type="CoSimulation", step_size=0.01, output_interval=0.05, stop_time=1.0
    )
    if table is not None:
        keywords.update(input=table, output=["a", "gap"])
    compiled, python = both_paths(
        monkeypatch, lambda: fmibridge.simulate(fmu_dir / build, **keywords)
    )
    assert_same(compiled, python)
    assert len(compiled.t) == 21 + (table is not None)  # the jump's second row
    if table is not None:
        before, after = compiled.to_pandas().loc[0.5, "a"]
        assert after - before == pytest.approx(3.0 - 1.5 * 0.24 / 0.25, abs=1e-12)


def test_a_run_that_may_undo_steps_says_it_steps_in_python(fmu_dir):
    """Guards may undo steps: `advance` takes them, and the provenance says why."""
    never = (lambda t, x: 1.0 + t, lambda t, x: x)  # a guard that stays positive
    guarded = fmibridge.simulate(
        fmu_dir / "BouncingBall.fmu",
        fmi_type="CoSimulation",
        stop_time=0.5,
        guards=[never],
    )
    assert (
        "steps=python (the run may undo steps: guards)" in guarded.provenance["flows"]
    )


def test_a_couplings_recorded_variables_are_those_its_python_steps_read(fmu_dir):
    """MassSpringStop and PositionController (FMI 2.0 and 3.0) coupled in
    Co-Simulation, recording an output of each: without guards the master reads
    them in C after each step, with a guard that never fires it steps in Python
    and the Recorder asks the master; the rows are the same bit for bit."""
    frames = []
    for guarded in (False, True):
        parts = {
            "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", "cs"),
            "controller": open_fmu(fmu_dir / "PositionController_fmi3.fmu", "cs"),
        }
        loop = [
            ("plant.x", "controller.x_meas"),
            ("plant.v", "controller.v_meas"),
            ("controller.F", "plant.F"),
        ]
        flow = couple(parts, loop)
        flow.record(["plant.a", "plant.gap", "controller.F"])
        never = [Edge(lambda t, x: 10.0 + t, "run", name="never")] if guarded else []
        system = HybridSystem([Mode("run", flow, never)], "run", flow.x0)
        try:
            result = Halving(h=1e-2).run(system, 1.0)
        finally:
            system.close()
        assert flow.steps_in_blocks is not guarded  # no Python per step unguarded
        steps = "steps=python (recorded variables" if guarded else "steps=compiled"
        assert steps in result.provenance["flows"]
        frames.append(result.to_pandas())
    assert len(frames[0]) == 101
    assert np.isfinite(frames[0]["controller.F"]).all()
    pd.testing.assert_frame_equal(frames[0], frames[1])


def test_an_fmu_without_state_saving_steps_compiled_and_replays_later(
    monkeypatch, fmu_dir, tmp_path
):
    """A run without guards never returns to a point it left, so the compiled
    steps take an FMU that cannot save its state (its replay journal dropped
    meanwhile): the same rows as `advance`. A later run with the floor as guard
    starts from its initialisation again, and replays its step beyond the
    floor (`test_cs_guards.test_a_step_beyond_the_guard_is_replayed`)."""
    path = stateless(fmu_dir, "BouncingBall.fmu", tmp_path / "NoState.fmu")
    runs = []
    for compiled in (True, False):
        monkeypatch.setattr(CoSimulationFlow, "compiled_steps", compiled)
        with open_fmu(path, "cs", start={"h": 0.01}) as flow:
            system = HybridSystem([Mode("model", flow)], "model", flow.x0)
            runs.append(Halving(h=0.01).run(system, t_end=0.1))
            guarded = Halving(h=0.1, t_tol=T_TOL).run(ball_on(flow), t_end=0.1)
            assert flow.n_replays == 1
        assert guarded.status is Status.REACHED_END
        assert abs(guarded.events[0].t - impact_times(0.01, 1)[0]) <= T_TOL
    assert_same(*runs)
