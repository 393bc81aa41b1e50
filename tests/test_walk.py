"""The walk that Halving and Relaxation share (methods/_walk): kept with its mode
between calls, and a fresh one where that one is busy."""

import numpy as np
import pytest

from fmibridge import (
    Edge,
    Guard,
    Halving,
    HybridSystem,
    Mode,
    NativeFlow,
    Relaxation,
    Status,
)
from fmibridge.models import bouncing_ball_impacts


def ball(nested=None):
    """A ball (g = 9.81, e = 0.8, from 1 m) whose first impact's reset runs
    `nested` on this same system, to 1 s, once; return it and that run's list."""
    flow = NativeFlow(lambda t, x, u: np.array([x[1], -9.81]), ["h", "v"])
    inner: list = []

    def reset(t, x):
        if nested is not None and not inner:
            inner.append(None)  # the inner run's own impact resets plainly
            inner[0] = nested.run(system, t_end=1.0)
        return np.array([x[0], -0.8 * x[1]])

    floor = Edge(
        Guard(lambda t, x: x[0], name="floor", direction="falling"),
        "flight",
        reset=reset,
    )
    system = HybridSystem([Mode("flight", flow, (floor,))], "flight", [1.0, 0.0])
    return system, inner


@pytest.mark.parametrize(
    "method",
    [Halving(h=1e-2), Relaxation(h=1e-2, eps=1e-6)],
    ids=["halving", "relaxation"],
)
def test_a_reset_that_runs_the_same_system_leaves_the_outer_walk_as_it_was(method):
    """The run inside the reset takes a walk of its own (the mode's is busy): the
    outer run is bit for bit the run without it, and the inner run finds the
    same first impact (analytic sqrt(2/g) = 0.451524 s)."""
    plain = method.run(ball()[0], t_end=3.0)
    system, inner = ball(method)
    outer = method.run(system, t_end=3.0)
    assert outer.status is Status.REACHED_END and len(outer.events) == 6
    assert outer.stats == plain.stats
    assert np.array_equal(outer.t, plain.t) and np.array_equal(outer.x, plain.x)
    assert [e.t for e in outer.events] == [e.t for e in plain.events]
    assert inner[0].status is Status.REACHED_END
    assert inner[0].events[0].t == outer.events[0].t
    assert outer.events[0].t == pytest.approx(bouncing_ball_impacts(1)[0], abs=1e-6)
