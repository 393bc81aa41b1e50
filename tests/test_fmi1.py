"""FMI 1.0 Model Exchange and Co-Simulation, built here from our C (fmus/common/fmi1.c).

An FMI 1.0 FMU offers one interface: `<Model>_fmi1me.fmu` and
`<Model>_fmi1cs.fmu` come from the same C core as the FMI 2.0 and 3.0 builds,
so they must give the same numbers; fmpy's own FMI 1.0 simulation is the
independent reference.
"""

import ctypes

import fmpy
import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from test_fmu_flows import E, ball_on
from test_fmus import MODELS

from fmibridge import FmibridgeError, FMUError, Halving
from fmibridge.flows.fmi import Fmi1Model, Fmi1Slave
from fmibridge.flows.fmu import fmu_system, open_fmu
from fmibridge.models import bouncing_ball_impacts
from fmibridge.simulation import output_times

SUFFIX = {"ModelExchange": "_fmi1me", "CoSimulation": "_fmi1cs"}


def fmi1(fmu_dir, model, interface):
    return fmu_dir / f"{model}{SUFFIX[interface]}.fmu"


def run(path, interface, h, t_end, t_eval=None):
    system = fmu_system(path, interface)
    try:
        return Halving(h=h).run(system, t_end=t_end, t_eval=t_eval)
    finally:
        system.close()


def on_grid(t, grid):
    """The index of the first sample at each grid time (events repeat times)."""
    return np.searchsorted(np.round(t, 9), np.round(grid, 9), side="left")


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("interface", SUFFIX)
def test_every_fmi1_build_validates_and_fmpy_runs_it(fmu_dir, model, interface):
    path = fmi1(fmu_dir, model, interface)
    md = fmpy.read_model_description(path, validate=True)
    assert md.fmiVersion == "1.0"
    assert getattr(md, interface[0].lower() + interface[1:]) is not None
    result = fmpy.simulate_fmu(path, stop_time=0.1, output_interval=0.01)
    assert np.isclose(result["time"][-1], 0.1)
    assert all(np.all(np.isfinite(result[n])) for n in result.dtype.names)


def test_fmi1_instances_are_their_own_classes(fmu_dir):
    with (
        open_fmu(fmi1(fmu_dir, "BouncingBall", "ModelExchange")) as me,
        open_fmu(fmi1(fmu_dir, "BouncingBall", "CoSimulation")) as cs,
    ):
        assert isinstance(me.instance, Fmi1Model)
        assert isinstance(cs.instance, Fmi1Slave)
        assert me.state_names == cs.state_names == ("h", "v")
        # the compiled loops will call these: FMI 1.0 prefixes its C names
        library = ctypes.CDLL(
            str(me.archive.unzipped() / "binaries/linux64/BouncingBall.so")
        )
        expected = ctypes.cast(library.BouncingBall_fmiSetTime, ctypes.c_void_p)
        assert me.instance.c_address("fmiSetTime") == expected.value
        assert (
            me.instance.c_address("fmi1GetReal")
            == ctypes.cast(library.BouncingBall_fmiGetReal, ctypes.c_void_p).value
        )


def test_cs_run_equals_fmpy(fmu_dir):
    """The same doSteps as fmpy: BouncingBallEvents bounces inside them."""
    path = fmi1(fmu_dir, "BouncingBallEvents", "CoSimulation")
    result = run(path, "cs", 0.01, 2.0)
    reference = fmpy.simulate_fmu(path, stop_time=2.0, output_interval=0.01)
    assert len(result.t) == len(reference) == 201
    for k, name in enumerate(("h", "v")):
        np.testing.assert_allclose(result.x[:, k], reference[name], rtol=0, atol=1e-12)


def test_me_run_equals_fmpy_cvode_and_the_fmi2_build(fmu_dir):
    """fmibridge's RK4 (h 1e-3) against fmpy's CVode (rtol 1e-10) on the same
    FMI 1.0 FMU, both locating the FMU's own `when h <= 0` impacts."""
    path = fmi1(fmu_dir, "BouncingBallEvents", "ModelExchange")
    grid = output_times(0.0, 2.0, 0.01)
    result = run(path, "me", 1e-3, 2.0, t_eval=grid)
    reference = fmpy.simulate_fmu(
        path, stop_time=2.0, relative_tolerance=1e-10, output_interval=0.01
    )
    ours, theirs = on_grid(result.t, grid), on_grid(reference["time"], grid)
    assert len(ours) == len(theirs) == 201
    np.testing.assert_allclose(
        result.x[ours, 0], reference["h"][theirs], rtol=0, atol=1e-6
    )
    fmi2 = run(fmu_dir / "BouncingBallEvents.fmu", "me", 1e-3, 2.0, t_eval=grid)
    np.testing.assert_array_equal(result.event_times, fmi2.event_times)
    np.testing.assert_allclose(result.x, fmi2.x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["BouncingBall_fmi1me.fmu", "BouncingBall.fmu"])
def test_guard_and_reset_locate_impacts_as_fmi2_does(fmu_dir, name):
    flow = open_fmu(fmu_dir / name, "me")
    system = ball_on(flow)
    try:
        result = Halving(h=1e-3).run(system, t_end=3.0)
    finally:
        system.close()
    errors = result.event_times[:5] - bouncing_ball_impacts(5, e=E)
    assert np.max(np.abs(errors)) < 1e-8, errors


def test_guard_on_fmi1_cs_is_located_without_rollback(fmu_dir):
    """FMI 1.0 has no FMU state: Halving steps it forward only, short of the
    extrapolated crossing (tests/test_cs_guards.py), and never goes back."""
    with open_fmu(fmi1(fmu_dir, "BouncingBall", "CoSimulation")) as flow:
        assert flow.forward_only
        result = Halving(h=0.1).run(ball_on(flow), t_end=3.0)
        assert flow.n_replays == 0
    errors = result.event_times - bouncing_ball_impacts(6, e=E)
    assert np.max(np.abs(errors)) <= 2e-10, errors  # measured 1.5e-10 (t_tol 1e-10)


def test_our_fmi1_fmus_refuse_illegal_calls(fmu_dir):
    with open_fmu(fmi1(fmu_dir, "BouncingBall", "ModelExchange")) as me:
        g = me.archive.variables["g"].vr  # a parameter: fixed after fmiInitialize
        with pytest.raises(FMUError, match=r"fmi1SetReal returned error.*phase"):
            me.instance.set_reals([g], [1.0])
    with open_fmu(fmi1(fmu_dir, "BouncingBall", "CoSimulation")) as cs:
        with pytest.raises(FMICallException, match="fmi1DoStep failed"):
            cs.instance._fmu.doStep(0.0, 0.1, newStep=False)  # cannot repeat a step
        assert "canRejectSteps is false" in cs.instance.log_tail()


def test_states_out_of_the_fmus_order_are_refused(fmu_dir):
    """FMI 1.0 has no ModelStructure: fmiGetStateValueReferences decides."""
    with pytest.raises(FmibridgeError, match=r"state vector is \['h', 'v'\], not"):
        open_fmu(fmi1(fmu_dir, "BouncingBall", "ModelExchange"), states=("v", "h"))


def test_a_second_run_on_an_fmu_without_state_saving_repeats_the_first(fmu_dir):
    """An FMI 1.0 Co-Simulation FMU cannot save its state; a second run on the
    same open system starts where the first started: the FMU reset and
    initialised again with the same values (it said "fmiGetFMUstate returned
    missing" before). Both runs give the same samples and impacts bit for bit,
    the impacts at the exact times."""
    flow = open_fmu(fmi1(fmu_dir, "BouncingBall", "CoSimulation"), "cs")
    system = ball_on(flow)
    try:
        first, second = (Halving(h=1e-3).run(system, 2.0) for _ in range(2))
    finally:
        system.close()
    assert np.array_equal(first.t, second.t) and np.array_equal(first.x, second.x)
    assert np.array_equal(first.event_times, second.event_times)
    exact = bouncing_ball_impacts(3, h0=1.0, e=E)
    assert len(first.event_times) == 3
    assert np.max(np.abs(first.event_times - exact)) < 1e-9


def test_a_replay_that_differs_names_fmi1s_reset(fmu_dir):
    """An FMI 1.0 Co-Simulation FMU is reset by fmiResetSlave: a replay that
    misses the states names that function (it said fmi3Reset)."""
    with open_fmu(fmi1(fmu_dir, "BouncingBall", "CoSimulation")) as flow:
        x1 = flow.advance(0.0, flow.x0, 0.1, None)
        flow.advance(0.1, x1, 0.1, None)
        generation, n, outputs = flow._marks[(0.1, x1.tobytes())]
        flow._marks[(0.1, x1.tobytes())] = (generation, n - 1, outputs)  # no doStep
        with pytest.raises(FMUError, match=r"fmiResetSlave returned replay differs"):
            flow.goto(0.1, x1)
