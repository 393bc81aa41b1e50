"""A Contact's primitives compiled by numba or in Python: lam, R* and Completion's
constrained phase (one compiled implementation) give the same results on both
(Or and Ames, eqs. (6)-(7), Sec. V)."""

import dataclasses
import warnings

import numpy as np
import pytest

from fmibridge import FmibridgeError, FmibridgeWarning, Halving, HybridSystem, Status
from fmibridge.core import _functions
from fmibridge.flows.compiled import c_function
from fmibridge.flows.compiled import compiled as compiled_as
from fmibridge.methods import Completion
from fmibridge.models import forced_oscillator
from fmibridge.validation import EXAMPLE_2, exact_solution


def example_2(compiled: bool, t_end: float = EXAMPLE_2.t_max, **options):
    method = Completion(
        Halving(h=0.2, locate="illinois"),
        eps_q=1e-5,
        eps_t=1e-2,
        eps_v=1e-2,
        **options,
    )
    return method.run(forced_oscillator(EXAMPLE_2, compiled=compiled), t_end)


def test_the_compiled_contact_gives_the_python_lam_and_projection():
    """One implementation of eqs. (6), (7) and R*, on the primitives in Python
    (called back) and compiled by numba (called at their C addresses)."""
    python = forced_oscillator(EXAMPLE_2).constraint
    fast = forced_oscillator(EXAMPLE_2, compiled=True).constraint
    assert isinstance(python.compiled(2).force, _functions.PythonVector)
    assert isinstance(fast.compiled(2).force, _functions.CAddress)
    rng = np.random.default_rng(2)
    for t, x in zip(rng.uniform(0, 12, 20), rng.normal(size=(20, 2)), strict=True):
        (dx, lam), (dx_fast, lam_fast) = (
            python.constrained(t, x),
            fast.constrained(t, x),
        )
        assert lam_fast == lam
        np.testing.assert_array_equal(dx_fast, dx)
        np.testing.assert_array_equal(fast.project(t, x), python.project(t, x))


def test_example_2_constrained_phases_match_on_python_and_compiled_models():
    """Same samples, lam, events and counts; the lift-offs at the exact releases."""
    python, fast = example_2(compiled=False), example_2(compiled=True)
    assert fast.stats == python.stats
    assert list(fast.mode) == list(python.mode)
    np.testing.assert_allclose(fast.t, python.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.x, python.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast["lam"], python["lam"], rtol=0, atol=1e-12)
    assert [e.edge for e in fast.events] == [e.edge for e in python.events]
    np.testing.assert_allclose(fast.event_times, python.event_times, atol=1e-12)
    releases = [e.t for e in fast.events if e.edge == "lift-off"]
    exact = [t for _, t in exact_solution(EXAMPLE_2).sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)


def test_a_phase_that_reaches_t_end_stops_there_on_the_stop():
    result = example_2(compiled=True, t_end=2.0)  # the first release is at ~2.498
    assert result.status is Status.REACHED_END
    assert result.t[-1] == 2.0 and set(result.mode) == {"constrained"}
    assert result["x"][-1] == EXAMPLE_2.x_max and result["v"][-1] == 0.0
    assert np.all(result["lam"][1:] > 0)  # the initial sample carries no lam


def test_the_step_bound_holds_inside_a_compiled_phase():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        result = example_2(compiled=True, max_steps=3)
    assert result.status is Status.MAX_STEPS
    assert result.stats["n_steps"] == 3


@pytest.mark.parametrize("tol", [1e-6, 1e-12])
def test_step_doubling_tolerance_is_honoured_as_in_python(tol):
    python, fast = example_2(False, tol=tol), example_2(True, tol=tol)
    assert fast.stats == python.stats
    np.testing.assert_allclose(fast.event_times, python.event_times, atol=1e-12)


def with_contact(system, **changes):
    """`system` with its contact's fields changed."""
    return HybridSystem(
        list(system.modes.values()),
        system.initial_mode,
        system.x0,
        constraint=dataclasses.replace(system.constraint, **changes),
    )


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_non_finite_constrained_dynamics_stop_with_an_error(compiled):
    """A force map that turns nan at t = 1 (inside the first sticking phase)."""
    system = forced_oscillator(EXAMPLE_2, compiled=compiled)

    def nan_after_one(t, x, lam):
        scale = 1.0 if t < 1.0 else np.nan
        return scale * np.array([x[1], 1.8 * np.cos(t) - lam])

    force = compiled_as(nan_after_one, kind="force") if compiled else nan_after_one
    method = Completion(Halving(h=0.2, locate="illinois"), eps=1e-4)
    with pytest.raises(FmibridgeError, match="non-finite values in the step from"):
        method.run(with_contact(system, rhs_with_force=force), EXAMPLE_2.t_max)


def test_a_contact_primitive_of_the_wrong_size_is_named():
    system = forced_oscillator(EXAMPLE_2)
    method = Completion(Halving(h=0.2), eps=1e-4)
    wide = with_contact(system, gradient_fn=lambda t, x: np.array([-1.0, 0.0]))
    with pytest.raises(FmibridgeError, match="`gradient_fn` gives"):
        method.run(wide, 1.0)
    with pytest.raises(FmibridgeError, match=r"indices \[2\] lie outside"):
        method.run(with_contact(system, q_index=(2,)), 1.0)


def test_a_compiled_contact_primitive_of_the_wrong_shape_is_named():
    """A compiled primitive is checked on its declared sizes before it is called
    (the compiled numerics read its values without bounds checks): the message
    names the primitive, what it maps and what the contact needs."""
    system = forced_oscillator(EXAMPLE_2, compiled=True)
    # the contact's force map (x, lam) -> dx/dt, 3 values to 2, given as its gradient
    force = c_function(system.constraint.rhs_with_force, "force", 2)
    assert isinstance(force, _functions.Function)
    method = Completion(Halving(h=0.2), eps=1e-4)
    with pytest.raises(
        FmibridgeError,
        match=r"`gradient_fn` \(.*\) maps 3 to 2 values; expected 2 to 1 "
        r"\(q has 1 entries, the state 2\)",
    ):
        method.run(with_contact(system, gradient_fn=force), 1.0)
