"""A LagrangianSystem compiled by numba: the free flight and Completion's
constrained phases run compiled, with the Python path's results (Or and Ames,
Examples 1 and 2, eqs. (3)-(8))."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from fmibridge import FmibridgeError, FmibridgeWarning, Halving, Status
from fmibridge.core import _functions
from fmibridge.methods import Completion, Relaxation
from fmibridge.models.lagrangian import LagrangianSystem, to_hybrid
from fmibridge.models.or_ames import knee_pendulum, sine_ball, stop_oscillator
from fmibridge.validation import EXAMPLE_2, exact_solution

SINE = (sine_ball(), [0.0, 2.0], [1.5, 0.0])
KNEE = (knee_pendulum(), [math.radians(30), math.radians(25)], [0.0, 0.0])


def both(method, model, t_end):
    """The runs of `method` on the Python and the compiled system."""
    system, q0, v0 = model
    return [
        method.run(to_hybrid(system, q0, v0, compiled=compiled), t_end)
        for compiled in (False, True)
    ]


def assert_same_run(python, fast):
    """Same steps, samples, modes, lam and events, to round-off."""
    assert fast.status is python.status and fast.stats == python.stats
    assert list(fast.mode) == list(python.mode)
    np.testing.assert_allclose(fast.t, python.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.x, python.x, rtol=0, atol=1e-12)
    assert [e.edge for e in fast.events] == [e.edge for e in python.events]
    np.testing.assert_allclose(fast.event_times, python.event_times, atol=1e-12)


def test_the_compiled_primitives_give_the_python_values():
    system = knee_pendulum()
    compiled = to_hybrid(system, *KNEE[1:], compiled=True)
    python = to_hybrid(system, *KNEE[1:])
    fast_c, slow_c = compiled.constraint, python.constraint
    rng = np.random.default_rng(5)
    fast_f, slow_f = compiled.mode("free").flow, python.mode("free").flow
    for t, x in zip(rng.uniform(0, 5, 20), rng.normal(size=(20, 4)), strict=True):
        np.testing.assert_array_equal(fast_f.rhs(t, x), slow_f.rhs(t, x))
        for lam in (0.0, 1.0, -2.5):
            np.testing.assert_array_equal(
                fast_c.rhs_with_force(t, x, lam), slow_c.rhs_with_force(t, x, lam)
            )
        assert fast_c.h(t, x) == slow_c.h(t, x)
        np.testing.assert_array_equal(fast_c.dh(t, x), slow_c.dh(t, x))
        assert fast_c.lam(t, x) == slow_c.lam(t, x)
    assert isinstance(fast_c.compiled(4).force, _functions.CAddress)
    assert isinstance(slow_c.compiled(4).force, _functions.PythonVector)


def test_sine_ball_completion_runs_compiled_with_the_python_results():
    """The issue's run: Completion(Halving(h=1e-3)) over 15 s, two Zeno phases."""
    python, fast = both(Completion(Halving(h=1e-3)), SINE, 15.0)
    assert_same_run(python, fast)
    np.testing.assert_allclose(fast["lam"], python["lam"], rtol=0, atol=1e-12)
    assert [e.edge for e in fast.events].count("zeno") == 2
    assert "kernels=compiled" in fast.provenance["flows"]
    assert "kernels" not in python.provenance["flows"]


def test_knee_pendulum_completion_runs_compiled_with_the_python_results():
    method = Completion(Halving(h=1e-2), switch="truncation")
    python, fast = both(method, KNEE, 15.0)
    assert_same_run(python, fast)
    zeno = [e.t for e in fast.events if e.edge == "zeno"]
    assert zeno[0] == pytest.approx(3.6916, abs=1e-3)  # Example 2, Fig. 4(e)


def test_relaxation_takes_the_compiled_steps_too():
    python, fast = both(Completion(Relaxation(h=1e-3, eps=1e-8)), SINE, 5.0)
    assert_same_run(python, fast)


def test_the_zeno_watchdog_stops_the_compiled_run_where_it_stops_python():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        python, fast = both(Halving(h=1e-3), SINE, 5.0)
    assert python.status is Status.ZENO
    assert_same_run(python, fast)
    assert fast.detail == python.detail


@pytest.mark.slow
def test_stop_oscillator_compiled_meets_the_exact_releases():
    """One coordinate (M is 1 x 1); slow: compiling a model takes seconds."""
    p = EXAMPLE_2
    model = (stop_oscillator(p), [p.x0], [p.v0])
    python, fast = both(Completion(Halving(h=1e-2)), model, p.t_max)
    assert_same_run(python, fast)
    releases = [e.t for e in fast.events if e.edge == "lift-off"]
    exact = [t for _, t in exact_solution(p).sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)


def test_a_function_numba_cannot_compile_is_named():
    registry = {"g": 9.81}  # a dict: numba cannot read it inside compiled code
    system = LagrangianSystem(
        ("y",),
        lambda q: np.eye(1),
        lambda t, q, v: np.array([registry["g"]]),
        gap=lambda q: q[0],
        gap_gradient=lambda q: np.ones(1),
        gap_hessian=lambda q: np.zeros((1, 1)),
        restitution=0.5,
        name="dict_ball",
    )
    with pytest.raises(FmibridgeError, match="cannot compile `bias` of `dict_ball`"):
        to_hybrid(system, [1.0], [0.0], compiled=True)
    result = Halving(h=1e-2).run(to_hybrid(system, [1.0], [0.0]), 0.5)
    assert result.events[0].t == pytest.approx(math.sqrt(2 / 9.81), abs=1e-9)


def test_small_mass_matrices_are_solved_by_elimination_as_lapack_does():
    from fmibridge.models import _lagrangian_kernels as kernels
    from fmibridge.models.lagrangian import SMALL, eliminate, solve

    rng = np.random.default_rng(7)
    cases = [(np.array([[0.0, 2.0], [3.0, 1.0]]), np.array([1.0, -1.0]))]  # a swap
    cases += [
        (rng.normal(size=(n, n)), rng.normal(size=n)) for n in range(1, SMALL + 1)
    ]
    for a, b in cases:
        x = solve(a, b)
        np.testing.assert_allclose(a @ x, b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
        np.testing.assert_array_equal(kernels.eliminate(a, b), eliminate(a, b))
    with np.errstate(all="ignore"):
        assert not np.isfinite(solve(np.zeros((2, 2)), np.ones(2))).all()
