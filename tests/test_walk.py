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


@pytest.mark.parametrize(
    "method", [Halving(h=1e-3), Relaxation(h=1e-3, eps=1e-6)], ids=lambda m: m.name
)
def test_output_times_end_steps_inside_one_call(method, monkeypatch):
    """With t_eval, a step ends on each output time and the walk goes on: the
    compiled oscillator's 3001 output times take a few returns of the walk to
    the watchdog (at events, strips and blocks), not one each, and the samples
    are those of the steps."""
    from fmibridge.methods.watchdog import Watchdog
    from fmibridge.models import forced_oscillator
    from fmibridge.validation import EXAMPLE_1

    system = forced_oscillator(EXAMPLE_1, compiled=True)
    grid = np.linspace(0.0, 3.0, 3001)
    every_step = method.run(system, 3.0)
    calls = []
    check = Watchdog.check
    monkeypatch.setattr(
        Watchdog, "check", lambda self, *args: calls.append(None) or check(self, *args)
    )
    on_grid = method.run(system, 3.0, t_eval=grid)
    assert 1 <= len(calls) < 30, len(calls)  # one per output time before: 3001
    assert len(on_grid.events) == len(every_step.events) >= 1
    event_rows = np.isin(on_grid.t, on_grid.event_times)
    np.testing.assert_array_equal(on_grid.t[~event_rows], grid)
    # before the first event the steps of h land on the output times (to the
    # round-off of summed h); after it they start from the event's time
    before = grid[grid < on_grid.events[0].t]
    nearest = np.searchsorted(every_step.t, before - 1e-9)
    np.testing.assert_allclose(
        on_grid.x[: len(before)], every_step.x[nearest], rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    "method", [Halving(h=1e-3), Relaxation(h=1e-3, eps=1e-6)], ids=lambda m: m.name
)
def test_a_walk_calls_no_python_per_output_time_and_reads_its_method_once(
    method, monkeypatch
):
    """The walk finds each next output time in C (`Walk.next_stop`) and reads its
    method's parameters once per run (`Walk.read_settings`): over 3001 output
    times and six impacts, `OutputGrid.next_after` is never called and the
    method's `location_tolerance` once, and every impact is logged with it at
    its analytic time (to 1e-5 s: each of Relaxation's strips delays the impacts
    after it by up to eps)."""
    from fmibridge.core.output_grid import OutputGrid

    calls: list[str] = []
    next_after, tolerance = OutputGrid.next_after, type(method).location_tolerance
    monkeypatch.setattr(
        OutputGrid,
        "next_after",
        lambda self, *args: calls.append("next_after") or next_after(self, *args),
    )
    monkeypatch.setattr(
        type(method),
        "location_tolerance",
        property(lambda self: calls.append("tolerance") or tolerance.fget(self)),
    )
    result = method.run(ball()[0], 3.0, t_eval=np.linspace(0.0, 3.0, 3001))
    assert calls == ["tolerance"]
    assert [e.t_tol for e in result.events] == [tolerance.fget(method)] * 6
    np.testing.assert_allclose(
        result.event_times, bouncing_ball_impacts(6), rtol=0, atol=1e-5
    )


@pytest.mark.parametrize(
    "method", [Halving(h=1e-3), Relaxation(h=1e-3, eps=1e-6)], ids=lambda m: m.name
)
def test_a_run_enters_compiled_code_once_and_the_watchdog_sees_each_event(
    method, monkeypatch
):
    """`Method.run` makes one compiled call (`_walk.drive`), which takes the
    walk in C: the Python route to it (`base.attempt`, through
    `Method._attempt`) is never taken, and the watchdog is called back after
    each of the walk's returns, at least once per impact (six in 3 s)."""
    from fmibridge.methods import base
    from fmibridge.methods.watchdog import Watchdog

    calls: list[str] = []
    attempt, check = base.attempt, Watchdog.check
    monkeypatch.setattr(
        base, "attempt", lambda *args: calls.append("attempt") or attempt(*args)
    )
    monkeypatch.setattr(
        Watchdog,
        "check",
        lambda self, *args: calls.append("check") or check(self, *args),
    )
    result = method.run(ball()[0], 3.0)
    assert "attempt" not in calls
    assert calls.count("check") >= len(result.events) == 6
    np.testing.assert_allclose(
        result.event_times, bouncing_ball_impacts(6), rtol=0, atol=1e-5
    )


def test_a_subclass_that_attempts_its_own_way_is_called_and_runs_the_same():
    """A Halving subclass with its own `_attempt` is attempted through it (the
    compiled loop does not bypass it), and its run is Halving's."""
    import dataclasses

    seen: list[float] = []

    @dataclasses.dataclass(frozen=True)
    class Counted(Halving):
        def _attempt(self, system, state, t_end, log):
            seen.append(state.t)
            return super()._attempt(system, state, t_end, log)

    plain = Halving(h=1e-3).run(ball()[0], 3.0)
    counted = Counted(h=1e-3).run(ball()[0], 3.0)
    assert len(seen) >= len(counted.events) == 6
    assert np.array_equal(counted.t, plain.t) and np.array_equal(counted.x, plain.x)
