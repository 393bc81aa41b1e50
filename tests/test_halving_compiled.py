"""Halving's firing (`methods._firing`): a compiled reset fires as the same reset
in Python does, and a bad reset is named."""

import numpy as np
import pytest

from fmibridge import (
    Edge,
    FmibridgeError,
    Guard,
    Halving,
    HybridSystem,
    Mode,
)
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.methods import Completion
from fmibridge.models import forced_oscillator
from fmibridge.models.oscillator import reset
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2


def python_reset(system, params):
    """The same compiled flow and guard, the reset in Python: Halving fires there."""
    mode = system.mode("free")
    (edge,) = mode.edges
    python_edge = Edge(edge.guard, edge.target, reset(params), name=edge.name)
    free = Mode("free", mode.flow, (python_edge,))
    return HybridSystem(
        [free], "free", system.x0, constraint=system.constraint, name=system.name
    )


def assert_same_run(python, fast):
    assert python.stats == fast.stats and python.status is fast.status
    assert np.array_equal(python.t, fast.t) and np.array_equal(python.x, fast.x)
    assert list(python.mode) == list(fast.mode)
    assert np.array_equal(python.event_times, fast.event_times)
    for a, b in zip(python.events, fast.events, strict=True):
        assert (a.edge, a.source, a.target, a.simultaneous) == (
            b.edge,
            b.source,
            b.target,
            b.simultaneous,
        )
        assert np.array_equal(a.x_before, b.x_before)
        assert np.array_equal(a.x_after, b.x_after)


@pytest.mark.parametrize(
    ("method", "params", "t_end"),
    [
        (Halving(h=1e-2, locate="illinois"), EXAMPLE_1, 30.0),
        (
            Completion(
                Halving(h=0.2, integrator="rk4", locate="illinois"),
                eps_q=1e-5,
                eps_t=0.1,
                eps_v=0.1,
            ),
            EXAMPLE_2,
            EXAMPLE_2.t_max,
        ),
    ],
    ids=["example-1", "completion-example-2"],
)
def test_firing_in_the_kernel_is_firing_in_python(method, params, t_end):
    fast_system = forced_oscillator(params, compiled=True)
    fast = method.run(fast_system, t_end)
    python = method.run(python_reset(fast_system, params), t_end)
    assert_same_run(python, fast)
    assert len(fast.events) >= 10


def _f(t, x):
    return np.array([x[1], -1.0])


def _floor(t, x):
    return x[0]


def _system(bounce, target="air"):
    flow = CompiledFlow(_f, ["h", "v"])
    edge = Edge(Guard(compiled(_floor), name="floor"), target, bounce, name="bounce")
    modes = [Mode("air", flow, (edge,))]
    if target != "air":
        modes.append(Mode(target, flow))
    return HybridSystem(modes, "air", [1.0, 0.0])


def test_a_reset_that_returns_nan_is_named():
    bounce = compiled(lambda t, x: x * np.nan, kind="reset")
    with pytest.raises(FmibridgeError, match="Reset .* of edge 'bounce' returned"):
        Halving(h=1e-2, locate="illinois").run(_system(bounce), 2.0)


def test_a_reset_that_leaves_the_state_beyond_its_guard_is_refused():
    bounce = compiled(lambda t, x: np.array([x[0] - 0.5, -x[1]]), kind="reset")
    with pytest.raises(FmibridgeError, match="leaves the state beyond its own guard"):
        Halving(h=1e-2, locate="illinois").run(_system(bounce), 2.0)


def test_a_reset_to_another_mode_fires_there():
    stop = compiled(lambda t, x: np.array([x[0], 0.0]), kind="reset")
    result = Halving(h=1e-2, locate="illinois").run(_system(stop, "ground"), 2.0)
    (event,) = result.events
    assert (event.source, event.target) == ("air", "ground")
    assert event.t == pytest.approx(np.sqrt(2.0), abs=1e-10)  # h = 1 - t^2 / 2
    assert event.x_after[1] == 0.0 and result.mode[-1] == "ground"
