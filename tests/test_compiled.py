"""CompiledFlow: native flows compiled with numba, the same results as NativeFlow."""

import math

import numpy as np
import pytest

from fmibridge import (
    Edge,
    FmibridgeError,
    FmibridgeWarning,
    Guard,
    Halving,
    HybridSystem,
    Mode,
    Relaxation,
    Status,
)
from fmibridge.flows.compiled import CompiledFlow, compiled
from fmibridge.methods import Completion
from fmibridge.models import forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution, rho_hat


def assert_same_run(native, fast):
    """Same samples, modes and events up to round-off (bit-equal where libm agrees)."""
    assert native.stats == fast.stats
    np.testing.assert_allclose(fast.t, native.t, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.x, native.x, rtol=0, atol=1e-10)
    assert list(fast.mode) == list(native.mode)
    np.testing.assert_allclose(fast.event_times, native.event_times, atol=1e-12)


@pytest.mark.parametrize("locate", ["halving", "illinois"])
def test_halving_on_example_1_matches_the_native_flow(locate):
    method = Halving(h=1e-2, locate=locate)
    native = method.run(forced_oscillator(EXAMPLE_1), 20.0)
    fast = method.run(forced_oscillator(EXAMPLE_1, compiled=True), 20.0)
    assert_same_run(native, fast)
    assert len(fast.events) > 5


def test_relaxation_on_example_2_matches_the_native_flow():
    method = Relaxation(h=0.05, eps=1e-4)
    native = method.run(forced_oscillator(EXAMPLE_2), 6.0)
    fast = method.run(forced_oscillator(EXAMPLE_2, compiled=True), 6.0)
    assert_same_run(native, fast)


def test_completion_on_example_2_meets_the_exact_solution():
    p, exact = EXAMPLE_2, exact_solution(EXAMPLE_2)
    method = Completion(Halving(h=0.1, locate="illinois"), eps=1e-4)
    result = method.run(forced_oscillator(p, compiled=True), p.t_max)
    assert rho_hat(result.t, result["x"], exact) < 1e-5
    releases = [e.t for e in result.events if e.edge == "lift-off"]
    np.testing.assert_allclose(releases, [t for _, t in exact.sticking[:-1]], atol=1e-6)


def test_steps_between_events_run_in_blocks():
    """Example 1 at h = 1e-2 on [0, 20]: ~2000 steps but few attempts in Python."""
    result = Halving(h=1e-2).run(forced_oscillator(EXAMPLE_1, compiled=True), 20.0)
    assert result.stats["n_steps"] >= 2000
    assert result.provenance["flows"] == "flow=compiled:forced_oscillator"


def test_a_python_guard_falls_back_to_the_python_loop():
    flow = CompiledFlow(lambda t, x: np.array([x[1], -9.81]), ["h", "v"])
    floor = Edge(Guard(lambda t, x: x[0]), "air", lambda t, x: x * np.array([1, -0.8]))
    system = HybridSystem([Mode("air", flow, (floor,))], "air", [1.0, 0.0])
    result = Halving(h=1e-2).run(system, 1.0)
    assert result.events[0].t == pytest.approx(math.sqrt(2 / 9.81), abs=1e-9)


def test_guards_of_every_direction_and_several_per_mode():
    """x = t: a rising guard at 0.3 and an 'either' one at 0.5, then a falling one."""
    flow = CompiledFlow(lambda t, x: np.array([1.0]), ["x"])
    low = Edge(Guard(compiled(lambda t, x: x[0] - 0.3), "rising"), "b", name="low")
    mid = Edge(Guard(compiled(lambda t, x: x[0] - 0.5), "either"), "c", name="mid")
    top = Edge(Guard(compiled(lambda t, x: 0.7 - x[0]), "falling"), "d", name="top")
    system = HybridSystem(
        [
            Mode("a", flow, (low,)),
            Mode("b", flow, (mid, top)),
            Mode("c", flow, (top,)),
            Mode("d", flow),
        ],
        "a",
        [0.0],
    )
    result = Halving(h=0.07, locate="illinois").run(system, 1.0)
    assert [e.edge for e in result.events] == ["low", "mid", "top"]
    np.testing.assert_allclose(result.event_times, [0.3, 0.5, 0.7], atol=1e-10)


def test_max_steps_bounds_block_steps_too():
    system = forced_oscillator(EXAMPLE_1, compiled=True)
    with pytest.warns(FmibridgeWarning, match="max_steps"):  # an impact at 0.092 s
        result = Halving(h=1e-3, max_steps=100).run(system, 0.1)
    assert result.status is Status.MAX_STEPS
    # the block stops at 100; an attempt that halves into an impact adds a few
    assert 100 <= result.stats["n_steps"] < 100 + 2 * Halving.max_halvings


def test_division_by_zero_is_a_non_finite_trial_not_an_exception():
    """sqrt(1 - x) / (1 - x) is inf at the wall: Halving fires the nearby guard."""
    flow = CompiledFlow(
        lambda t, x: np.array([1.0 + 0.0 * math.sqrt(1.0 - x[0]) / (1.0 - x[0])]),
        ["x"],
    )
    wall = Edge(Guard(compiled(lambda t, x: 1.0 - x[0]), name="wall"), "m", name="w")
    stop = HybridSystem([Mode("m", flow, (wall,)), Mode("n", flow)], "m", [0.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        result = Halving(h=0.3).run(stop, 0.9)
    assert result.status.is_success and result.t[-1] == 0.9


def test_bad_input_is_named():
    with pytest.raises(FmibridgeError, match="`f` must be callable"):
        CompiledFlow(None, ["x"])
    with pytest.raises(FmibridgeError, match="unique and non-empty"):
        CompiledFlow(lambda t, x: x, ["x", "x"])
    with pytest.raises(FmibridgeError, match="numba cannot compile the right-hand"):
        CompiledFlow(lambda t, x: open("rates.txt"), ["x"], name="files")
    with pytest.raises(FmibridgeError, match="numba cannot compile guard"):
        compiled(lambda t, x: open("gap.txt"), "guard")


def test_the_provenance_names_the_python_functions_called_back():
    """Which functions the loops call back in Python (each a Python call per
    evaluation) is in the Result; a compiled model has none."""
    compiled_run = Halving(h=1e-2, locate="illinois").run(
        forced_oscillator(EXAMPLE_1, compiled=True), 3.0
    )
    assert compiled_run.provenance["python_callbacks"] == "none"
    native_run = Halving(h=1e-2).run(forced_oscillator(EXAMPLE_1), 3.0)
    callbacks = native_run.provenance["python_callbacks"]
    assert callbacks.startswith("free: the flow NativeFlow")
    assert "the guards of mode 'free'" in callbacks
    assert "the reset of edge" in callbacks


def test_completion_names_the_contact_functions_its_phases_call_back():
    """The constrained phases run on the contact's numerics, not on the mode's
    guards: a compiled contact calls nothing back, a Python one names its
    primitives."""
    method = Completion(Halving(h=0.2, locate="illinois"), eps=1e-5)
    compiled_run = method.run(forced_oscillator(EXAMPLE_2, compiled=True), 8.0)
    assert "zeno" in [e.edge for e in compiled_run.events]
    assert compiled_run.provenance["python_callbacks"] == "none"
    native_run = method.run(forced_oscillator(EXAMPLE_2), 8.0)
    constrained = native_run.provenance["python_callbacks"].split("constrained: ")[1]
    assert constrained.startswith("`gap_fn` of contact")
    assert "`rhs_with_force` of contact" in constrained
