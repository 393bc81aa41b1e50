"""Guards on Co-Simulation FMUs that cannot save their state (issue 27).

Our BouncingBall and MassSpringStop, built from fmus/ with canGetAndSetFMUstate
false in their description (the C is the same, fmiReset works), BouncingBall's
bare Co-Simulation builds (`bare_cosimulation` in model.toml: the C refuses
state saving and fmiReset), and a pythonfmu cart (CS only, no state saving by
default). Halving steps them forward only: each
communication step stops short of the guard's crossing extrapolated from the
guard's values at past communication points (Esposito and Kumar's control law
on the communication step), and the crossing is taken by a step of t_tol. A
step that still lands beyond is undone by replay (fmiReset and the same calls).
"""

import math
import re
import warnings

import numpy as np
import pytest
from test_coupled import LOOP, with_stop
from test_fmu_flows import E, ball_on, copy_fmu

from fmibridge import Halving, Relaxation
from fmibridge.core.errors import FmibridgeWarning, FMUError
from fmibridge.core.result import Status
from fmibridge.core.system import Edge, Guard, HybridSystem, Mode
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import fmu_system, open_fmu
from fmibridge.flows.mode_inputs import mode_inputs

G, T_TOL = 9.81, 1e-10


def stateless(fmu_dir, name, path):
    """Our FMU `name` with state saving off in its description (FMI 2 and 3)."""

    def rewrite(member, data):
        if member == "modelDescription.xml":
            for flag in (b"canGetAndSetFMUstate", b"canGetAndSetFMUState"):
                data = data.replace(flag + b'="true"', flag + b'="false"')
        return member, data

    copy_fmu(fmu_dir / name, path, rewrite)
    return path


def counted(flow):
    """Count the FMU's doSteps (a wrapper around the real call)."""
    count, do_step = [0], flow.instance.do_step

    def step(*args):
        count[0] += 1
        return do_step(*args)

    flow.instance.do_step = step
    return count


def impact_times(h0, n):
    """The bouncing ball's first n impacts from rest at h0 (restitution E)."""
    t, v, times = math.sqrt(2 * h0 / G), math.sqrt(2 * G * h0), []
    for _ in range(n):
        times.append(t)
        v *= E
        t += 2 * v / G
    return np.array(times)


@pytest.mark.parametrize("name", ["BouncingBall.fmu", "BouncingBall_fmi3.fmu"])
def test_impacts_located_to_t_tol_without_rollback(fmu_dir, tmp_path, name):
    """Six impacts within 2 t_tol of the analytic times, no replay, and about
    five doSteps more per impact than the plain run's 300."""
    path = stateless(fmu_dir, name, tmp_path / name)
    with open_fmu(path, "cs") as flow:
        assert flow.forward_only
        steps = counted(flow)
        result = Halving(h=0.01, t_tol=T_TOL).run(ball_on(flow), t_end=3.0)
        replays = flow.n_replays
    assert result.status is Status.REACHED_END
    times = np.array([e.t for e in result.events])
    assert len(times) == 6
    errors = np.abs(times - impact_times(1.0, 6))
    assert errors[0] <= T_TOL  # measured 5.1e-11
    assert errors.max() <= 2 * T_TOL  # measured 1.5e-10 (each event at most t_tol late)
    assert replays == 0
    assert 300 < steps[0] <= 300 + 7 * len(times)  # measured 334


def test_a_step_beyond_the_guard_is_replayed(fmu_dir, tmp_path):
    """From rest at h = 0.01 m the ball lands at 0.045 s. After the probe step
    (h / 16) the line through two points, both near rest, puts the floor at
    0.33 s; a quarter of that lands beyond it: the FMU is reset and replayed
    to t = 0, and the crossing located from the bracket."""
    path = stateless(fmu_dir, "BouncingBall.fmu", tmp_path / "NoState.fmu")
    with open_fmu(path, "cs", start={"h": 0.01}) as flow:
        result = Halving(h=0.1, t_tol=T_TOL).run(ball_on(flow), t_end=0.1)
        replays = flow.n_replays
    assert result.status is Status.REACHED_END
    assert replays == 1
    assert abs(result.events[0].t - impact_times(0.01, 1)[0]) <= T_TOL


def test_a_replay_past_the_kept_journal_stops_saying_so(fmu_dir, tmp_path, monkeypatch):
    """The journal keeps MAX_JOURNAL calls (memory bound); with 2, the replay of
    test_a_step_beyond_the_guard_is_replayed is no longer possible."""
    monkeypatch.setattr("fmibridge.flows.fmu.MAX_JOURNAL", 2)
    path = stateless(fmu_dir, "BouncingBall.fmu", tmp_path / "NoState.fmu")
    with open_fmu(path, "cs", start={"h": 0.01}) as flow:
        with pytest.warns(FmibridgeWarning, match="went beyond a guard"):
            result = Halving(h=0.1, t_tol=T_TOL).run(ball_on(flow), t_end=0.1)
    assert result.status is Status.OVERSTEPPED
    assert "(more than 2) are no longer kept" in result.detail


def test_a_state_left_on_the_guard_is_stepped_by_t_tol_not_replayed(fmu_dir, tmp_path):
    """A reset to rest on the floor, with gravity still on: the guard is
    crossed at once after each event. From the surface the step is t_tol, so
    each crossing is bracketed without going back; the run stops as the
    chatter it is."""
    path = stateless(fmu_dir, "BouncingBall.fmu", tmp_path / "NoState.fmu")
    with open_fmu(path, "cs") as flow:
        stop = Edge(
            Guard(lambda t, x: x[0], name="floor"), "flight", lambda t, x: np.zeros(2)
        )
        system = HybridSystem([Mode("flight", flow, (stop,))], "flight", flow.x0)
        with pytest.warns(FmibridgeWarning, match="chatters"):
            result = Halving(h=0.01, t_tol=T_TOL).run(system, t_end=1.0)
        replays = flow.n_replays
    assert result.status is Status.ZENO
    assert replays == 0
    assert abs(result.events[0].t - impact_times(1.0, 1)[0]) <= T_TOL
    assert result.events[-1].t - result.events[0].t <= 50 * T_TOL  # 50 events


def test_mode_switch_of_an_input_at_the_crossing(fmu_dir, tmp_path):
    """At the floor the ball stops (a reset to rest) and the mode 'held' sets
    the input lam = m g: it then stays at h = 0 exactly."""
    path = stateless(fmu_dir, "BouncingBall.fmu", tmp_path / "NoState.fmu")
    with open_fmu(path, "cs") as fmu:
        flight = mode_inputs(fmu, {"lam": 0.0}, {}, "flight")
        held = mode_inputs(fmu, {"lam": G}, {}, "held")
        land = Edge(
            Guard(lambda t, x: x[0], name="floor"), "held", lambda t, x: np.zeros(2)
        )
        system = HybridSystem(
            [Mode("flight", flight, (land,)), Mode("held", held, ())],
            "flight",
            flight.x0,
        )
        result = Halving(h=0.01, t_tol=T_TOL).run(system, t_end=1.0)
        replays = fmu.n_replays
    assert result.status is Status.REACHED_END
    assert [e.target for e in result.events] == ["held"]
    assert abs(result.events[0].t - impact_times(1.0, 1)[0]) <= T_TOL
    assert replays == 0
    np.testing.assert_array_equal(result.x[-1], [0.0, 0.0])


def test_mass_spring_stop_agrees_with_model_exchange(fmu_dir, tmp_path):
    """A guard that no quadratic extrapolates exactly (x(t) is a damped sine):
    the four impacts agree with the Model Exchange run to 2 t_tol, no replay."""

    def system(flow):
        stop = Edge(
            Guard(lambda t, x: 1.0 - x[0], name="stop"),
            "free",
            lambda t, x: np.array([x[0], -0.6 * x[1]]),
        )
        return HybridSystem([Mode("free", flow, (stop,))], "free", flow.x0)

    path = stateless(fmu_dir, "MassSpringStop.fmu", tmp_path / "NoState.fmu")
    with open_fmu(fmu_dir / "MassSpringStop.fmu", "me", inputs={"F": 6.0}) as me:
        reference = Halving(h=1e-3, t_tol=T_TOL).run(system(me), t_end=3.0)
    with open_fmu(path, "cs", inputs={"F": 6.0}) as flow:
        result = Halving(h=0.1, t_tol=T_TOL).run(system(flow), t_end=3.0)
        replays = flow.n_replays
    assert len(result.events) == len(reference.events) == 4
    errors = np.abs(result.event_times - reference.event_times)
    assert errors.max() <= 2 * T_TOL  # measured 1.6e-10
    assert replays == 0


def test_cs_coupling_without_state_saving(fmu_dir, tmp_path):
    """The plant and controller of tests/test_coupled.py in Co-Simulation, both
    without state saving: the seven impacts at the stop agree with the same
    coupling that saves its states (halved steps) to 1e-4 s, both within the
    coupling error (2.6e-3 s at h = 1e-2) of the single Model Exchange FMU,
    and no FMU is ever replayed."""

    def run(plant, controller):
        paths = {"plant": plant, "controller": controller}
        parts = {name: open_fmu(path, "cs") for name, path in paths.items()}
        system = with_stop(couple(parts, LOOP))
        try:
            result = Halving(h=1e-2).run(system, 10.0)
            return result, sum(flow.n_replays for flow in parts.values())
        finally:
            system.close()

    plant, controller = "MassSpringStop.fmu", "PositionController_fmi3.fmu"
    saved, _ = run(fmu_dir / plant, fmu_dir / controller)
    forward, replays = run(
        stateless(fmu_dir, plant, tmp_path / "P.fmu"),
        stateless(fmu_dir, controller, tmp_path / "C.fmu"),
    )
    single = with_stop(open_fmu(fmu_dir / "ControlledMassSpringStop.fmu", "me"), "")
    try:
        reference = Halving(h=1e-3).run(single, 10.0)
    finally:
        single.close()
    assert forward.status.is_success and len(forward.events) == len(saved.events) == 7
    assert np.abs(forward.event_times - saved.event_times).max() <= 1e-4  # 2.0e-5
    assert np.abs(forward.event_times - reference.event_times).max() <= 3e-3  # 2.6e-3
    assert replays == 0


def test_pythonfmu_cart_switches_its_push_at_a_located_crossing(cart):
    """The cart (no states the master sees: a guard on its output x) passes
    x = 0.5 towards the spring; there the push F switches from 0 to 4 N. The
    crossing is bracketed by a last step of at most t_tol: x there is within
    |v| t_tol of 0.5, and the FMU never went back."""
    with open_fmu(cart, "cs", outputs=None) as fmu:
        assert fmu.forward_only and fmu.state_names == ()
        free = mode_inputs(fmu, {"F": 0.0}, {}, "free")
        pushed = mode_inputs(fmu, {"F": 4.0}, {}, "pushed")
        half = Edge(
            Guard(lambda t, x: fmu.variables(t, x)["x"] - 0.5, name="half"), "pushed"
        )
        system = HybridSystem(
            [Mode("free", free, (half,)), Mode("pushed", pushed, ())], "free", free.x0
        )
        result = Halving(h=0.05, t_tol=1e-9).run(system, t_end=3.0)
        replays = fmu.n_replays
    assert result.status is Status.REACHED_END
    assert len(result.events) == 1
    event = result.events[0]
    x_event = result.outputs["x"][list(result.t).index(event.t)]
    v_event = result.outputs["v"][list(result.t).index(event.t)]
    assert 0.0 < 0.5 - x_event <= abs(v_event) * 1e-9 * 1.01
    assert replays == 0
    # pushed, it settles towards F / k = 1 m
    assert result.outputs["x"][-1] > 0.8


BARE = ["BouncingBall_cs_bare.fmu", "BouncingBall_fmi3_cs_bare.fmu"]


@pytest.mark.parametrize("name", BARE)
def test_bare_build_runs_as_fmpy_does(fmu_dir, name):
    """`bare_cosimulation = true` in model.toml: a CS-only build whose C refuses
    fmiGetFMUstate and fmiReset. Without guards it runs sample for sample as
    fmpy runs it."""
    fmpy = pytest.importorskip("fmpy")
    path = fmu_dir / name
    with open_fmu(path) as flow:
        assert flow.archive.interfaces == ("CoSimulation",)
        assert flow.forward_only
        with pytest.raises(FMUError, match="Reset returned error"):
            flow.instance.reset()
    system = fmu_system(path)
    try:
        result = Halving(h=0.01).run(system, t_end=1.0)
    finally:
        system.close()
    reference = fmpy.simulate_fmu(str(path), stop_time=1.0, output_interval=0.01)
    assert result.status.is_success and len(result.t) == len(reference) == 101
    np.testing.assert_array_equal(result.t, reference["time"])
    np.testing.assert_array_equal(result.x[:, 0], reference["h"])
    assert result.x[-1, 0] < 0.0  # no guard: the ball falls through the floor


@pytest.mark.parametrize("name", BARE)
def test_bare_build_switches_an_input_at_a_located_crossing(fmu_dir, name):
    """At the floor the mode 'pushed' sets lam = 3 m g: a reset that sets only
    an input, so neither state saving nor fmiReset is needed. The crossing is
    at the analytic time to t_tol, and the ball then rises at 2 g."""
    with open_fmu(fmu_dir / name) as fmu:
        flight = mode_inputs(fmu, {"lam": 0.0}, {}, "flight")
        pushed = mode_inputs(fmu, {"lam": 3 * G}, {}, "pushed")
        land = Edge(Guard(lambda t, x: x[0], name="floor"), "pushed")
        system = HybridSystem(
            [Mode("flight", flight, (land,)), Mode("pushed", pushed, ())],
            "flight",
            flight.x0,
        )
        result = Halving(h=0.01, t_tol=T_TOL).run(system, t_end=1.0)
    assert result.status is Status.REACHED_END
    t_floor = impact_times(1.0, 1)[0]
    assert abs(result.events[0].t - t_floor) <= T_TOL  # measured 5.0e-11
    v_floor = -G * t_floor
    np.testing.assert_allclose(
        result.x[-1, 1], v_floor + 2 * G * (1.0 - t_floor), rtol=1e-9
    )


@pytest.mark.parametrize("name", BARE)
def test_bare_build_refuses_a_reset_of_its_states_naming_them(fmu_dir, name):
    with open_fmu(fmu_dir / name) as flow:
        with pytest.raises(
            FMUError,
            match=r"Reset returned error.*sets the state variables 'h', 'v' at "
            r"t = 0\.4515236.*refuses them in Step Mode.*only inputs or tunable",
        ):
            Halving(h=0.01).run(ball_on(flow), t_end=1.0)


@pytest.mark.parametrize("name", BARE)
def test_bare_build_stepped_beyond_a_guard_stops_saying_so(fmu_dir, name):
    """From h = 0.01 m the second step lands beyond the floor (as in
    test_a_step_beyond_the_guard_is_replayed); this FMU cannot go back."""
    with open_fmu(fmu_dir / name, start={"h": 0.01}) as flow:
        with pytest.warns(FmibridgeWarning, match="went beyond a guard"):
            result = Halving(h=0.1, t_tol=T_TOL).run(ball_on(flow), t_end=0.1)
    assert result.status is Status.OVERSTEPPED
    assert result.t[-1] < impact_times(0.01, 1)[0]  # stopped before the floor
    assert re.search(
        r"Reset returned error.*crossed guard 'floor' \(g = 0\.0098.* -> -0\.026",
        result.detail,
    )


@pytest.mark.parametrize("name", BARE)
def test_relaxation_on_a_bare_build_stops_and_points_to_halving(fmu_dir, name):
    """Relaxation returns to the step's start when a step ends beyond the strip;
    this FMU cannot. The run stops there (not an exception), keeps its samples
    and says which method steps forward only."""
    with open_fmu(fmu_dir / name) as flow:
        with pytest.warns(FmibridgeWarning, match="Run stopped"):
            result = Relaxation(h=0.01, eps=1e-6).run(ball_on(flow), t_end=1.0)
    assert result.status is Status.OVERSTEPPED
    t_floor = impact_times(1.0, 1)[0]
    assert t_floor - 0.01 < result.t[-1] < t_floor  # the last step before the floor
    assert result.events == ()
    assert "Halving steps such an FMU forward only" in result.detail


def stop_with_approach(flow):
    """The plant's stop as an impact edge: bounce v -> -e v only while the
    mass approaches the stop (v_n = d(gap)/dt = -v < 0)."""
    ix, iv = flow.state_names.index("plant.x"), flow.state_names.index("plant.v")

    def bounce(t, x):
        y = x.copy()
        y[iv] = -0.6 * x[iv]
        return y

    stop = Edge(
        Guard(lambda t, x: 1.0 - x[ix], "falling", name="gap"),
        "run",
        bounce,
        "stop",
        approach=lambda t, x: -x[iv],
    )
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def pressed_into_the_stop(fmu_dir, interface, h):
    """The controller's reference held at 1.4 m, beyond the stop at 1 m: it
    presses the mass into the stop, and the impacts accumulate."""
    parts = {
        "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", interface),
        "controller": open_fmu(
            fmu_dir / "PositionController_fmi3.fmu",
            interface,
            parameters={"r0": 1.4, "R": 0.0},
        ),
    }
    system = stop_with_approach(couple(parts, LOOP))
    try:
        with pytest.warns(FmibridgeWarning, match="Zeno"):
            result = Halving(h=h).run(system, 5.0)
    finally:
        system.close()
    assert result.status is Status.ZENO
    accumulation = float(re.search(r"accumulate at t = ([0-9.]+)", result.detail)[1])
    return result, accumulation


def test_impacts_across_cs_components_never_reset_a_receding_body(fmu_dir):
    """In CS the coupling error leaves the mass beyond the stop while it
    already recedes; without the impact law's precondition those crossings
    reset it back into the stop (11 of 56 resets at h = 1e-3, then chatter).
    With it they are grazes: every impact is on an approaching mass, and the
    first impact and the accumulation agree with the Model Exchange coupling to
    the coupling error, which shrinks with h (measured: first impact 3.5e-3 s,
    3.5e-4 s; accumulation 1.1e-2 s, 1.0e-3 s at h = 1e-2, 1e-3)."""
    me, t_me = pressed_into_the_stop(fmu_dir, "me", 1e-3)
    iv = me.state_names.index("plant.v")
    errors = []
    for h in (1e-2, 1e-3):
        cs, t_cs = pressed_into_the_stop(fmu_dir, "cs", h)
        assert all(e.x_before[iv] > 0.0 for e in cs.events)  # approaching, each
        assert cs.stats["n_grazes"] >= 1 and "stop" in cs.provenance["grazes"]
        assert "without an approach" in cs.detail
        errors.append((abs(cs.events[0].t - me.events[0].t), abs(t_cs - t_me)))
    assert errors[0][0] <= 5e-3 and errors[1][0] <= 5e-4
    assert errors[0][1] <= 2e-2 and errors[1][1] <= 2e-3
    assert errors[1][1] < errors[0][1] / 5  # first order in h


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_approach_of_the_wrong_sign_is_not_silent(sign):
    """The ball's floor with approach v (closing: v < 0) fires its impact; with
    -v every crossing is a graze, and the run says the sign may be wrong."""
    from fmibridge.flows.native import NativeFlow

    flow = NativeFlow(lambda t, x: np.array([x[1], -9.81]), ["h", "v"])
    floor = Edge(
        Guard(lambda t, x: x[0], "falling", name="floor"),
        "flight",
        lambda t, x: np.array([x[0], -0.8 * x[1]]),
        approach=lambda t, x: sign * x[1],
    )
    ball = HybridSystem([Mode("flight", flow, [floor])], "flight", {"h": 1.0, "v": 0.0})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FmibridgeWarning)
        result = Halving(h=1e-3).run(ball, 1.0)
    said = [str(w.message) for w in caught if "were grazes" in str(w.message)]
    if sign > 0:
        assert len(result.events) == 1 and not said
        assert abs(result.event_times[0] - 0.4515236409857) < 1e-9
    else:
        assert not result.events and result.stats["n_grazes"] > 0
        assert len(said) == 1 and "the approach has the wrong sign" in said[0]
