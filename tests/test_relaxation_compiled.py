"""Relaxation on compiled models (numba f, guards and resets): the steps, trials
and strip transitions of Burden et al., Fig. 12, with the model's functions
called at their C addresses. A compiled model gives its Python twin's run."""

import functools

import numpy as np
import pytest

from fmibridge import (
    Completion,
    Edge,
    Guard,
    HybridSystem,
    Mode,
    NativeFlow,
    Relaxation,
    Status,
)
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.models import (
    bouncing_ball_impacts,
    bouncing_ball_zeno_time,
    forced_oscillator,
)
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2

G, E = 9.81, 0.8


def assert_same_run(a, b):
    assert a.stats == b.stats and a.status is b.status and a.detail == b.detail
    assert np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
    assert list(a.mode) == list(b.mode)
    assert np.array_equal(a.event_times, b.event_times)
    for p, q in zip(a.events, b.events, strict=True):
        assert (p.edge, p.source, p.target, p.simultaneous) == (
            q.edge,
            q.source,
            q.target,
            q.simultaneous,
        )
        assert np.array_equal(p.x_before, q.x_before)
        assert np.array_equal(p.x_after, q.x_after)


@pytest.mark.parametrize(
    ("params", "t_end", "eps"),
    [(EXAMPLE_2, 6.0, 2e-7), (EXAMPLE_1, 30.0, 1e-6)],
    ids=["example-2-sticking", "example-1"],
)
def test_a_compiled_oscillator_runs_as_its_python_model(params, t_end, eps):
    method = Relaxation(h=1e-2, eps=eps, max_events=1_000_000)
    fast = method.run(forced_oscillator(params, compiled=True), t_end)
    python = method.run(forced_oscillator(params), t_end)
    assert_same_run(python, fast)
    assert fast.status is Status.REACHED_END
    assert len(fast.events) >= 10


def test_logged_transitions_fired_in_place_stay_in_the_compiled_walk(monkeypatch):
    """A compiled self-loop's logged transitions (Example 2's impacts) go on in
    the walk unless the run's method reads each one (Completion): the run is
    its Python model's (each transition back in the loop, seen by the
    watchdog), in far fewer returns; under Completion, which attempts its inner
    method call by call, each impact still ends a call."""
    from fmibridge.methods.watchdog import Watchdog

    calls = []
    check = Watchdog.check
    monkeypatch.setattr(
        Watchdog,
        "check",
        lambda self, state, log: calls.append(state.t) or check(self, state, log),
    )
    method = Relaxation(h=1e-2, eps=2e-7, max_events=1_000_000)
    fast = method.run(forced_oscillator(EXAMPLE_2, compiled=True), 6.0)
    n_fast = len(calls)
    python = method.run(forced_oscillator(EXAMPLE_2), 6.0)
    assert_same_run(python, fast)
    assert len(fast.events) > 1_000 and n_fast < len(fast.events) / 10
    assert len(calls) - n_fast > len(python.events)
    calls.clear()  # Completion attempts its inner method's walk call by call
    attempt = Relaxation._attempt

    def counted(self, *args):
        step = attempt(self, *args)
        calls.append(step.state.t)
        return step

    monkeypatch.setattr(Relaxation, "_attempt", counted)
    completed = Completion(method).run(forced_oscillator(EXAMPLE_2, compiled=True), 6.0)
    impacts = [e.t for e in completed.events if e.edge == "stop"]
    assert len(impacts) >= 5 and set(impacts) <= set(calls)


def test_sticking_chatters_on_the_strip():
    """Example 2 sticks on [0, 2.498] s: thousands of strip waits, silent ones too."""
    method = Relaxation(h=1e-2, eps=2e-7, max_events=1_000_000)
    result = method.run(forced_oscillator(EXAMPLE_2, compiled=True), 2.4)
    assert result.status is Status.REACHED_END
    assert result.stats["n_silent_events"] > 1_000
    assert result.stats["n_silent_events"] + len(result.events) > 2_000


def _f(t, x):
    return np.array([x[1], -G])


def _floor(t, x):
    return x[0]


def _bounce(t, x):
    return np.array([x[0], -E * x[1]])


@functools.cache
def _compiled_parts():
    """The ball's flow, guard and reset, compiled once for every test here."""
    return (
        CompiledFlow(_f, ["h", "v"]),
        compiled(_floor),
        compiled(_bounce, kind="reset"),
    )


def _ball(kind, bounce=None, target="air"):
    """The ball as a Python model or a compiled one."""
    if kind == "compiled":
        flow, floor, reset = _compiled_parts()
    else:
        flow, floor, reset = NativeFlow(_f, ["h", "v"]), _floor, _bounce
    edge = Edge(Guard(floor, name="floor"), target, bounce or reset, name="bounce")
    modes = [Mode("air", flow, (edge,))]
    if target != "air":
        modes.append(Mode(target, flow))
    return HybridSystem(modes, "air", [1.0, 0.0])


KINDS = ["python", "compiled"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_ball_passes_its_zeno_point(kind):
    t_end = bouncing_ball_zeno_time(g=G, e=E) + 0.5
    result = Relaxation(h=1e-2, eps=1e-6, max_events=100_000).run(_ball(kind), t_end)
    assert result.status is Status.REACHED_END
    exact = bouncing_ball_impacts(5, g=G, e=E)
    np.testing.assert_allclose(result.event_times[:5], exact, atol=1e-4)
    assert result.t[-1] == t_end and len(result.events) > 100


def test_a_compiled_ball_runs_as_its_python_model():
    method = Relaxation(h=1e-2, eps=1e-6, max_events=100_000)
    t_end = bouncing_ball_zeno_time(g=G, e=E) + 0.5
    python = method.run(_ball("python"), t_end)
    assert_same_run(python, method.run(_ball("compiled"), t_end))


@pytest.mark.parametrize("kind", KINDS)
def test_the_output_grid_keeps_its_rows_and_each_event(kind):
    method, t_eval = Relaxation(h=1e-2, eps=1e-6), np.linspace(0.0, 3.0, 31)
    result = method.run(_ball(kind), 3.0, t_eval=t_eval)
    n_events = len(result.events)
    assert n_events >= 5 and len(result.t) == len(t_eval) + 2 * n_events
    assert set(t_eval) <= set(result.t)


def test_a_transition_to_another_mode():
    stop = compiled(lambda t, x: np.array([x[0], 0.0]), kind="reset")
    result = Relaxation(h=1e-2, eps=1e-6).run(_ball("compiled", stop, "ground"), 2.0)
    (event,) = result.events
    assert (event.source, event.target) == ("air", "ground")
    assert event.t == pytest.approx(np.sqrt(2.0 / G), abs=1e-5)  # within the strip
    assert result.mode[-1] == "ground" and event.x_after[1] == 0.0
    assert 0.0 <= event.x_before[0] <= 1e-6 * 1e-6  # on the guard (PROJECT_GTOL eps)


@pytest.mark.parametrize("kind", KINDS)
def test_a_bound_stops_it_naming_the_accumulation(kind):
    """max_events hit: MAX_EVENTS, with the Zeno note of the series seen."""
    with pytest.warns(match="max_events"):
        result = Relaxation(h=1e-2, eps=1e-6, max_events=40).run(_ball(kind), 10.0)
    assert result.status is Status.MAX_EVENTS and len(result.events) == 40
    assert "accumulate at" in result.detail
