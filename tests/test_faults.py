"""Fault injection: each way a run could be silently wrong, and each bad input.

Every case asserts the exact Status (with the detail that names what is at
fault) or the exact error. Oracles: the flat ball's Zeno time
sqrt(2 h0/g)(1+e)/(1-e), the exact forced oscillator with a stop (Burden et al.,
eq. 28), and the sine ball's accumulation extrapolated from impacts located to
1e-12 s. Runs that chatter or stick stop within a few hundred attempts.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from test_fmu_flows import copy_fmu

from fmibridge import (
    Edge,
    FmibridgeError,
    FmibridgeWarning,
    Guard,
    Halving,
    HybridSystem,
    Mode,
    NativeFlow,
    Relaxation,
    Unilateral,
)
from fmibridge.cli import main
from fmibridge.core.result import Status
from fmibridge.flows.base import Flow
from fmibridge.flows.compiled import CompiledFlow
from fmibridge.methods import Completion
from fmibridge.models import bouncing_ball, bouncing_ball_zeno_time, forced_oscillator
from fmibridge.models.lagrangian import to_hybrid
from fmibridge.models.or_ames import sine_ball
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution

ZENO = bouncing_ball_zeno_time()  # 4.0637 s: h0 = 1 m, g = 9.81, e = 0.8


def quietly(method, system, t_end):
    """Run, returning the Result and the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = method.run(system, t_end)
    return result, [str(w.message) for w in caught]


def ball(*, f=None, guard=None, reset=None):
    """The bouncing ball with one of its user functions replaced."""
    f = f or (lambda t, x: np.array([x[1], -9.81]))
    floor = Guard(guard or (lambda t, x: x[0]), name="floor")
    reset = reset or (lambda t, x: np.array([x[0], -0.8 * x[1]]))
    flow = NativeFlow(f, ["h", "v"])
    return HybridSystem(
        [Mode("flight", flow, [Edge(floor, "flight", reset)])], "flight", [1.0, 0.0]
    )


METHODS = [
    Halving(h=1e-2),
    Halving(h=1e-2, locate="illinois"),
    Relaxation(h=1e-2, eps=1e-6),
    Unilateral(),
]
IDS = ["halving", "illinois", "relaxation", "unilateral"]


# -- 1. Zeno without completion: stop at the accumulation point, say how to go on --


def test_fmu_ball_past_its_zeno_time_stops_there_instead_of_falling(fmu_dir, tmp_path):
    """Past its Zeno time the ball would fall through the floor with "Reached
    t_end": the run stops there and says how to complete it."""
    out = tmp_path / "x.csv"
    fmu = str(fmu_dir / "BouncingBallEvents.fmu")
    with pytest.warns(FmibridgeWarning, match="--zeno complete"):
        assert (
            main(["run", fmu, "--t-end", "30", "--no-progress", "--out", str(out)]) == 1
        )
    frame = pd.read_csv(out, index_col="time")
    assert ZENO - 5e-3 < frame.index[-1] < ZENO and frame["h"].min() > -1e-9


def test_fmu_ball_zeno_status_names_time_events_and_indicator(fmu_dir):
    from fmibridge.flows.fmu import fmu_system

    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        result, _ = quietly(Halving(), system, 30.0)
    finally:
        system.close()
    assert result.status is Status.ZENO
    assert "[constraint]" in result.message and "--zeno complete" in result.message
    # the watchdog lets the run go on while its impacts are resolved
    # (test_watchdog.py)
    assert "Edge 'fmu_event_0' (guard 'event_indicator_0')" in result.detail
    assert len(result.events) > 32 and result.t[-1] < ZENO
    t_inf = float(result.detail.split("accumulate at t = ")[1].split(" s")[0])
    assert t_inf == pytest.approx(ZENO, abs=1e-6)


def test_fmu_ball_completes_from_its_own_indicator(fmu_dir, tmp_path, capsys):
    """The indicator is the state h, der(h) the state v; the FMU's own reset,
    probed once, gives e = 0.8: the constraint needs no adapter lines."""
    out = tmp_path / "rest.csv"
    fmu = str(fmu_dir / "BouncingBallEvents.fmu")
    argv = ["run", fmu, "--t-end", "30", "--zeno", "complete", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    events = pd.read_csv(tmp_path / "rest.events.csv")
    (zeno,) = events["time"][events["edge"] == "zeno"]
    assert zeno == pytest.approx(ZENO, abs=1e-8)
    frame = pd.read_csv(out, index_col="time")
    assert frame["h"].iloc[-1] == 0.0 and frame["v"].iloc[-1] == 0.0


def test_zeno_complete_names_the_adapter_lines_it_cannot_find(
    fmu_dir, tmp_path, capsys
):
    plain = str(fmu_dir / "BouncingBall.fmu")  # no event indicator: no impact to map
    assert main(["run", plain, "--zeno", "complete", "--no-progress"]) == 2
    assert 'gap = "<gap state>"' in capsys.readouterr().err
    stateless = tmp_path / "NoState.fmu"  # the impact is h, but e cannot be probed

    def without_state(name, data):
        flag = b'canGetAndSetFMUstate="%s"'
        return name, data.replace(flag % b"true", flag % b"false")

    copy_fmu(fmu_dir / "BouncingBallEvents.fmu", stateless, without_state)
    assert main(["run", str(stateless), "--zeno", "complete", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert 'gap = "h"\nvelocity = "v"\nrestitution = <number' in err


@pytest.mark.parametrize(
    "method", [Halving(h=1e-3), Unilateral(tol=1e-10)], ids=["halving", "unilateral"]
)
def test_python_guard_zeno_stops_at_the_accumulation_point(method):
    result, messages = quietly(method, bouncing_ball(), 10.0)
    # the prediction while the run goes on, then the stop (issue 28)
    assert result.status is Status.ZENO and len(messages) == 2
    assert "accumulate at t = 4.06371" in messages[0]
    assert ZENO - 4e-3 < result.t[-1] <= ZENO
    assert "Edge 'floor' (guard 'floor')" in result.detail
    t_inf = float(result.detail.split("accumulate at t = ")[1].split(" s")[0])
    assert t_inf == pytest.approx(ZENO, abs=1e-5)


def test_max_events_is_a_real_bound():
    result, _ = quietly(Halving(h=1e-2, max_events=5), bouncing_ball(), 10.0)
    assert result.status is Status.MAX_EVENTS and len(result.events) == 5
    assert "'floor' 5x" in result.detail


def test_relaxation_passes_the_zeno_point_and_names_it_at_max_events():
    """Relaxed executions are not Zeno (each transition waits eps on its strip):
    Relaxation is not stopped there, and max_events names the accumulation."""
    result, _ = quietly(
        Relaxation(h=1e-3, eps=1e-6, max_events=300), bouncing_ball(), 10.0
    )
    assert result.status is Status.MAX_EVENTS and result.t[-1] > ZENO
    assert "accumulate at t = 4.06" in result.detail


def test_illinois_past_the_zeno_time_stops_instead_of_crashing(capsys):
    """Illinois past the Zeno time finds no crossing to place: a Zeno stop, not a
    ValueError from inside."""
    with pytest.warns(FmibridgeWarning, match="Zeno point"):
        assert (
            main(["run", "--locate", "illinois", "--t-end", "5", "--no-progress"]) == 1
        )
    assert "Stopped at a Zeno point" in capsys.readouterr().out


# -- 2. impacts inside one step are not lost -------------------------------------


@pytest.fixture(scope="module")
def example1():
    return exact_solution(EXAMPLE_1)


@pytest.mark.parametrize("locate", ["halving", "illinois", "relaxation"])
@pytest.mark.parametrize("h", [0.1, 0.2, 0.3, 0.4])
def test_example1_finds_every_impact_at_every_step(h, locate, example1):
    """Coarse steps must not skip impacts and still report REACHED_END. Each
    exact impact has an event within 0.05 s (RK4's error grows as
    h^4: 1.4e-4 s at h = 0.1, 0.044 s at h = 0.4; impacts are 2.5 s apart). An
    event beyond the 49 is the near-graze at t = 10.18 s, where the exact
    solution misses the stop by 0.04 m, less than RK4's error at these steps."""
    method = (
        Relaxation(h=h, eps=1e-6, integrator="rk4")
        if locate == "relaxation"
        else Halving(h=h, locate=locate)
    )
    result, _ = quietly(method, forced_oscillator(EXAMPLE_1), EXAMPLE_1.t_max)
    assert result.status is Status.REACHED_END
    found = result.event_times
    exact = example1.impact_times
    assert len(exact) == 49
    assert all(np.min(np.abs(found - t)) < 0.05 for t in exact)
    extra = [t for t in found if np.min(np.abs(exact - t)) >= 0.05]
    assert len(extra) <= 1
    for t in extra:
        x, _ = example1.state(np.linspace(t - 0.1, t + 0.1, 2001))
        assert EXAMPLE_1.x_max - x.max() < 0.05


def test_example1_compiled_finds_the_same_impacts_as_python():
    """The compiled loop stops its block before a step in which the stop may be
    grazed; the Python path then looks, so both find the same impacts."""
    for h in (0.2, 0.4):
        python = Halving(h=h, locate="illinois").run(
            forced_oscillator(EXAMPLE_1), EXAMPLE_1.t_max
        )
        compiled = Halving(h=h, locate="illinois").run(
            forced_oscillator(EXAMPLE_1, compiled=True), EXAMPLE_1.t_max
        )
        assert len(compiled.events) == len(python.events) >= 49
        np.testing.assert_allclose(compiled.event_times, python.event_times, atol=1e-9)


def test_a_hop_shorter_than_the_step_is_seen():
    """Hops of 0.45, 0.23, 0.11 s after resets to the surface, with h = 0.4."""
    result = Halving(h=0.4).run(
        ball(reset=lambda t, x: np.array([0.0, -0.5 * x[1]])), 1.3
    )
    exact = math.sqrt(2 / 9.81) * (1 + 2 * 0.5 * np.array([0, 1, 1.5, 1.75]))
    np.testing.assert_allclose(result.event_times[:4], exact, atol=1e-9)


def test_a_step_too_coarse_for_the_interpolant_warns_with_a_step_that_works():
    """A guard that wiggles within one step: its cubic misses it, and says so."""

    def wiggle(t, x):
        return 1.2 + math.cos(2 * math.pi * x[0] / 0.4) - 0.02 * x[0]

    flow = NativeFlow(lambda t, x: np.array([1.0]), ["s"])
    system = HybridSystem(
        [Mode("m", flow, [Edge(Guard(wiggle, name="wiggle"), "m")])], "m", [0.0]
    )
    with pytest.warns(
        FmibridgeWarning, match=r"guard 'wiggle' .* steps of h <= 0\.\d+ s"
    ):
        Halving(h=0.3).run(system, 3.0)


# -- 3. sticking and chatter stop within seconds ------------------------------------


@pytest.mark.parametrize("method", METHODS[:2] + METHODS[3:], ids=IDS[:2] + IDS[3:])
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_example2_without_completion_stops_where_it_sticks(method, compiled):
    """Without completion, a chatter would be resolved bounce by bounce without
    end: the run stops where the mass sticks. The mass at rest on the stop is no
    impact (v_n = 0): its crossings are grazes."""
    result, messages = quietly(
        method, forced_oscillator(EXAMPLE_2, compiled=compiled), EXAMPLE_2.t_max
    )
    assert result.status is Status.ZENO and len(messages) == 1
    assert result.t[-1] == 0.0  # it sticks from t = 0 (exact: until 2.498 s)
    assert result.detail.startswith(
        "The state sticks to the contact of edge 'stop' at t = 0.0 s"
    )


def test_transitions_that_do_not_move_the_state_stop_naming_the_edges():
    """Two modes with the same guard, each edge entering the other at once."""
    flow = NativeFlow(lambda t, x: np.array([1.0]), ["s"])
    half = Guard(lambda t, x: 0.5 - x[0], name="half")
    a = Mode("a", flow, [Edge(half, "b", name="to_b")])
    b = Mode("b", flow, [Edge(half, "a", name="to_a")])
    result, _ = quietly(Halving(h=0.1), HybridSystem([a, b], "a", [0.0]), 1.0)
    assert result.status is Status.NO_PROGRESS
    assert result.t[-1] == pytest.approx(0.5, abs=1e-9)
    assert result.detail.startswith("Edge(s) ['to_a', 'to_b'] fired again and again")


# -- 4. completion completes with every inner method -------------------------------


@pytest.fixture(scope="module")
def sine_zeno():
    """The sine ball's first accumulation, from impacts located to 1e-12 s."""
    system = to_hybrid(sine_ball(), [0.0, 2.0], [1.5, 0.0])
    result, _ = quietly(Halving(h=1e-3, t_tol=1e-12), system, 5.0)
    assert result.status is Status.ZENO
    return float(result.detail.split("accumulate at t = ")[1].split(" s")[0])


INNER = [
    Halving(h=1e-2),
    Relaxation(h=1e-3, eps=1e-8),
    Unilateral(h=1e-2, tol=1e-12),
]


@pytest.mark.parametrize("inner", INNER, ids=IDS[:1] + IDS[2:])
@pytest.mark.parametrize("model", ["ball", "example2", "sine"])
def test_completion_truncates_at_the_exact_zeno_times(inner, model, sine_zeno):
    """Completion truncates each Zeno execution around every inner method, at
    its exact Zeno time (Or and Ames), instead of running to max_events."""
    system, t_end, exact = {
        "ball": (bouncing_ball(), 6.0, [ZENO]),
        "example2": (
            forced_oscillator(EXAMPLE_2),
            EXAMPLE_2.t_max,
            exact_solution(EXAMPLE_2).zeno_times,
        ),
        "sine": (to_hybrid(sine_ball(), [0.0, 2.0], [1.5, 0.0]), 5.0, [sine_zeno]),
    }[model]
    method = Completion(inner, eps=1e-3)
    result, messages = quietly(method, system, t_end)
    assert result.status is Status.REACHED_END and messages == []
    zenos = [e.t for e in result.events if e.edge == "zeno"]
    np.testing.assert_allclose(zenos, exact, rtol=0, atol=1e-3)


def test_completion_warns_when_the_inner_method_is_too_coarse():
    """Relaxation's strip eps = 1e-6 delays each impact by up to eps / |hdot|."""
    result, messages = quietly(
        Completion(Relaxation(h=1e-3, eps=1e-6)), bouncing_ball(), 6.0
    )
    assert result.status is Status.REACHED_END
    (zeno,) = [e.t for e in result.events if e.edge == "zeno"]
    assert abs(zeno - ZENO) > 1e-3  # the inaccuracy the warning announces
    (message,) = messages
    assert "completion: the inner method (relaxation)" in message and "eps" in message


def test_completion_that_cannot_truncate_stops_fast_and_says_why():
    """Unilateral with t_tol = 1 s keeps it (completion asks for its own t_tol
    only where none is given): it fires in the paper's band, 1.4e-5 to 2.8e-5
    before the surface, too far for the tails of eps = 1e-3 (with completion's
    t_tol it truncates both Zeno points within 3e-5 s)."""
    result, _ = quietly(
        Completion(Unilateral(t_tol=1.0)),
        forced_oscillator(EXAMPLE_2),
        EXAMPLE_2.t_max,
    )
    assert result.status is Status.ZENO_NOT_TRUNCATED
    assert result.t[-1] < 5.1 and "guard 'stop'" in result.detail


# -- 5. user functions are checked ----------------------------------------------------


def test_wrong_length_from_f_is_an_error_naming_f():
    """One error naming f, not a run on numbers broadcast from the wrong shape."""
    flow = NativeFlow(lambda t, x, u: np.array([x[1]]), ["h", "v"], name="ball")
    system = HybridSystem([Mode("m", flow)], "m", [1.0, 0.0])
    with pytest.raises(
        FmibridgeError,
        match=r"NativeFlow `ball`: f \(`<lambda>`\) returned 1 value\(s\) \[0\.0\] at "
        r"t = 0\.0, x = \[1\.0, 0\.0\]; expected 2 finite values, one per state "
        r"\['h', 'v'\]",
    ):
        Halving(h=0.1).run(system, 1.0)


def test_f_of_t_and_x_works_like_solve_ivp():
    """f(t, x) and f(t, x, u) give the same run, not a TypeError mid-run."""
    two = Halving(h=1e-2).run(ball(f=lambda t, x: np.array([x[1], -9.81])), 1.0)
    three = Halving(h=1e-2).run(ball(f=lambda t, x, u: np.array([x[1], -9.81])), 1.0)
    np.testing.assert_array_equal(two.x, three.x)
    assert two.events[0].t == pytest.approx(math.sqrt(2 / 9.81), abs=1e-9)


@pytest.mark.parametrize(
    "f, options, message",
    [
        (
            lambda t: 0.0,
            {},
            r"f must take \(t, x\) or \(t, x, u\), but its signature is <lambda>\(t\)",
        ),
        (
            lambda t, x: x,
            {"inputs": lambda t: 1.0},
            r"f takes \(t, x\) but `inputs` are given",
        ),
        (None, {}, r"`f` must be callable"),
    ],
)
def test_wrong_signature_is_refused_when_the_flow_is_built(f, options, message):
    with pytest.raises(FmibridgeError, match=message):
        NativeFlow(f, ["x"], **options)


def test_compiled_f_of_the_wrong_length_is_refused_when_built():
    with pytest.raises(
        FmibridgeError, match=r"returned 1 value\(s\) \[0\.0\] .* expected 2"
    ):
        CompiledFlow(lambda t, x: np.array([x[1]]), ["h", "v"])


@pytest.mark.parametrize("method", METHODS, ids=IDS)
@pytest.mark.parametrize(
    "reset, message",
    [
        (
            lambda t, x: np.array([x[0]]),
            r"Reset `<lambda>` of edge 'floor' returned \[.*\] at t = 0\.45.*it must "
            r"return 2 finite values",
        ),
        (
            lambda t, x: np.array([-1.0, -0.8 * x[1]]),
            r"The reset of edge 'floor' leaves the state beyond its own guard "
            r"'floor': g = -1\.0 after it",
        ),
        (
            lambda t, x: x.copy(),
            r"The reset of edge 'floor' leaves the state on its guard 'floor' "
            r"moving out of the domain",
        ),
        (
            lambda t, x: np.array([x[0], math.nan]),
            r"Reset `<lambda>` of edge 'floor' returned \[.*nan\]",
        ),
    ],
    ids=["length", "beyond", "identity", "nan"],
)
def test_bad_resets_are_errors_at_the_first_impact(method, reset, message):
    """A reset of the wrong length or NaN, or one that leaves the state beyond or
    on its guard (it would fire again at once, up to max_events), is an error."""
    with pytest.raises(FmibridgeError, match=message):
        method.run(ball(reset=reset), 2.0)


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_nan_guard_is_an_error_naming_the_guard_and_time(method):
    """Every method names the guard and the time, not the flow, and none hangs
    or runs on."""
    guard = lambda t, x: x[0] if t < 0.1 else math.nan  # noqa: E731
    with pytest.raises(
        FmibridgeError, match=r"Guard 'floor' .*returned nan at t = 0\.1"
    ):
        method.run(ball(guard=guard), 2.0)


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_nan_right_hand_side_is_an_error_naming_the_flow_and_time(method):
    """Every method stops with an error naming the flow, none with NaN rows."""
    f = lambda t, x: np.array([x[1], -9.81 if t < 0.1 else math.nan])  # noqa: E731
    with pytest.raises(FmibridgeError, match=r"Mode 'flight': the flow .* at t = 0\.1"):
        method.run(ball(f=f), 2.0)


# -- parameters checked against the run ---------------------------------------------


def test_step_below_the_resolution_of_time_is_refused():
    """A step below t's last place never advances t: refused before the run."""
    with pytest.raises(
        FmibridgeError, match=r"`h` = 1e-300 s is below the resolution of time"
    ):
        Halving(h=1e-300).run(bouncing_ball(), 3.0)


def test_more_steps_than_max_steps_is_refused_before_the_run():
    with pytest.raises(
        FmibridgeError, match=r"needs 3e\+09 steps .* more than max_steps = 10000000"
    ):
        Halving(h=1e-9).run(bouncing_ball(), 3.0)


def test_step_longer_than_the_run_warns_and_still_finds_the_impacts():
    """A step longer than the run is cut to its end, with a warning."""
    with pytest.warns(
        FmibridgeWarning, match=r"longer than the run .* choose h <= 3\.0"
    ):
        result = Halving(h=1e10).run(bouncing_ball(), 3.0)
    assert result.t[-1] == 3.0 and len(result.events) == 6
    assert result.events[0].t == pytest.approx(math.sqrt(2 / 9.81), abs=1e-9)


# -- bad inputs the README lists ------------------------------------------------------


def test_guard_beyond_its_surface_at_the_start_is_refused():
    with pytest.raises(
        FmibridgeError, match=r"Guard 'floor' of mode 'flight' is -0\.1"
    ):
        Halving().run(bouncing_ball(h0=-0.1), 1.0)


def test_cosimulation_flow_is_refused_by_unilateral(fmu_dir):
    from fmibridge.flows.fmu import fmu_system

    system = fmu_system(fmu_dir / "BouncingBall.fmu", "cs")
    try:
        with pytest.raises(FmibridgeError, match="needs a VectorField flow"):
            Unilateral().run(system, 1.0)
    finally:
        system.close()


def test_adapter_expression_that_tries_to_run_code_is_refused(
    tmp_path, fmu_dir, capsys
):
    path = tmp_path / "model.toml"
    path.write_text(
        f'fmu = "{fmu_dir / "BouncingBall.fmu"}"\n[[edges]]\nguard = "h.__class__"\n'
    )
    assert main(["run", str(path), "--no-progress"]) == 2
    assert "model.toml: 1 problem" in capsys.readouterr().err


@pytest.mark.parametrize("returned", [[0.5], [0.5, 1.0, 2.0]])
def test_a_flow_step_of_the_wrong_size_is_refused_not_read_past(returned):
    """A Python flow's `advance` that returns 1 or 3 values for 2 states: the
    compiled copy used to read (or drop) past them and reach t_end."""

    class Wrong(Flow):
        state_names = ("x", "v")

        def advance(self, t, x, h, scheme):
            return np.array(returned)

    system = HybridSystem([Mode("m", Wrong())], "m", [0.0, 1.0])
    expected = f"A step returned {len(returned)} state value\\(s\\); the mode has 2."
    with pytest.raises(FmibridgeError, match=expected):
        Halving(h=0.1).run(system, 1.0)
