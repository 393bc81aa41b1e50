"""Model Exchange steps between events in one compiled loop over the FMU's C calls.

Each run is compared with the same run through the Python path (the flow's
`steps_inside` switched off): the compiled loop follows `Scheme.step` operation
by operation, and locates a crossing with the trials of `Halving._illinois`, so
samples, events and counts agree to round-off (here: exactly).
"""

import ctypes

import numpy as np
import pytest

from fmibridge import Edge, FMUError, Guard, Halving, HybridSystem, Mode
from fmibridge.core.integrators import EULER, MIDPOINT, RK4
from fmibridge.flows.fmu import fmu_event_edges, fmu_system, open_fmu
from fmibridge.flows.fmu_kernels import SET_TIME
from fmibridge.methods import Relaxation
from fmibridge.models import bouncing_ball_impacts

BALLS = ["BouncingBallEvents.fmu", "BouncingBallEvents_fmi3.fmu"]
ROUND_OFF = 1e-12  # s and m: the two paths do the same floating-point operations


def python_path(flow):
    """Switch off the flow's compiled loop and step, so the method steps in Python."""
    flow.steps_inside = lambda *args: None
    flow.advance = lambda t, x, h, scheme: scheme.step(flow.rhs, t, x, h)


def run(path, method, *, compiled=True, t_end=3.0, extra_edges=(), **options):
    system = fmu_system(path, "me", **options)
    flow = system.mode("model").flow
    if not compiled:
        python_path(flow)
    if extra_edges:
        mode = Mode("model", flow, fmu_event_edges(flow, "model") + extra_edges)
        system = HybridSystem([mode], "model", flow.x0)
    try:
        return method.run(system, t_end)
    finally:
        system.close()


def assert_same(ours, reference):
    assert ours.status == reference.status
    assert dict(ours.stats) == dict(reference.stats)
    assert ours.t.shape == reference.t.shape
    np.testing.assert_allclose(ours.t, reference.t, rtol=0, atol=ROUND_OFF)
    np.testing.assert_allclose(ours.x, reference.x, rtol=0, atol=ROUND_OFF)
    np.testing.assert_allclose(
        ours.event_times, reference.event_times, rtol=0, atol=ROUND_OFF
    )


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
def test_compiled_loop_matches_python_path(fmu_dir, name, method):
    ours = run(fmu_dir / name, method)
    reference = run(fmu_dir / name, method, compiled=False)
    assert_same(ours, reference)
    assert len(ours.event_times) >= 3
    if isinstance(method, Halving):  # the impacts themselves, to the bracket
        exact = bouncing_ball_impacts(3, e=0.8)
        assert np.max(np.abs(ours.event_times[:3] - exact)) < 1e-8


@pytest.mark.parametrize("name", BALLS)
@pytest.mark.parametrize("t_tol", [1e-6, 1e-10])
def test_compiled_location_matches_python_illinois(fmu_dir, name, t_tol):
    """The kernel's trials are Halving's: the same events, and n_rejected counts
    them alike (the kernel reports its trials)."""
    method = Halving(h=1e-2, integrator="rk4", t_tol=t_tol, locate="illinois")
    ours = run(fmu_dir / name, method)
    reference = run(fmu_dir / name, method, compiled=False)
    assert_same(ours, reference)
    assert ours.stats["n_rejected"] >= len(ours.event_times) >= 3


def test_compiled_loop_locates_the_crossing(fmu_dir):
    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        mode = system.mode("model")
        guards = [edge.guard for edge in mode.edges]
        flow, h, t_tol = mode.flow, 1e-2, 1e-10
        steps = flow.steps_inside(
            guards, 0.0, flow.x0, h, 3.0, RK4, 1000, 1e-9 * h, t_tol, 64
        )
        located = steps.bracket
        assert located.t == steps.t[-1]
        np.testing.assert_array_equal(located.x, steps.x[-1])
        assert 0 < located.hi - located.lo <= t_tol and 0 < located.n_trials <= 64
        # RK4 is exact on the parabola: the impact itself lies in the bracket
        first = bouncing_ball_impacts(1, e=0.8)[0]
        lo, hi = located.t + located.lo, located.t + located.hi
        assert lo - ROUND_OFF <= first <= hi + ROUND_OFF
        assert located.g_lo[0] >= 0.0 > located.g_hi[0]
        assert located.x_lo[0] == located.g_lo[0]  # the indicator is the height
    finally:
        system.close()


def test_compiled_loop_takes_the_steps_between_events(fmu_dir):
    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        mode = system.mode("model")
        guards = [edge.guard for edge in mode.edges]
        flow, h = mode.flow, 1e-2
        steps = flow.steps_inside(guards, 0.0, flow.x0, h, 3.0, RK4, 1000, 1e-9 * h)
        assert steps.bracket is None  # no location asked for
        # all steps up to, not including, the one crossing the first impact
        first = bouncing_ball_impacts(1, e=0.8)[0]
        assert len(steps.t) == int(first / h)
        np.testing.assert_allclose(steps.t, h * np.arange(1, len(steps.t) + 1))
        # RK4 on a parabola is exact: h = 1 - g t^2 / 2, v = -g t
        np.testing.assert_allclose(steps.x[:, 0], 1 - 9.81 * steps.t**2 / 2)
        np.testing.assert_allclose(steps.x[:, 1], -9.81 * steps.t)
        # Python's view of the FMU agrees afterwards: rhs and guards as before
        x = np.array([0.3, -1.0])
        np.testing.assert_array_equal(flow.rhs(0.5, x), [-1.0, -9.81])
        assert guards[0](0.5, x) == 0.3
    finally:
        system.close()


@pytest.mark.parametrize("scheme", [RK4, MIDPOINT, EULER], ids=lambda s: s.name)
@pytest.mark.parametrize("name", ["BouncingBallEvents.fmu", "BallOnSineSurface.fmu"])
def test_compiled_advance_is_the_python_step(fmu_dir, name, scheme):
    with open_fmu(fmu_dir / name, "me") as flow:
        indicators = [flow.event_indicator(i) for i in range(flow.instance.nz)]
        x = flow.x0 + 0.1
        y = flow.advance(0.2, x, 1e-2, scheme)
        z = [g(0.2 + 1e-2, y) for g in indicators]  # left by the compiled step
        flow._z_key = None
        assert [g(0.2 + 1e-2, y) for g in indicators] == z
        python_path(flow)
        np.testing.assert_array_equal(flow.advance(0.2, x, 1e-2, scheme), y)


def test_failed_fmu_call_in_compiled_advance_raises_fmu_error(fmu_dir):
    with open_fmu(fmu_dir / "BouncingBallEvents.fmu", "me") as flow:
        flow.instance._fmu.terminate()  # fmi2SetTime now returns fmi2Error
        with pytest.raises(FMUError, match="fmi2SetTime"):
            flow.advance(0.0, flow.x0, 1e-2, RK4)


def test_python_guard_falls_back_to_python_path(fmu_dir):
    """A mode with a guard that is not the FMU's own runs in Python, and right."""

    def ceiling(t, x):
        return 1.1 - x[0]  # the ball starts at 1 m and never rises again: never fires

    extra = (Edge(Guard(ceiling, "falling"), "model", name="ceiling"),)
    path = fmu_dir / "BouncingBallEvents.fmu"
    system = fmu_system(path, "me")
    try:
        flow = system.mode("model").flow
        guards = [e.guard for e in fmu_event_edges(flow, "model") + extra]
        assert flow.steps_inside(guards, 0.0, flow.x0, 1e-2, 1.0, RK4, 10, 0) is None
    finally:
        system.close()
    method = Halving(h=1e-2, integrator="rk4")
    ours = run(path, method, extra_edges=extra)
    reference = run(path, method)
    assert_same(ours, reference)


def test_guard_of_another_instance_is_not_ours(fmu_dir):
    path = fmu_dir / "BouncingBallEvents.fmu"
    with open_fmu(path, "me") as flow, open_fmu(path, "me") as other:
        guard = Guard(other.event_indicator(0), "either", reset_at="beyond")
        assert flow.steps_inside([guard], 0.0, flow.x0, 1e-2, 1.0, RK4, 10, 0) is None


def test_time_varying_input_falls_back_to_python_path(fmu_dir):
    path = fmu_dir / "ForcedOscillatorWithStop.fmu"
    flow = open_fmu(path, "me")
    try:
        names = [n for n, v in flow.archive.variables.items() if v.causality == "input"]
    finally:
        flow.close()
    if not names:
        pytest.skip("the FMU has no real input")
    with open_fmu(path, "me", inputs={names[0]: lambda t: 0.0}) as flow:
        guards = [e.guard for e in fmu_event_edges(flow, "model")]
        assert flow.steps_inside(guards, 0.0, flow.x0, 1e-2, 1.0, RK4, 10, 0) is None


def test_failed_fmu_call_ends_the_block_and_python_raises(fmu_dir):
    """A non-OK status inside the loop returns the steps so far (none here)."""
    with open_fmu(fmu_dir / "BouncingBallEvents.fmu", "me") as flow:
        guards = [e.guard for e in fmu_event_edges(flow, "model")]
        flow.instance._fmu.terminate()  # fmi2SetTime now returns fmi2Error
        steps = flow.steps_inside(guards, 0.0, flow.x0, 1e-2, 1.0, RK4, 10, 1e-11)
        assert len(steps.t) == 0
        with pytest.raises(FMUError, match="fmi2SetTime"):
            flow.rhs(0.0, flow.x0)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_non_finite_derivatives_mid_block_surface_as_fmu_error(fmu_dir):
    """v = -g t overflows to -inf before h reaches the floor: the same FMUError."""
    path = fmu_dir / "BouncingBallEvents.fmu"
    options = {"start": {"h": 1.79e308}, "parameters": {"g": 1.7e308}}
    method = Halving(h=1e-2)
    with open_fmu(path, "me", **options) as flow:
        guards = [e.guard for e in fmu_event_edges(flow, "model")]
        steps = flow.steps_inside(
            guards, 0.0, flow.x0, 1e-2, 3.0, method.scheme, 1000, 1e-11
        )
        t_overflow = np.finfo(float).max / 1.7e308  # 1.057 s
        assert 0 < len(steps.t) and t_overflow - 1e-2 < steps.t[-1] < t_overflow
    messages = []
    for compiled in (True, False):
        with pytest.raises(FMUError, match="non-finite") as caught:
            run(path, method, compiled=compiled, **options)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", BALLS)
def test_failed_fmu_call_during_location_gives_no_bracket(fmu_dir, name):
    """The FMU is terminated at the location's first trial (its first time off the
    grid of half steps): the block ends without a bracket, and Python raises."""
    h = 1e-2
    with open_fmu(fmu_dir / name, "me") as flow:
        guards = [e.guard for e in fmu_event_edges(flow, "model")]
        instance = flow.instance
        signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_double)
        set_time = signature(int(instance.c_calls[SET_TIME]))

        def terminate_off_grid(component, t):
            if abs(t / (h / 2) - round(t / (h / 2))) > 1e-6:
                instance._fmu.terminate()  # the FMU's SetTime now fails
            return set_time(component, t)

        hook = signature(terminate_off_grid)  # a name keeps the callback alive
        instance.c_calls = instance.c_calls.copy()
        instance.c_calls[SET_TIME] = ctypes.cast(hook, ctypes.c_void_p).value
        steps = flow.steps_inside(guards, 0.0, flow.x0, h, 3.0, RK4, 1000, 0, 1e-10, 64)
        first = bouncing_ball_impacts(1, e=0.8)[0]
        assert len(steps.t) == int(first / h) and steps.bracket is None
        with pytest.raises(FMUError, match="SetTime"):
            flow.rhs(0.0, flow.x0)
