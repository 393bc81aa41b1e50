"""Completion around Halving (Illinois) on the compiled oscillator: the runs end
where they should, with the releases and Zeno times of the exact solution, the
same stops, bounds and warnings, and the same results with the reset in Python
(Or and Ames, Sec. V)."""

import dataclasses
import warnings

import numpy as np
import pytest

from fmibridge import Edge, FmibridgeWarning, Halving, HybridSystem, Mode, Status
from fmibridge.methods import Completion
from fmibridge.models import forced_oscillator
from fmibridge.models.oscillator import reset
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution


def python_reset(system, params):
    """The same compiled flow and guard, the reset in Python."""
    mode = system.mode("free")
    (edge,) = mode.edges
    python_edge = Edge(edge.guard, edge.target, reset(params), name=edge.name)
    free = Mode("free", mode.flow, (python_edge,))
    return HybridSystem(
        [free], "free", system.x0, constraint=system.constraint, name=system.name
    )


def runs(params, t_end, halving=None, **options):
    """The same Completion on the compiled oscillator, its reset compiled and in
    Python, with the warnings each run gave."""
    inner = halving or Halving(h=0.2, integrator="rk4", locate="illinois")
    system = forced_oscillator(params, compiled=True)
    out = []
    for which in (system, python_reset(system, params)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FmibridgeWarning)
            result = Completion(inner, **options).run(which, t_end)
        out.append((result, [str(w.message) for w in caught]))
    return out


def assert_same(compiled, python):
    (a, warned_a), (b, warned_b) = compiled, python
    assert a.stats == b.stats and a.status is b.status and a.detail == b.detail
    assert np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)
    assert list(a.mode) == list(b.mode)
    np.testing.assert_array_equal(a["lam"], b["lam"])
    for e, f in zip(a.events, b.events, strict=True):
        assert (e.t, e.edge, e.source, e.target) == (f.t, f.edge, f.source, f.target)
        assert np.array_equal(e.x_before, f.x_before)
        assert np.array_equal(e.x_after, f.x_after)
    assert warned_a == warned_b


BENCH = {"eps_q": 1e-5, "eps_t": 0.1, "eps_v": 0.1}


@pytest.mark.parametrize(
    ("t_end", "options"),
    [
        (EXAMPLE_2.t_max, BENCH),
        (EXAMPLE_2.t_max, {"eps_q": 1e-5, "eps_t": 1e-2, "eps_v": 1e-2}),
        (EXAMPLE_2.t_max, {**BENCH, "switch": "truncation"}),
        (4.9, BENCH),  # ends in a flight between impacts
        (9.0, BENCH),  # ends in the flight after a lift-off
    ],
    ids=["bench", "tight", "truncation", "mid-series", "lifted"],
)
def test_the_run_ends_at_t_end_and_a_python_reset_changes_nothing(t_end, options):
    compiled, python = runs(EXAMPLE_2, t_end, **options)
    assert_same(compiled, python)
    result = compiled[0]
    assert result.status is Status.REACHED_END and result.t[-1] == t_end


def test_example_2_releases_and_zeno_times():
    """The lift-offs at the exact releases (Burden et al., eq. 28 and text after
    it); the switches after the impacts of each series, before the release."""
    ((result, _), _) = runs(EXAMPLE_2, EXAMPLE_2.t_max, **BENCH)
    edges = [e.edge for e in result.events]
    assert edges == ["lift-off", "rearm", *["stop"] * 4, "zeno"] * 2
    releases = [e.t for e in result.events if e.edge == "lift-off"]
    exact = [t for _, t in exact_solution(EXAMPLE_2).sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)
    assert set(result.mode) == {"free", "free:lifted", "constrained"}


def test_a_long_impact_series_is_followed_by_the_watchdog():
    """Example 1 impacts without a pause: the run goes on through its series."""
    compiled, python = runs(EXAMPLE_1, 30.0, **BENCH)
    assert_same(compiled, python)
    assert compiled[0].status is Status.REACHED_END
    assert len(compiled[0].events) >= 10


@pytest.mark.parametrize("bound", [{"max_steps": 20}, {"max_events": 5}])
def test_bounds_stop_the_run(bound):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        compiled, python = runs(EXAMPLE_2, EXAMPLE_2.t_max, **BENCH, **bound)
    assert_same(compiled, python)
    stop = Status.MAX_STEPS if "max_steps" in bound else Status.MAX_EVENTS
    assert compiled[0].status is stop


def test_a_series_completion_does_not_truncate_stops_with_the_watchdog():
    """Impacts placed to 1e-2 s, eps_t too tight for the geometric test: the
    impacts go on until the watchdog stops the run (the stop chatters)."""
    coarse = Halving(h=0.2, locate="illinois", t_tol=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        compiled, python = runs(
            EXAMPLE_2, EXAMPLE_2.t_max, coarse, eps_q=1e-3, eps_t=1e-4, eps_v=0.1
        )
    assert_same(compiled, python)
    assert compiled[0].status is Status.ZENO_NOT_TRUNCATED
    assert "Edge 'stop'" in compiled[0].detail and "chatters" in compiled[0].detail


def test_a_plastic_stop_switches_at_the_first_impact():
    """e = 0: the impact lands on Z, and completion switches there (A16)."""
    plastic = dataclasses.replace(EXAMPLE_2, c=0.0)
    compiled, python = runs(plastic, EXAMPLE_2.t_max, **BENCH)
    assert_same(compiled, python)
    edges = [e.edge for e in compiled[0].events]
    assert edges[:4] == ["lift-off", "rearm", "stop", "zeno"]


def test_an_output_grid_keeps_its_times_and_the_events():
    """t_eval ends steps on the grid: the samples are its times and the two
    rows of each event, and the releases stay exact."""
    system = forced_oscillator(EXAMPLE_2, compiled=True)
    grid = np.linspace(0.0, EXAMPLE_2.t_max, 51)
    method = Completion(Halving(h=0.2, locate="illinois"), **BENCH)
    result = method.run(system, EXAMPLE_2.t_max, t_eval=grid)
    assert result.status is Status.REACHED_END
    times = set(grid.tolist()) | {e.t for e in result.events}
    assert set(result.t.tolist()) <= times and set(grid.tolist()) <= set(result.t)
    releases = [e.t for e in result.events if e.edge == "lift-off"]
    exact = [t for _, t in exact_solution(EXAMPLE_2).sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)
