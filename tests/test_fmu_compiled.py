"""A Model Exchange FMU's C functions called directly by the compiled loops.

The FMU's derivatives, event indicators and outputs are Functions of (t, x)
(`flows._fmu`): Halving's loop and Python callers (`flow.rhs`, the guards)
call the same ones. Oracles: the exact impacts of the bouncing ball, RK4's
exactness on its parabola, the FMU's own forcing for an input given as a
Python function, and the FMUError of each failure.
"""

import math

import numpy as np
import pytest

from fmibridge import (
    Edge,
    FmibridgeError,
    FMUError,
    Guard,
    Halving,
    HybridSystem,
    Mode,
)
from fmibridge.core.integrators import RK4
from fmibridge.flows.fmu import fmu_event_edges, fmu_system, open_fmu
from fmibridge.methods import Relaxation
from fmibridge.models import bouncing_ball_impacts

BALLS = ["BouncingBallEvents.fmu", "BouncingBallEvents_fmi3.fmu"]


def run(path, method, *, t_end=3.0, extra_edges=(), **options):
    system = fmu_system(path, "me", **options)
    flow = system.mode("model").flow
    if extra_edges:
        mode = Mode("model", flow, fmu_event_edges(flow, "model") + extra_edges)
        system = HybridSystem([mode], "model", flow.x0)
    try:
        return method.run(system, t_end)
    finally:
        system.close()


@pytest.mark.parametrize("name", BALLS)
@pytest.mark.parametrize(
    "method",
    [
        Halving(h=1e-2, integrator="rk4"),
        Halving(h=1e-2, locate="illinois"),
        Halving(h=1e-2, integrator="midpoint"),
        Relaxation(h=1e-2, eps=1e-6),
    ],
    ids=["halving-rk4", "illinois", "halving-midpoint", "relaxation"],
)
def test_fmu_calls_find_the_impacts(fmu_dir, name, method):
    result = run(fmu_dir / name, method)
    assert result.status.is_success and len(result.event_times) >= 3
    if isinstance(method, Halving):  # the impacts themselves, to the bracket
        exact = bouncing_ball_impacts(3, e=0.8)
        assert np.max(np.abs(result.event_times[:3] - exact)) < 1e-8
    assert "fmu_calls=C functions called directly" in result.provenance["flows"]


@pytest.mark.parametrize("name", BALLS)
@pytest.mark.parametrize("t_tol", [1e-6, 1e-10])
def test_illinois_counts_its_trials_as_rejected_steps(fmu_dir, name, t_tol):
    method = Halving(h=1e-2, integrator="rk4", t_tol=t_tol, locate="illinois")
    result = run(fmu_dir / name, method)
    assert result.stats["n_rejected"] >= len(result.event_times) >= 3
    exact = bouncing_ball_impacts(3, e=0.8)
    assert np.max(np.abs(result.event_times[:3] - exact)) < 10 * t_tol


def test_steps_between_events_are_rk4_on_the_parabola_and_leave_the_fmu_clean(
    fmu_dir,
):
    """RK4 is exact on the free flight: h = 1 - g t^2 / 2, v = -g t. Afterwards,
    Python's view of the FMU agrees: rhs and guards at a new point."""
    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        mode = system.mode("model")
        flow, h = mode.flow, 1e-2
        first = bouncing_ball_impacts(1, e=0.8)[0]
        result = Halving(h=h).run(system, first - h / 2)
        t = result.t[1:]  # steps of h, the last one cut to land on t_end
        np.testing.assert_allclose(t[:-1], h * np.arange(1, len(t)), rtol=1e-12)
        assert t[-1] == first - h / 2
        np.testing.assert_allclose(result.x[1:, 0], 1 - 9.81 * t**2 / 2, atol=1e-12)
        np.testing.assert_allclose(result.x[1:, 1], -9.81 * t, atol=1e-12)
        x = np.array([0.3, -1.0])
        np.testing.assert_array_equal(flow.rhs(0.5, x), [-1.0, -9.81])
        assert mode.edges[0].guard(0.5, x) == 0.3
    finally:
        system.close()


def test_indicators_are_one_function_per_fmu(fmu_dir):
    path = fmu_dir / "BouncingBallEvents.fmu"
    with open_fmu(path, "me") as flow, open_fmu(path, "me") as other:
        mine, theirs = flow.event_indicator(0), other.event_indicator(0)
        function, index = mine.engine_entry(2)
        assert index == 0 and flow.event_indicator(0).engine_entry(2)[0] is function
        assert theirs.engine_entry(2)[0] is not function
        assert mine.engine_entry(3) is None  # not for another number of states
        x = np.array([0.25, -1.0])
        assert mine(0.1, x) == theirs(0.1, x) == function(0.1, x)[0] == 0.25


def test_the_fmu_is_called_once_per_point(fmu_dir):
    """Every indicator and the derivatives at one point cost one setting of the
    point and one read of the indicators: an FMU terminated behind the calls'
    back is not called again at that point, and fails at the next."""
    with open_fmu(fmu_dir / "BouncingBallEvents.fmu", "me") as flow:
        x = np.array([0.25, -1.0])
        assert flow.event_indicator(0)(0.1, x) == 0.25
        np.testing.assert_array_equal(flow.rhs(0.1, x), [-1.0, -9.81])
        flow.instance._fmu.terminate()  # fmpy's call: the calls do not see it
        assert flow.event_indicator(0)(0.1, x) == 0.25  # read at this point
        with pytest.raises(FMUError, match="fmi2SetTime"):
            flow.event_indicator(0)(0.2, x)


def test_failed_fmu_call_raises_fmu_error_naming_the_function(fmu_dir):
    with open_fmu(fmu_dir / "BouncingBallEvents.fmu", "me") as flow:
        flow.instance._fmu.terminate()  # fmi2SetTime now returns fmi2Error
        with pytest.raises(FMUError, match="fmi2SetTime"):
            flow.advance(0.0, flow.x0, 1e-2, RK4)
        with pytest.raises(FMUError, match="fmi2SetTime"):
            flow.rhs(0.0, flow.x0)


def test_a_closed_fmu_is_an_error_not_a_call(fmu_dir):
    flow = open_fmu(fmu_dir / "BouncingBallEvents.fmu", "me")
    indicator = flow.event_indicator(0)
    x = np.array([0.25, -1.0])
    assert indicator(0.1, x) == 0.25
    flow.close()
    for call in (lambda: flow.rhs(0.1, x), lambda: indicator(0.1, x)):
        with pytest.raises(FmibridgeError, match="the FMU instance was closed"):
            call()


def test_python_guard_beside_the_fmus_own(fmu_dir):
    """A guard called back in Python beside the FMU's indicator: the run is the
    same as without it (it never fires)."""

    def ceiling(t, x):
        return 1.1 - x[0]  # the ball starts at 1 m and never rises again

    extra = (Edge(Guard(ceiling, "falling"), "model", name="ceiling"),)
    path = fmu_dir / "BouncingBallEvents.fmu"
    method = Halving(h=1e-2, integrator="rk4")
    ours = run(path, method, extra_edges=extra)
    reference = run(path, method)
    np.testing.assert_array_equal(ours.t, reference.t)
    np.testing.assert_array_equal(ours.x, reference.x)
    assert ours.stats == reference.stats


@pytest.mark.parametrize(
    "name", ["ForcedOscillatorWithStop.fmu", "ForcedOscillatorWithStop_fmi3.fmu"]
)
def test_python_input_function_is_called_back_at_every_stage(fmu_dir, name):
    """u(t) = U cos(Omega t) as a Python function drives the FMU exactly as its
    own forcing U cos(Omega t) does (use_input = 0): the same operations."""
    forcing = {"U": 20.0, "Omega": 2.5}
    method = Halving(h=1e-2, integrator="midpoint")
    own = run(fmu_dir / name, method, t_end=6.0, parameters=forcing)
    driven = run(
        fmu_dir / name,
        method,
        t_end=6.0,
        parameters={**forcing, "use_input": 1},
        inputs={"u": lambda t: 20.0 * math.cos(2.5 * t)},
    )
    np.testing.assert_array_equal(driven.t, own.t)
    np.testing.assert_array_equal(driven.x, own.x)
    assert np.ptp(own.x[:, 0]) > 1.0  # it moved
    assert "inputs set from Python: u" in driven.provenance["flows"]


def test_failure_inside_the_location_raises_the_fmu_error(fmu_dir):
    """The FMU is terminated at the location's first trial (its first time off
    the grid of half steps) by its input's Python function: Illinois raises the
    FMUError of the FMU call that follows (setting that input)."""
    h = 1e-2
    flow = None

    def lam(t):
        if abs(t / (h / 2) - round(t / (h / 2))) > 1e-6:
            flow.instance._fmu.terminate()  # the FMU's SetTime now fails
        return 0.0

    flow = open_fmu(fmu_dir / "BouncingBall.fmu", "me", inputs={"lam": lam})
    floor = Edge(Guard(lambda t, x: x[0], "falling"), "model", _bounce, name="floor")
    system = HybridSystem([Mode("model", flow, (floor,))], "model", flow.x0)
    try:
        with pytest.raises(FMUError, match="fmi2SetReal returned error"):
            Halving(h=h, locate="illinois").run(system, 1.0)
    finally:
        system.close()


def _bounce(t, x):
    return np.array([x[0], -0.8 * x[1]])


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_non_finite_derivatives_mid_run_are_the_fmu_error(fmu_dir):
    """v = -g t overflows to -inf before h reaches the floor."""
    path = fmu_dir / "BouncingBallEvents.fmu"
    options = {"start": {"h": 1.79e308}, "parameters": {"g": 1.7e308}}
    with pytest.raises(FMUError, match="non-finite") as caught:
        run(path, Halving(h=1e-2), **options)
    t_overflow = np.finfo(float).max / 1.7e308  # 1.057 s
    message = str(caught.value)
    assert "get derivatives" in message
    t_failed = float(message.split("at t = ")[1].split(":")[0])
    assert t_overflow - 1e-2 < t_failed < t_overflow + 1e-2
