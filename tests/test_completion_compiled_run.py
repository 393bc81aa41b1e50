"""Completion around Halving in one compiled call (`_completion_kernels.run`): the
same run, bit for bit, as the compiled attempts one by one and as the Python
firing, and the same stops, bounds and warnings (Or and Ames, Sec. V)."""

import dataclasses
import warnings

import numpy as np
import pytest
from test_halving_compiled import assert_same_run, python_reset

from fmibridge import FmibridgeWarning, Halving, Status
from fmibridge.methods import Completion
from fmibridge.methods.compiled_completion import LABEL
from fmibridge.models import forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution


class OneByOne(Completion):
    """Completion whose attempts the compiled run does not take (a subclass)."""


def runs(params, t_end, halving=None, **options):
    """(one call, attempt by attempt, Python firing) of the same Completion, with
    the warnings each run gave."""
    inner = halving or Halving(h=0.2, integrator="rk4", locate="illinois")
    system = forced_oscillator(params, compiled=True)
    out = []
    for kind, system_of in (
        (Completion, lambda: system),
        (OneByOne, lambda: system),
        (Completion, lambda: python_reset(system, params)),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FmibridgeWarning)
            result = kind(inner, **options).run(system_of(), t_end)
        out.append((result, [str(w.message) for w in caught]))
    return out


def assert_same(fast, one_by_one, python):
    for other in (one_by_one, python):
        assert_same_run(other[0], fast[0])
        np.testing.assert_array_equal(other[0]["lam"], fast[0]["lam"])
        assert other[0].detail == fast[0].detail
        assert other[1] == fast[1]  # the same warnings
    assert LABEL not in one_by_one[0].provenance["loops"]


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
def test_the_compiled_run_is_the_run_attempt_by_attempt(t_end, options):
    fast, one_by_one, python = runs(EXAMPLE_2, t_end, **options)
    assert_same(fast, one_by_one, python)
    result = fast[0]
    assert result.status is Status.REACHED_END and result.t[-1] == t_end
    assert result.provenance["loops"].startswith(f"{LABEL} x")


def test_example_2_releases_and_zeno_times_from_the_compiled_run():
    """The lift-offs at the exact releases (Burden et al., eq. 28 and text after
    it); the switches after the impacts of each series, before the release."""
    ((result, _), *_) = runs(EXAMPLE_2, EXAMPLE_2.t_max, **BENCH)
    edges = [e.edge for e in result.events]
    assert edges == ["lift-off", "rearm", *["stop"] * 4, "zeno"] * 2
    releases = [e.t for e in result.events if e.edge == "lift-off"]
    exact = [t for _, t in exact_solution(EXAMPLE_2).sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)
    assert set(result.mode) == {"free", "free:lifted", "constrained"}
    assert result.provenance["loops"] == f"{LABEL} x1"  # the whole run, one call


def test_a_long_impact_series_goes_back_to_python_for_the_watchdog():
    """Example 1 impacts without a pause: after ZENO_SERIES of them the watchdog
    follows the series, so the Python attempts take the rest."""
    fast, one_by_one, python = runs(EXAMPLE_1, 30.0, **BENCH)
    assert_same(fast, one_by_one, python)
    loops = fast[0].provenance["loops"]
    assert (
        loops.startswith(f"{LABEL} x1") and "free: compiled steps and firing" in loops
    )
    assert len(fast[0].events) >= 10


@pytest.mark.parametrize("bound", [{"max_steps": 20}, {"max_events": 5}])
def test_bounds_stop_the_compiled_run_where_they_stop_the_attempts(bound):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        fast, one_by_one, python = runs(EXAMPLE_2, EXAMPLE_2.t_max, **BENCH, **bound)
    assert_same(fast, one_by_one, python)
    stop = Status.MAX_STEPS if "max_steps" in bound else Status.MAX_EVENTS
    assert fast[0].status is stop


def test_a_series_completion_does_not_truncate_stops_as_in_python():
    """Impacts placed to 1e-2 s, eps_t too tight for the geometric test: the
    impacts go on until the watchdog stops the run (the stop chatters)."""
    coarse = Halving(h=0.2, locate="illinois", t_tol=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        fast, one_by_one, python = runs(
            EXAMPLE_2, EXAMPLE_2.t_max, coarse, eps_q=1e-3, eps_t=1e-4, eps_v=0.1
        )
    assert_same(fast, one_by_one, python)
    assert fast[0].status is Status.ZENO_NOT_TRUNCATED
    assert "Edge 'stop'" in fast[0].detail and "chatters" in fast[0].detail


def test_a_plastic_stop_switches_at_the_first_impact():
    """e = 0: the impact lands on Z, and completion switches there (A16)."""
    plastic = dataclasses.replace(EXAMPLE_2, c=0.0)
    fast, one_by_one, python = runs(plastic, EXAMPLE_2.t_max, **BENCH)
    assert_same(fast, one_by_one, python)
    edges = [e.edge for e in fast[0].events]
    assert edges[:4] == ["lift-off", "rearm", "stop", "zeno"]


def test_an_output_grid_keeps_the_attempts_one_by_one():
    """t_eval ends steps on the grid, which the compiled run does not: Python
    takes those runs, with the same result as before."""
    system = forced_oscillator(EXAMPLE_2, compiled=True)
    grid = np.linspace(0.0, EXAMPLE_2.t_max, 51)
    fast = Completion(Halving(h=0.2, locate="illinois"), **BENCH)
    fast = fast.run(system, EXAMPLE_2.t_max, t_eval=grid)
    slow = OneByOne(Halving(h=0.2, locate="illinois"), **BENCH)
    slow = slow.run(system, EXAMPLE_2.t_max, t_eval=grid)
    assert_same_run(slow, fast)
    assert LABEL not in fast.provenance["loops"]
