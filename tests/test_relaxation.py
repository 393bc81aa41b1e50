"""The relaxation method of Burden et al. (Fig. 12) on the bouncing ball and on
a planar system whose two guards intersect (a simultaneous transition)."""

import math

import numpy as np
import pytest

from fmibridge import (
    Edge,
    FmibridgeError,
    Guard,
    HybridSystem,
    Mode,
    NativeFlow,
    Status,
)
from fmibridge.methods import METHODS, Relaxation
from fmibridge.models import bouncing_ball, bouncing_ball_impacts

G = 9.81


@pytest.mark.parametrize("integrator", ["midpoint", "rk4"])
@pytest.mark.parametrize("eps", [1e-3, 1e-5, 1e-8])
def test_kth_impact_is_late_by_at_most_k_eps(integrator, eps):
    result = Relaxation(h=1e-2, eps=eps, integrator=integrator).run(
        bouncing_ball(), t_end=3.0
    )
    assert result.status is Status.REACHED_END
    late = result.event_times - bouncing_ball_impacts(len(result.events))
    k = np.arange(1, len(late) + 1)
    assert len(late) == 6
    assert np.all(late >= -1e-12) and np.all(late <= k * eps + 1e-12), late / eps


@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-6])
def test_each_transition_is_step_13_of_fig_12(eps):
    """Reset time = t_{k+1} + eps - tau, tau = depth of the strip sample; the delay
    after the exact hit of the relaxed execution's guard lies in [0, eps]."""
    result = Relaxation(h=1e-2, eps=eps).run(bouncing_ball(), t_end=3.0)
    t_hit = math.sqrt(2.0 / G)  # midpoint is exact for constant gravity
    for event in result.events:
        i = int(np.flatnonzero((result.t == event.t) & (result["v"] < 0))[0])
        t_strip, depth = result.t[i - 1], -result["h"][i - 1]
        assert 0.0 < depth <= eps
        assert event.t == pytest.approx(t_strip + eps - depth, abs=1e-15)
        assert event.x_before[0] == pytest.approx(0.0, abs=1e-6 * eps)  # q on G
        assert -1e-12 <= event.t - t_hit <= eps * (1 + 1e-6) + 1e-12
        t_hit = event.t + 2.0 * event.x_after[1] / G  # next exact hit after R(q)


@pytest.mark.parametrize("integrator", ["midpoint", "rk4"])
def test_height_never_below_minus_eps(integrator):
    for eps in (1e-2, 1e-4, 1e-7):
        result = Relaxation(h=3e-2, eps=eps, integrator=integrator).run(
            bouncing_ball(), t_end=3.5
        )
        assert result["h"].min() >= -eps


def test_passes_the_zeno_time_with_eps_per_transition():
    result = Relaxation(h=1e-2, eps=1e-4).run(bouncing_ball(), t_end=5.0)
    assert result.status is Status.REACHED_END and result.t[-1] == 5.0
    assert np.all(np.diff(result.event_times) >= 1e-4 * (1 - 1e-9))


def test_run_may_end_while_waiting_on_a_strip():
    t_impact = bouncing_ball_impacts(1)[0]
    result = Relaxation(h=1e-2, eps=0.1).run(bouncing_ball(), t_end=t_impact + 0.05)
    assert result.status is Status.REACHED_END and not result.events
    assert result.t[-1] == t_impact + 0.05 and result["h"][-1] >= 0.0


def test_is_registered_for_the_command_line():
    assert METHODS["relaxation"] is Relaxation
    assert Relaxation().parameters()["integrator"] == "midpoint"


def crossing_system(xi0, speed=1.0):
    """Fig. 1 of Burden et al. made concrete: four quadrant modes, identity resets,
    constant velocity (1, 1) in the third quadrant and (speed, speed) elsewhere."""

    def flow(v):
        return NativeFlow(lambda t, x, u: np.array([v, v]), ["xi1", "xi2"])

    def xi1_zero(t, x):
        return -x[0]

    def xi2_zero(t, x):
        return -x[1]

    modes = [
        Mode(
            "D0",
            flow(1.0),
            (
                Edge(Guard(xi1_zero), "D1", name="to_D1"),
                Edge(Guard(xi2_zero), "D2", name="to_D2"),
            ),
        ),
        Mode("D1", flow(speed), (Edge(Guard(xi2_zero), "D3", name="D1_to_D3"),)),
        Mode("D2", flow(speed), (Edge(Guard(xi1_zero), "D3", name="D2_to_D3"),)),
        Mode("D3", flow(speed)),
    ]
    return HybridSystem(modes, "D0", list(xi0), name="crossing")


def test_simultaneous_transition_through_guard_intersection():
    """The diagonal through (0, 0) meets both guards at once: the first declared
    strip fires (the other is recorded), and the next step finds the state on the
    second strip: D0 -> D1 -> D3, each transition delayed by at most eps."""
    eps = 1e-3
    result = Relaxation(h=0.1, eps=eps).run(crossing_system([-0.55, -0.55], 2.0), 1.0)
    first, second = result.events
    assert (first.edge, first.simultaneous) == ("to_D1", ("to_D2",))
    assert second.edge == "D1_to_D3"
    assert 0.55 <= first.t <= 0.55 + eps + 1e-12
    assert first.t <= second.t <= first.t + eps + 1e-12
    np.testing.assert_allclose(first.x_before, [0.0, 0.0], atol=1e-6 * eps)
    # exact: (0, 0) at t = 0.55, then speed 2; relaxed: at most 2 eps later
    delay = 0.45 - result.x[-1, 0] / 2.0
    assert 0.0 <= delay <= 2 * eps + 1e-12


def test_nearby_trajectories_take_either_order_and_stay_close():
    """Shifted by delta, the two orders D0->D1->D3 and D0->D2->D3 appear; the end
    states differ by O(delta + eps) (Sec. V-A: orbitally stable in the metric)."""
    eps, delta = 1e-4, 1e-3
    ends, orders = [], []
    for xi0 in ([-0.55 + delta, -0.55], [-0.55, -0.55 + delta]):
        result = Relaxation(h=0.1, eps=eps).run(crossing_system(xi0, 2.0), 1.0)
        orders.append([e.target for e in result.events])
        assert all(not e.simultaneous for e in result.events)
        ends.append(result.x[-1])
    assert orders == [["D1", "D3"], ["D2", "D3"]]
    assert np.max(np.abs(ends[0] - ends[1])) <= 2 * (delta + 2 * eps)


def test_leaving_the_domain_without_a_guard_is_an_error_naming_the_flow():
    """As under Halving: the last trial (0.1 / 2**5) is still not finite."""
    flow = NativeFlow(lambda t, x, u: np.array([1.0 + np.sqrt(1.0 - x[0])]), ["x"])
    system = HybridSystem([Mode("m", flow)], "m", [1.0])
    with (
        np.errstate(invalid="ignore"),
        pytest.raises(
            FmibridgeError,
            match=r"Mode 'm': the flow gives non-finite states \[nan\] at "
            r"t = 0\.003125",
        ),
    ):
        Relaxation(h=0.1, max_halvings=5).run(system, t_end=1.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"eps": -1e-6}, "`eps` must be a finite number > 0, got -1e-06."),
        ({"eps": float("nan")}, "`eps` must be a finite number > 0, got nan."),
        ({"h": 0.0}, "`h` must be a finite number > 0, got 0.0."),
        ({"h": 10**400}, "`h` must be a finite number > 0, got 1000"),  # > max float
        ({"h": float("inf")}, "`h` must be a finite number > 0, got inf."),
        ({"max_halvings": 0}, "`max_halvings` must be an integer >= 1, got 0."),
        ({"integrator": "rk45"}, "`integrator` must be one of"),
    ],
)
def test_bad_parameters_are_named(options, message):
    with pytest.raises(FmibridgeError, match=message.replace("(", r"\(")):
        Relaxation(**options)


@pytest.mark.parametrize("t_end", [10**400, math.inf, math.nan, -1.0])
def test_a_t_end_that_is_no_finite_time_after_t0_is_named(t_end):
    with pytest.raises(FmibridgeError, match="`t_end` must be a finite time after t0"):
        Relaxation(h=0.1).run(bouncing_ball(), t_end)


@pytest.mark.parametrize(
    ("name", "interface"), [("BouncingBall.fmu", "me"), ("BouncingBall_fmi3.fmu", "cs")]
)
def test_drives_fmu_flows_with_the_same_delays(fmu_dir, name, interface):
    from fmibridge.flows.fmu import open_fmu

    flow = open_fmu(fmu_dir / name, interface)
    floor = Edge(
        Guard(lambda t, x: x[0], name="floor"),
        "flight",
        lambda t, x: np.array([x[0], -0.8 * x[1]]),
    )
    system = HybridSystem([Mode("flight", flow, (floor,))], "flight", flow.x0)
    eps = 1e-5
    try:
        result = Relaxation(h=1e-2, eps=eps, integrator="rk4").run(system, t_end=3.0)
    finally:
        system.close()
    late = result.event_times - bouncing_ball_impacts(len(result.events))
    assert len(late) == 6
    assert np.all(late >= -1e-9) and np.all(late <= np.arange(1, 7) * eps + 1e-9)


def test_fmu_event_indicators_reset_beyond_the_surface(fmu_dir):
    """'either' guards with reset_at='beyond': the FMU's own event mode bounces."""
    from fmibridge.flows.fmu import fmu_system

    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    eps = 1e-6
    try:
        result = Relaxation(h=1e-2, eps=eps, integrator="rk4").run(system, t_end=3.0)
    finally:
        system.close()
    late = result.event_times - bouncing_ball_impacts(len(result.events))
    assert len(late) == 6
    assert np.all(np.abs(late) <= np.arange(1, 7) * 2 * eps), late / eps


def test_a_strip_wait_longer_than_the_output_interval_still_fires():
    """A wait of nearly eps = 0.2 s spans many output times of 0.01 s: the edge
    fires where it fires without the grid (it never fired when each output
    time cut the wait short), and the rows in between hold the strip's point."""
    method = Relaxation(h=0.01, eps=0.2)
    every_step = method.run(bouncing_ball(), 1.0)
    on_grid = method.run(bouncing_ball(), 1.0, t_eval=np.linspace(0.0, 1.0, 101))
    assert len(on_grid.events) == len(every_step.events) == 1
    impact = on_grid.events[0]
    assert impact.t == pytest.approx(every_step.events[0].t, abs=1e-12)
    assert 0.15 < impact.t - bouncing_ball_impacts(1)[0] <= 0.2
    waiting = (on_grid.t > impact.t - 0.14) & (on_grid.t < impact.t)
    assert waiting.sum() >= 13
    assert np.all(on_grid.x[waiting] == impact.x_before)
