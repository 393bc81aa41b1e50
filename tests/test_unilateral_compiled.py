"""Unilateral's compiled loop on a compiled model and on a Python model (two user
inputs): compiled functions are called directly, Python ones called back, and a
compiled model gives its Python model's run."""

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
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.methods import Completion, Unilateral
from fmibridge.methods.unilateral import BAND_C, EndpointAdams
from fmibridge.models import forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2


def assert_same_run(python, fast):
    """Same stats, samples, modes and events, bit for bit."""
    assert python.stats == fast.stats
    assert python.status is fast.status
    assert np.array_equal(python.t, fast.t) and np.array_equal(python.x, fast.x)
    assert list(python.mode) == list(fast.mode)
    assert [e.edge for e in python.events] == [e.edge for e in fast.events]
    assert np.array_equal(python.event_times, fast.event_times)


@pytest.mark.parametrize(
    "method",
    [Unilateral(h=1e-2), Unilateral(h=1e-2, gamma=0.5, rtol=1e-6), EndpointAdams()],
    ids=["unilateral", "gamma-rtol", "endpoint"],
)
def test_example_1_compiled_model_gives_the_python_models_run(method):
    python = method.run(forced_oscillator(EXAMPLE_1), 30.0)
    fast = method.run(forced_oscillator(EXAMPLE_1, compiled=True), 30.0)
    assert_same_run(python, fast)
    assert len(fast.events) >= 8 and fast.stats["n_steps"] > 1000  # endpoint: 8


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_completion_around_unilateral_passes_both_zeno_points(compiled):
    method, t_end = Completion(Unilateral(h=1e-2, tol=1e-12)), EXAMPLE_2.t_max
    result = method.run(forced_oscillator(EXAMPLE_2, compiled=compiled), t_end)
    assert result.status is Status.REACHED_END
    assert [e.edge for e in result.events].count("zeno") == 2


def _wall_system(flow, guard_fn, gradient=None):
    if gradient is not None:
        guard_fn.gradient = gradient
    wall = Edge(Guard(guard_fn, name="wall"), "rest", name="wall")
    rest = Mode("rest", flow)
    return HybridSystem([Mode("go", flow, (wall,)), rest], "go", [0.0, 1.0])


def _f(t, x):
    return np.array([x[1], 1.0 + 0.0 * x[0]])


@pytest.mark.parametrize("is_compiled", [False, True], ids=["python", "compiled"])
def test_a_gradient_places_the_wall_event(is_compiled):
    """x'' = 1 from x = 0, v = 1: the wall at x = 1 is reached at t = sqrt(3) - 1."""

    def wall(t, x):
        return 1.0 - x[0]

    def gradient(t, x):
        return np.array([-1.0, 0.0]), 0.0

    if is_compiled:
        system = _wall_system(
            CompiledFlow(_f, ["x", "v"]),
            compiled(wall),
            compiled(gradient, kind="gradient"),
        )
    else:
        system = _wall_system(NativeFlow(_f, ["x", "v"]), wall, gradient)
    [event] = Unilateral(tol=1e-9).run(system, 2.0).events
    assert 0.0 <= 1.0 - event.x_before[0] <= 2 * 1e-9 / BAND_C
    assert event.t == pytest.approx(math.sqrt(3.0) - 1.0, abs=1e-8)


def test_python_guards_and_gradients_serve_a_compiled_flow():
    flow = CompiledFlow(_f, ["x", "v"])
    python_guard = _wall_system(flow, lambda t, x: 1.0 - x[0])
    result = Unilateral(tol=1e-9).run(python_guard, 2.0)
    assert result.events[0].t == pytest.approx(math.sqrt(3.0) - 1.0, abs=1e-8)
    python_gradient = _wall_system(
        flow, compiled(lambda t, x: 1.0 - x[0]), lambda t, x: (np.array([-1.0, 0]), 0.0)
    )
    result = Unilateral(tol=1e-9).run(python_gradient, 2.0)
    assert result.events[0].t == pytest.approx(math.sqrt(3.0) - 1.0, abs=1e-8)


def test_a_gradient_of_the_wrong_size_is_refused_with_its_name():
    system = _wall_system(
        NativeFlow(_f, ["x", "v"]), lambda t, x: 1.0 - x[0], lambda t, x: ([-1.0], 0.0)
    )
    with pytest.raises(
        FmibridgeError,
        match=r"gradient of guard `<lambda>` returned arrays of shapes \(1, 1\)",
    ):
        Unilateral(tol=1e-9).run(system, 2.0)


@pytest.mark.parametrize("is_compiled", [False, True], ids=["python", "compiled"])
def test_a_guard_that_turns_nan_is_named(is_compiled):
    def gap(t, x):
        return 2.0 - x[0] if t < 0.5 else math.nan

    flow = CompiledFlow(_f, ["x", "v"]) if is_compiled else NativeFlow(_f, ["x", "v"])
    system = _wall_system(flow, compiled(gap) if is_compiled else gap)
    with pytest.raises(FmibridgeError, match="Guard 'wall' of mode 'go' returned nan"):
        Unilateral(tol=1e-8).run(system, 1.0)


def test_a_flow_of_the_wrong_size_is_refused_before_the_loop_reads_it():
    calls = []

    def f(t, x):
        calls.append(t)
        return np.array([1.0]) if len(calls) > 3 else np.array([x[1], 1.0])

    system = _wall_system(NativeFlow(f, ["x", "v"]), lambda t, x: 5.0 - x[0])
    with pytest.raises(FmibridgeError, match="returned 1 value"):
        Unilateral().run(system, 1.0)


def test_the_block_bound_holds_and_says_so():
    system = forced_oscillator(EXAMPLE_1, compiled=True)
    with pytest.warns(match="max_steps"):
        result = Unilateral(h=1.0, max_steps=100).run(system, 10.0)
    assert result.status is Status.MAX_STEPS and result.stats["n_steps"] == 100


def test_python_callbacks_may_keep_the_states_they_are_given():
    """The loop writes x^p and x^c to a workspace; a Python flow, guard or
    gradient that keeps its x sees it unchanged after the run (each call got
    its own array)."""
    kept = []

    def f(t, x, u):
        kept.append((x, x.copy()))
        return np.array([x[1], 1.0])

    def wall(t, x):
        kept.append((x, x.copy()))
        return 1.0 - x[0]

    def gradient(t, x):
        kept.append((x, x.copy()))
        return np.array([-1.0, 0.0]), 0.0

    system = _wall_system(NativeFlow(f, ["x", "v"]), wall, gradient)
    result = Unilateral(tol=1e-9).run(system, 2.0)
    assert result.events[0].t == pytest.approx(math.sqrt(3.0) - 1.0, abs=1e-8)
    assert len(kept) > 100
    assert all(np.array_equal(x, at_call) for x, at_call in kept)
