"""Halving's Illinois location (`core.events`), on numba-compiled models.

Compiled guards and the same guards in Python give the same runs, exactly: the
loop is one, only where it finds the guard's value differs; a NativeFlow agrees to
round-off (exactly, where numba's and numpy's libm agree).
"""

import dataclasses
import functools
import math

import numpy as np
import pytest

from fmibridge import Edge, Guard, Halving, HybridSystem, Mode
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.methods import Completion
from fmibridge.models import bouncing_ball, bouncing_ball_impacts, forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2


def python_guards(system):
    """The same system with each compiled guard's Python function (numba's
    `py_func`): the compiled loop calls it back instead of calling machine code."""
    modes = [
        dataclasses.replace(
            mode,
            edges=tuple(
                dataclasses.replace(
                    edge,
                    guard=dataclasses.replace(edge.guard, fn=edge.guard.fn.py_func),
                )
                for edge in mode.edges
            ),
        )
        for mode in system.modes.values()
    ]
    return HybridSystem(modes, system.initial_mode, system.x0)


@functools.cache
def functions(name):
    """Compile a model's f and guards once: flows built from them share the
    compiled loops, so each test compiles nothing new."""
    if name == "ball":
        f, guards = (lambda t, x: np.array([x[1], -9.81])), [lambda t, x: x[0]]
    elif name == "directions":
        f = lambda t, x: np.array([1.0])  # noqa: E731
        guards = [lambda t, x: x[0] - 0.3, lambda t, x: x[0] - 0.5]
        guards += [lambda t, x: 0.7 - x[0]]
    elif name == "undefined in time":
        f, guards = _in_time, [lambda t, x: 0.7 - x[0]]
    else:
        f, guards = (lambda t, x: np.array([1.0])), [_wall]
    return compiled(f, kind="rhs"), [compiled(g) for g in guards]


def _in_time(t, x):
    return np.array([3.0 * (1.0 - t) ** 2 + 0.0 * math.sqrt((t - 0.55) * (t - 0.95))])


def _wall(t, x):
    return 1.0 - x[0] + 0.0 * math.sqrt((x[0] - 1.0) * (x[0] - 1.1))


def compiled_ball():
    f, (floor,) = functions("ball")
    reset = lambda t, x: x * np.array([1.0, -0.8])  # noqa: E731
    edge = Edge(Guard(floor), "flight", reset, name="floor")
    return HybridSystem(
        [Mode("flight", CompiledFlow(f, ["h", "v"]), (edge,))], "flight", [1.0, 0.0]
    )


def three_directions():
    """x = t: a rising guard at 0.3, then 'either' at 0.5 and falling at 0.7."""
    f, (low, mid, top) = functions("directions")
    flow = CompiledFlow(f, ["x"])
    low = Edge(Guard(low, "rising"), "b", name="low")
    mid = Edge(Guard(mid, "either"), "c", name="mid")
    top = Edge(Guard(top, "falling"), "d", name="top")
    modes = [Mode("a", flow, (low,)), Mode("b", flow, (mid, top))]
    modes += [Mode("c", flow, (top,)), Mode("d", flow)]
    return HybridSystem(modes, "a", [0.0])


def undefined_in_time():
    """x = 1 - (1 - t)**3 (exact under RK4), f undefined for 0.55 < t < 0.95; the
    guard 0.7 - x. The step of 1 from t = 0 evaluates f at 0, 0.5 and 1 only, so
    it is finite; its first trial (the secant, 0.7) is not."""
    f, (top,) = functions("undefined in time")
    edge = Edge(Guard(top, name="top"), "after")
    after = CompiledFlow(functions("directions")[0], ["x"])  # x' = 1
    return HybridSystem(
        [Mode("before", CompiledFlow(f, ["x"]), (edge,)), Mode("after", after)],
        "before",
        [0.0],
    )


def undefined_beyond():
    """x = t towards a guard 1 - x that is undefined just beyond (1 < x < 1.1)."""
    f, (wall,) = functions("undefined beyond")
    edge = Edge(Guard(wall, name="wall"), "after")
    flow = CompiledFlow(f, ["x"])
    return HybridSystem(
        [Mode("before", flow, (edge,)), Mode("after", flow)], "before", [0.0]
    )


CASES = {
    "ball": (compiled_ball, Halving(h=1e-2, locate="illinois"), 3.0),
    "directions": (three_directions, Halving(h=0.07, locate="illinois"), 1.0),
}


@pytest.mark.parametrize("name", CASES)
def test_guards_called_back_in_python_give_the_same_run_exactly(name):
    make, method, t_end = CASES[name]
    compiled_guards = method.run(make(), t_end)
    python = method.run(python_guards(make()), t_end)
    assert compiled_guards.status.is_success and len(compiled_guards.events) >= 1
    assert dict(compiled_guards.stats) == dict(python.stats)
    np.testing.assert_array_equal(compiled_guards.event_times, python.event_times)
    np.testing.assert_array_equal(compiled_guards.t, python.t)
    np.testing.assert_array_equal(compiled_guards.x, python.x)


def assert_same_events(ours, native):
    assert dict(ours.stats) == dict(native.stats)
    assert [e.edge for e in ours.events] == [e.edge for e in native.events]
    np.testing.assert_allclose(ours.event_times, native.event_times, rtol=0, atol=1e-12)


def test_example_1_matches_the_native_flow():
    method = Halving(h=1e-2, locate="illinois")
    ours = method.run(forced_oscillator(EXAMPLE_1, compiled=True), EXAMPLE_1.t_max)
    native = method.run(forced_oscillator(EXAMPLE_1), EXAMPLE_1.t_max)
    assert len(ours.events) == 49
    assert_same_events(ours, native)


def test_the_compiled_ball_matches_the_native_ball_and_the_exact_impacts():
    method = Halving(h=1e-2, locate="illinois")
    ours, native = method.run(compiled_ball(), 3.0), method.run(bouncing_ball(), 3.0)
    assert_same_events(ours, native)
    errors = ours.event_times - bouncing_ball_impacts(len(ours.events))
    assert np.max(np.abs(errors)) < 1e-9, errors


def test_completion_on_example_2_matches_the_native_flow():
    method = Completion(
        Halving(h=0.2, integrator="rk4", locate="illinois"),
        eps_q=1e-5,
        eps_t=1e-2,
        eps_v=1e-2,
    )
    ours = method.run(forced_oscillator(EXAMPLE_2, compiled=True), EXAMPLE_2.t_max)
    native = method.run(forced_oscillator(EXAMPLE_2), EXAMPLE_2.t_max)
    assert ours.status.is_success and len(ours.events) >= 10
    assert_same_events(ours, native)


def test_a_non_finite_trial_is_bisected_and_the_crossing_still_found():
    result = Halving(h=1.0, locate="illinois").run(undefined_in_time(), 1.0)
    (event,) = result.events
    assert event.t == pytest.approx(1.0 - 0.3 ** (1 / 3), abs=1e-10)


def test_a_guard_undefined_beyond_its_surface_fires_on_it():
    with np.errstate(invalid="ignore"):
        result = Halving(h=0.3, locate="illinois").run(undefined_beyond(), 1.5)
    (event,) = result.events
    assert event.t == pytest.approx(1.0, abs=1e-10)
    assert event.x_before[0] == pytest.approx(1.0, abs=1e-10)
