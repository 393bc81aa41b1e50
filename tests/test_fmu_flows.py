"""FMU flows through fmpy on real FMUs built here: ME and CS, FMI 2.0 and 3.0."""

import shutil
import zipfile

import numpy as np
import pytest

from fmibridge import Edge, FmibridgeError, FMUError, Guard, Halving, HybridSystem, Mode
from fmibridge.core._functions import PythonVector
from fmibridge.flows.fmu import (
    CoSimulationFlow,
    ModelExchangeFlow,
    fmu_system,
    open_fmu,
)
from fmibridge.models import bouncing_ball, bouncing_ball_impacts

E = 0.8


def copy_fmu(source, target, rewrite):
    """Copy an FMU archive, passing each entry's (name, bytes) through `rewrite`."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            dst.writestr(*rewrite(item.filename, src.read(item)))


def ball_on(flow):
    """The bouncing-ball hybrid system over any flow with states (h, v)."""
    floor = Edge(
        Guard(lambda t, x: x[0], name="floor"),
        "flight",
        lambda t, x: np.array([x[0], -E * x[1]]),
    )
    return HybridSystem(
        [Mode("flight", flow, (floor,))], "flight", flow.x0, name="ball"
    )


@pytest.mark.parametrize("variant", ["native", "2.0-me", "2.0-cs", "3.0-me", "3.0-cs"])
def test_same_ball_everywhere_gives_exact_impacts(fmu_dir, variant):
    if variant == "native":
        system = bouncing_ball(e=E)
    else:
        version, interface = variant.split("-")
        name = "BouncingBall.fmu" if version == "2.0" else "BouncingBall_fmi3.fmu"
        flow = open_fmu(fmu_dir / name, interface)
        assert flow.archive.fmi_version == version
        system = ball_on(flow)
    try:
        result = Halving(h=1e-3).run(system, t_end=3.0)
    finally:
        system.close()
    errors = result.event_times[:5] - bouncing_ball_impacts(5, e=E)
    # ME: our RK4 on a parabola is exact; CS: the FMU's RK4 substep is exact too
    assert np.max(np.abs(errors)) < 1e-8, errors


@pytest.mark.parametrize(
    "name", ["BouncingBallEvents.fmu", "BouncingBallEvents_fmi3.fmu"]
)
def test_fmu_internal_impacts_need_no_python_guard(fmu_dir, name):
    system = fmu_system(fmu_dir / name, "me")
    try:
        result = Halving(h=1e-3).run(system, t_end=4.0)
    finally:
        system.close()
    assert [e.edge for e in result.events[:10]] == ["fmu_event_0"] * 10
    errors = result.event_times[:10] - bouncing_ball_impacts(10)
    assert np.max(np.abs(errors)) < 1e-8, errors
    after = np.array([e.x_after[1] for e in result.events[:10]])
    before = np.array([e.x_before[1] for e in result.events[:10]])
    np.testing.assert_allclose(after, -E * before, rtol=1e-12)


def test_co_simulation_rollback_repeats_a_step_bit_for_bit(fmu_dir):
    with open_fmu(fmu_dir / "BouncingBall.fmu", "cs") as flow:
        x0 = flow.x0
        first = flow.advance(0.0, x0, 0.1, None)
        flow.advance(0.1, first, 0.1, None)
        again = flow.advance(0.0, x0, 0.1, None)  # restores the saved state at t = 0
    assert np.array_equal(first, again)


def test_co_simulation_reset_enters_a_new_state(fmu_dir):
    with open_fmu(fmu_dir / "BouncingBall_fmi3.fmu", "cs") as flow:
        y = flow.advance(0.0, flow.x0, 0.1, None)
        y_new = flow.advance(0.1, np.array([y[0], 3.0]), 0.1, None)
    assert y_new[0] == pytest.approx(y[0] + 3.0 * 0.1 - 9.81 * 0.01 / 2, rel=1e-12)


# -- bad input: one clear error naming the file and the item -----------------------


def test_missing_fmu(tmp_path):
    with pytest.raises(FmibridgeError, match="nothere.fmu: no such FMU file"):
        open_fmu(tmp_path / "nothere.fmu")


def test_corrupt_fmu(tmp_path):
    path = tmp_path / "broken.fmu"
    path.write_bytes(b"not a zip")
    with pytest.raises(FmibridgeError, match="broken.fmu: not an FMU"):
        open_fmu(path)


def test_fmu_without_binary_for_this_platform(fmu_dir, tmp_path):
    path = tmp_path / "windows_only.fmu"

    def windows_only(name, data):
        name = name.replace("binaries/linux64/", "binaries/win64/")
        return name.replace(".so", ".dll"), data

    copy_fmu(fmu_dir / "BouncingBall.fmu", path, windows_only)
    with pytest.raises(
        FMUError, match=r"windows_only.fmu: binaries returned missing.*win64"
    ):
        open_fmu(path, "me")


def test_unknown_parameter_is_named(fmu_dir):
    with pytest.raises(
        FmibridgeError, match=r"BouncingBall.fmu: no variable 'gravity'"
    ):
        open_fmu(fmu_dir / "BouncingBall.fmu", "me", parameters={"gravity": 1.0})


def test_nan_from_the_fmu_is_an_error(fmu_dir):
    # m = 0 makes der(v) = -g + lam/m = NaN inside the FMU
    with open_fmu(fmu_dir / "BouncingBall.fmu", "me", parameters={"m": 0.0}) as flow:
        with pytest.raises(
            FMUError, match="BouncingBall.fmu: get derivatives returned non-finite"
        ):
            Halving(h=0.1).run(ball_on(flow), t_end=1.0)


def test_huge_finite_derivatives_are_not_an_error(fmu_dir):
    # der(h) = v and der(v) = lam/m - g sum to inf: the check must look closer
    with open_fmu(fmu_dir / "BouncingBall.fmu", "me", inputs={"lam": 1e308}) as flow:
        dx = flow.rhs(0.0, np.array([1.0, 1e308]))
    assert dx[0] == 1e308 and dx[1] == pytest.approx(1e308)


def test_fmu_call_returning_error_names_the_function(fmu_dir):
    with open_fmu(fmu_dir / "BouncingBall.fmu", "cs") as flow:
        g = flow.archive.variables["g"].vr  # fixed parameter: not settable after init
        with pytest.raises(
            FMUError, match=r"BouncingBall.fmu: fmi2SetReal returned error"
        ):
            flow.instance.set_reals([g], [1.0])


def without_state_saving(fmu_dir, path):
    """Our BouncingBall with canGetAndSetFMUstate false in its description."""

    def rewrite(name, data):
        if name == "modelDescription.xml":
            flag = b'canGetAndSetFMUstate="%s"'
            data = data.replace(flag % b"true", flag % b"false")
        return name, data

    copy_fmu(fmu_dir / "BouncingBall.fmu", path, rewrite)
    return path


def test_plain_cs_run_needs_no_state_saving(fmu_dir, tmp_path):
    """Without guards nothing is undone: the same samples, bit for bit, with
    and without canGetAndSetFMUstate."""
    stateless = without_state_saving(fmu_dir, tmp_path / "NoState.fmu")
    runs = []
    for path in (fmu_dir / "BouncingBall.fmu", stateless):
        system = fmu_system(path, "cs")
        try:
            runs.append(Halving(h=0.01).run(system, t_end=0.4))
        finally:
            system.close()
    assert runs[1].status.is_success and len(runs[1].t) == 41
    np.testing.assert_array_equal(runs[0].x, runs[1].x)


def test_flows_are_the_right_kind(fmu_dir):
    with (
        open_fmu(fmu_dir / "BouncingBall.fmu", "me") as me,
        open_fmu(fmu_dir / "BouncingBall.fmu", "cs") as cs,
    ):
        assert isinstance(me, ModelExchangeFlow) and isinstance(cs, CoSimulationFlow)
        assert me.variables(0.0, np.array([0.5, 1.0]))["h"] == 0.5
    assert shutil.which("gcc")  # the FMUs above were compiled here


def test_unilateral_refuses_an_fmus_own_events(fmu_dir):
    """Unilateral stays short of the surface: the FMU's `when h <= 0` never fires."""
    from fmibridge.methods.unilateral import Unilateral

    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        with pytest.raises(
            FmibridgeError, match="edge 'fmu_event_0' .* must be reset beyond"
        ):
            Unilateral().run(system, t_end=1.0)
    finally:
        system.close()


@pytest.mark.parametrize("name", ["BouncingBall.fmu", "BouncingBall_fmi3.fmu"])
def test_unilateral_drives_model_exchange_fmus_from_one_side(fmu_dir, name):
    from fmibridge.methods.unilateral import Unilateral

    flow = open_fmu(fmu_dir / name, "me")
    seen = []
    fmu_rhs = flow.rhs_function()  # the FMU's C calls; record every evaluation
    recorded = PythonVector(
        lambda t, x: (seen.append(x[0]), fmu_rhs(t, x))[1], 2, 2, "recorded rhs"
    )
    flow.rhs_function = lambda: recorded
    system = ball_on(flow)
    try:
        result = Unilateral(h=0.05, tol=1e-8).run(system, t_end=3.0)
    finally:
        system.close()
    assert min(seen) >= 0.0 and result["h"].min() >= 0.0  # never beyond the floor
    errors = result.event_times[:5] - bouncing_ball_impacts(5, e=E)
    # each impact is declared early, inside the band 2 beta ~ 3e-7 m: ~5e-8 s per bounce
    assert np.all(errors < 0) and np.max(np.abs(errors)) < 3e-7, errors


@pytest.mark.parametrize(
    "name", ["BouncingBallEvents.fmu", "BouncingBallEvents_fmi3.fmu"]
)
def test_co_simulation_fmu_handles_its_own_impacts_inside_do_step(fmu_dir, name):
    system = fmu_system(fmu_dir / name, "cs")
    try:
        result = Halving(h=1e-2).run(system, t_end=3.0)
    finally:
        system.close()
    impacts = bouncing_ball_impacts(10)
    k = np.searchsorted(impacts, 3.0) - 1  # the last impact before t = 3
    v_after, dt = np.sqrt(2 * 9.81) * E ** (k + 1), 3.0 - impacts[k]
    assert result["h"][-1] == pytest.approx(v_after * dt - 9.81 * dt**2 / 2, abs=1e-9)
    assert result["h"].min() > 0.0  # sampled at communication points, never inside
