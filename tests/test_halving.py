"""The fixed-and-halved-steps master on the bouncing ball and bad input."""

import numpy as np
import pytest

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
    Status,
)
from fmibridge.models import bouncing_ball, bouncing_ball_impacts

LOCATE = pytest.mark.parametrize("locate", ["halving", "illinois"])


@LOCATE
@pytest.mark.parametrize("integrator", ["midpoint", "rk4"])
def test_first_five_impacts_exact(integrator, locate):
    method = Halving(h=1e-3, integrator=integrator, locate=locate)
    result = method.run(bouncing_ball(), t_end=3.0)
    assert result.status is Status.REACHED_END
    errors = result.event_times[:5] - bouncing_ball_impacts(5)
    assert np.max(np.abs(errors)) < 1e-9, errors


@LOCATE
def test_height_never_below_floor_before_tenth_impact(locate):
    result = Halving(h=1e-2, locate=locate).run(bouncing_ball(), t_end=4.0)
    assert len(result.events) >= 10
    before_tenth = result.t <= result.events[9].t
    assert result["h"][before_tenth].min() >= -1e-9


def test_impact_velocity_is_reset_with_restitution():
    result = Halving(h=1e-3).run(bouncing_ball(e=0.5), t_end=1.0)
    first = result.events[0]
    assert first.x_after[1] == pytest.approx(-0.5 * first.x_before[1], rel=1e-15)
    assert first.x_before[1] == pytest.approx(-np.sqrt(2 * 9.81), rel=1e-12)


def test_grid_lands_on_t_end_exactly():
    result = Halving(h=0.3).run(bouncing_ball(), t_end=1.0)
    assert result.t[-1] == 1.0


def two_walls_system(x0):
    """A point moving right at unit speed towards two walls at the same place."""
    flow = NativeFlow(lambda t, x, u: np.array([1.0]), ["x"])
    wall_a = Edge(Guard(lambda t, x: 1.0 - x[0], name="wall_a"), "stopped")
    wall_b = Edge(Guard(lambda t, x: 1.0 - x[0], name="wall_b"), "stopped")
    return HybridSystem(
        [Mode("moving", flow, (wall_b, wall_a)), Mode("stopped", flow)], "moving", [x0]
    )


@LOCATE
def test_simultaneous_crossings_fire_first_declared_and_report_the_other(locate):
    result = Halving(h=0.1, locate=locate).run(two_walls_system(0.25), t_end=1.0)
    (event,) = result.events
    assert event.edge == "wall_b" and event.simultaneous == ("wall_a",)
    assert event.t == pytest.approx(0.75, abs=1e-10)


def test_guard_negative_at_start_is_an_error():
    with pytest.raises(FmibridgeError, match="Guard 'floor' of mode 'flight' is -0.1"):
        Halving().run(bouncing_ball(h0=-0.1), t_end=1.0)


def test_unknown_state_name_is_an_error():
    flow = NativeFlow(lambda t, x, u: x, ["h", "v"])
    with pytest.raises(FmibridgeError, match=r"unknown state\(s\) \['height'\]"):
        HybridSystem([Mode("m", flow)], "m", {"height": 1.0, "v": 0.0})


def test_non_finite_derivative_is_an_error_naming_the_mode():
    flow = NativeFlow(lambda t, x, u: np.array([np.nan]), ["x"])
    system = HybridSystem([Mode("broken", flow)], "broken", [0.0])
    with pytest.raises(
        FmibridgeError, match=r"NativeFlow `native`: f \(`<lambda>`\) returned 1 "
    ):
        Halving(h=0.1).run(system, t_end=1.0)


@LOCATE
def test_non_finite_beyond_guard_is_halved_away(locate):
    """sqrt(1 - x) is undefined past the guard: trial steps there are halved."""
    flow = NativeFlow(lambda t, x, u: np.array([1.0 + np.sqrt(1.0 - x[0])]), ["x"])
    edge = Edge(Guard(lambda t, x: 1.0 - x[0], name="wall"), "m", lambda t, x: x - 1.0)
    system = HybridSystem([Mode("m", flow, (edge,))], "m", [0.0])
    with np.errstate(invalid="ignore"):
        result = Halving(h=1e-3, locate=locate).run(system, t_end=1.0)
    assert result.events[0].t == pytest.approx(2 * (1 - np.log(2)), abs=1e-7)


def test_exhausted_event_budget_is_a_stop_reason_and_a_warning():
    with pytest.warns(FmibridgeWarning, match="max_events"):
        result = Halving(h=1e-2, max_events=20).run(bouncing_ball(), t_end=10.0)
    assert result.status is Status.MAX_EVENTS
    assert len(result.events) == 20
    with pytest.raises(FmibridgeError, match="max_events"):
        result.raise_for_status()


def test_bad_parameters_are_named():
    with pytest.raises(FmibridgeError, match="`t_tol` must be"):
        Halving(t_tol=0.0)
    with pytest.raises(FmibridgeError, match="`max_halvings` must be"):
        Halving(max_halvings=0)
    with pytest.raises(FmibridgeError, match="`locate` must be"):
        Halving(locate="newton")
    with pytest.raises(FmibridgeError, match="`t_end` must be"):
        Halving().run(bouncing_ball(), t_end=-1.0)


@LOCATE
def test_resets_that_change_nothing_count_against_the_event_budget(locate):
    """Pushed into a wall, v = -c v keeps v = 0: the guard fires again at once.

    Each such silent event makes no progress; without the budget the run would
    spin until max_steps. The reset is declared to apply at rest (an `approach`
    that always approaches): by default a body at rest is no impact, a graze
    (test_impact_approach)."""
    flow = NativeFlow(lambda t, x, u: np.array([x[1], 1.0]), ["x", "v"])
    wall = Edge(
        Guard(lambda t, x: -x[0], name="wall"),
        "m",
        lambda t, x: x * [1.0, -0.5],
        approach=lambda t, x: -1.0,
    )
    system = HybridSystem([Mode("m", flow, (wall,))], "m", [0.0, 0.0])
    with pytest.warns(FmibridgeWarning, match="max_events"):
        result = Halving(h=1e-2, max_events=50, locate=locate).run(system, t_end=1.0)
    assert result.status is Status.MAX_EVENTS
    assert result.stats["n_events"] + result.stats["n_silent_events"] == 50


def test_illinois_needs_a_fraction_of_the_trial_steps_of_halving():
    """Same impacts to 1e-12 with a third of the rejected trials or fewer:
    halving narrows the bracket by 2 a trial, log2(1e-2 / 1e-10) = 27 trials
    from h = 1e-2 to t_tol = 1e-10, Illinois superlinearly (measured: 5)."""
    runs = {
        locate: Halving(h=1e-2, locate=locate).run(bouncing_ball(), t_end=3.0)
        for locate in ("halving", "illinois")
    }
    halving, illinois = runs["halving"], runs["illinois"]
    np.testing.assert_allclose(illinois.event_times, halving.event_times, atol=1e-12)
    per_event = {k: r.stats["n_rejected"] / len(r.events) for k, r in runs.items()}
    assert per_event["illinois"] < per_event["halving"] / 3, per_event


@LOCATE
def test_an_either_guard_that_starts_on_its_surface_fires_at_once(locate):
    """x' = -1 from x = 0 with the 'either' guard x: the step leaves zero, so the
    guard fires at t = 0 (core.events.crossed), whichever way the step is narrowed."""
    flow = NativeFlow(lambda t, x, u: np.array([-1.0]), ["x"])
    edge = Edge(Guard(lambda t, x: x[0], "either", name="zero"), "after")
    system = HybridSystem(
        [Mode("before", flow, (edge,)), Mode("after", flow)], "before", [0.0]
    )
    result = Halving(h=0.1, locate=locate).run(system, t_end=0.5)
    (event,) = result.events
    assert event.t == pytest.approx(0.0, abs=1e-10)


def test_illinois_narrows_from_a_reset_left_one_ulp_beyond_the_surface():
    """Short hops (0.10, 0.05, 0.03 s, all inside one step of h = 0.5) after a
    reset that leaves h = -1e-17: Illinois narrows them (G(0) counts as on the
    surface, `bracket.is_bracket`) instead of halving from h."""
    g, e = 9.81, 0.5
    flow = NativeFlow(lambda t, x, u: np.array([x[1], -g]), ["h", "v"])
    bounce = Edge(
        Guard(lambda t, x: x[0]), "air", lambda t, x: np.array([-1e-17, -e * x[1]])
    )
    system = HybridSystem([Mode("air", flow, (bounce,))], "air", [0.0, 0.5])
    with pytest.warns(FmibridgeWarning, match="longer than the run"):
        result = Halving(h=0.5, locate="illinois").run(system, 0.19)
    exact = np.cumsum(2 * 0.5 * e ** np.arange(3) / g)
    np.testing.assert_allclose(result.event_times, exact, rtol=0, atol=1e-12)
    assert result.stats["n_rejected"] <= 12  # 21 when such starts were halved


@pytest.mark.parametrize(("integrator", "stages"), [("midpoint", 2), ("rk4", 4)])
@pytest.mark.parametrize("method", [Halving, Relaxation])
def test_the_rates_at_a_step_end_give_the_next_first_stage(method, integrator, stages):
    """The guards' rates (for dips inside a step) need dx/dt at each step's end;
    the next step starts from it: `stages` evaluations of f per step, plus one
    for the rates at the last step's end."""
    n_calls = []

    def f(t, x, u):
        n_calls.append(t)
        return np.array([x[1], -1.0])

    flow = NativeFlow(f, ["h", "v"])
    floor = Edge(Guard(lambda t, x: x[0]), "air")
    system = HybridSystem([Mode("air", flow, (floor,))], "air", [10.0, 0.0])
    result = method(h=1e-2, integrator=integrator).run(system, 1.0)
    assert result.stats == {
        "n_steps": 100,
        "n_rejected": 0,
        "n_events": 0,
        "n_silent_events": 0,
    }
    assert len(n_calls) == stages * 100 + 1
    assert result["h"][-1] == pytest.approx(9.5, abs=1e-12)
