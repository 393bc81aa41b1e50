"""Relaxation's compiled loop (`_relaxation_kernels.relax`): the steps, trials and
strip transitions of Burden et al., Fig. 12, taken as the Python code takes them,
bit for bit. The Python runs use the same compiled flow and guards with the reset
in Python, which keeps the transitions out of the kernel."""

import functools

import numpy as np
import pytest
from test_halving_compiled import assert_same_run, python_reset

from fmibridge import Edge, Guard, HybridSystem, Mode, Relaxation, Status
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.models import (
    bouncing_ball_impacts,
    bouncing_ball_zeno_time,
    forced_oscillator,
)
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2

G, E = 9.81, 0.8


@pytest.mark.parametrize(
    ("params", "t_end", "eps"),
    [(EXAMPLE_2, 6.0, 2e-7), (EXAMPLE_1, 30.0, 1e-6)],
    ids=["example-2-sticking", "example-1"],
)
def test_strips_in_the_kernel_are_the_python_strips(params, t_end, eps):
    method = Relaxation(h=1e-2, eps=eps, max_events=1_000_000)
    fast_system = forced_oscillator(params, compiled=True)
    fast = method.run(fast_system, t_end)
    python = method.run(python_reset(fast_system, params), t_end)
    assert_same_run(python, fast)
    assert fast.status is Status.REACHED_END
    assert "free: compiled steps and strips x" in fast.provenance["loops"]
    assert "strips" not in python.provenance["loops"]
    assert len(fast.events) >= 10


def test_sticking_chatters_on_the_strip_in_the_kernel():
    """Example 2 sticks on [0, 2.498] s: thousands of strip waits, silent ones too."""
    method = Relaxation(h=1e-2, eps=2e-7, max_events=1_000_000)
    fast = method.run(forced_oscillator(EXAMPLE_2, compiled=True), 2.4)
    assert fast.stats["n_silent_events"] + len(fast.events) > 2_000
    assert fast.provenance["loops"].startswith("free: compiled steps and strips x")


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


def _ball(bounce, target="air"):
    flow, floor, _ = _compiled_parts()
    edge = Edge(Guard(floor, name="floor"), target, bounce, name="bounce")
    modes = [Mode("air", flow, (edge,))]
    if target != "air":
        modes.append(Mode(target, flow))
    return HybridSystem(modes, "air", [1.0, 0.0])


def test_the_ball_passes_its_zeno_point_as_in_python():
    t_end = bouncing_ball_zeno_time(g=G, e=E) + 0.5
    method = Relaxation(h=1e-2, eps=1e-6, max_events=100_000)
    fast = method.run(_ball(_compiled_parts()[2]), t_end)
    python = method.run(_ball(_bounce), t_end)
    assert_same_run(python, fast)
    assert fast.status is Status.REACHED_END
    exact = bouncing_ball_impacts(5, g=G, e=E)
    np.testing.assert_allclose(fast.event_times[:5], exact, atol=1e-4)
    assert "air: compiled steps and strips x" in fast.provenance["loops"]


def test_the_output_grid_keeps_the_same_rows():
    method, t_eval = Relaxation(h=1e-2, eps=1e-6), np.linspace(0.0, 3.0, 31)
    fast = method.run(_ball(_compiled_parts()[2]), 3.0, t_eval=t_eval)
    python = method.run(_ball(_bounce), 3.0, t_eval=t_eval)
    assert_same_run(python, fast)
    assert len(fast.events) >= 5 and len(fast.t) == len(t_eval) + 2 * len(fast.events)


def test_a_transition_to_another_mode_is_left_to_python():
    stop = compiled(lambda t, x: np.array([x[0], 0.0]), kind="reset")
    result = Relaxation(h=1e-2, eps=1e-6).run(_ball(stop, "ground"), 2.0)
    (event,) = result.events
    assert (event.source, event.target) == ("air", "ground")
    assert event.t == pytest.approx(np.sqrt(2.0 / G), abs=1e-5)  # within the strip
    loops = result.provenance["loops"]
    assert "air: compiled steps and strips x" in loops and "air: python steps" in loops


def test_a_bound_stops_it_with_the_python_detail():
    """max_events hit inside a kernel call: same samples, same Zeno note."""
    method = Relaxation(h=1e-2, eps=1e-6, max_events=40)
    with pytest.warns(match="max_events"):
        fast = method.run(_ball(_compiled_parts()[2]), 10.0)
    with pytest.warns(match="max_events"):
        python = method.run(_ball(_bounce), 10.0)
    assert_same_run(python, fast)
    assert fast.status is Status.MAX_EVENTS and fast.detail == python.detail
    assert "accumulate at" in fast.detail
