"""Every fixed step's local error is estimated; a coarse run warns with a step
that meets the threshold, and that step answers right.

The coarse cases are issue 29's, on Example 1 of Burden et al. (Table I, 49
impacts, `exact_solution`): Relaxation (midpoint) on the adapter's FMU at h = 0.1
and 0.4, Halving (RK4, Illinois) at h = 0.4, 0.2 and 1.0, and a strip wider than
the step (eps = 1, h = 0.01).

A step beyond the stability interval (RK4 at h = 0.01 on a DC motor's -490 1/s
electrical pole) stops within a few steps, naming the pole and a stable step, and
that step answers right against the linear model's exact solution; a growing
solution that the steps resolve (x' = x) is no blow-up.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from fmibridge import (
    FmibridgeError,
    Halving,
    HybridSystem,
    Mode,
    NativeFlow,
    Relaxation,
    simulate,
)
from fmibridge.core._functions import PythonVector
from fmibridge.core._local_errors import SCALE_FLOOR, UNSTABLE_STEPS, LocalErrors
from fmibridge.core.errors import FmibridgeWarning
from fmibridge.core.integrators import DOPRI5, EULER, MIDPOINT, RK4
from fmibridge.methods.base import ERROR_WARNING
from fmibridge.models import bouncing_ball, forced_oscillator
from fmibridge.validation import EXAMPLE_1, exact_solution

ADAPTER = Path(__file__).resolve().parent.parent / "adapters" / "forced_oscillator.toml"
# An impact time this close to the exact one counts as right (the coarse
# runs are 4e-3 s off at best, and miss or add impacts).
IMPACT_TOL = 1e-2


@pytest.fixture(scope="module")
def exact_1():
    return exact_solution(EXAMPLE_1)


def pendulum(t, x):
    return np.array([x[1], -np.sin(x[0]) + 0.3 * np.cos(1.7 * t)])


@pytest.mark.parametrize("scheme", [EULER, MIDPOINT, RK4, DOPRI5], ids=lambda s: s.name)
def test_each_schemes_estimate_has_its_order(scheme):
    """On a nonlinear, forced system the estimate of one step from the same
    point shrinks as h^q, q = error_order."""
    f = PythonVector(pendulum, 2, 2, "pendulum")
    x = np.array([1.0, 0.5])
    hs = np.array([0.04, 0.02, 0.01])
    sizes = [np.abs(scheme.tableau.estimated(f, 0.3, x, h)[1]).max() for h in hs]
    slopes = np.log2(np.array(sizes[:-1]) / np.array(sizes[1:]))
    assert np.all(np.abs(slopes - scheme.error_order) < 0.15), slopes


def test_midpoint_estimate_is_its_local_error_on_a_linear_system():
    """For x' = A x the (1/3, 1/3, 1/3) companion's difference is the midpoint
    rule's leading error term itself (the tree f'f'f)."""
    a = np.array([[0.0, 1.0], [-6.25, -0.1]])
    f = PythonVector(lambda t, x: a @ x, 2, 2, "linear")
    x, h = np.array([1.0, 2.0]), 1e-3
    w, v = np.linalg.eig(a)
    exact = (v @ np.diag(np.exp(w * h)) @ np.linalg.solve(v, x)).real
    step, err = MIDPOINT.tableau.estimated(f, 0.0, x, h)
    assert np.allclose(err, step - exact, rtol=1e-2)


def test_dopri5_dense_output_has_order_4():
    """The continuous extension inside one step errs by O(h^5) (HNW II.6)."""
    from fmibridge.flows._stepper import EmbeddedStepper

    f = PythonVector(pendulum, 2, 2, "pendulum")
    x = np.array([1.0, 0.5])
    errors = []
    for h in (0.2, 0.1, 0.05):
        stepper = EmbeddedStepper(f, DOPRI5.tableau, 1.0, 1.0)  # accepts h as given
        stepper.propose(h)
        taken, _ = stepper.take(0.0, x, h)
        fine = x
        for k in range(200):  # the reference: 200 RK4 steps to the middle
            fine = RK4.step(pendulum, k * h / 400, fine, h / 400)
        assert taken == h
        errors.append(np.abs(stepper.at(h / 2) - fine).max())
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(slopes > 4.7), slopes


def run_recorded(run):
    """Run, and return the Result with the messages of its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FmibridgeWarning)
        result = run()
    return result, [str(w.message) for w in caught]


def impacts_right(result, exact) -> bool:
    times = result.event_times
    if len(times) != exact.n_impacts:
        return False
    return bool(np.max(np.abs(times - exact.impact_times)) < IMPACT_TOL)


def relaxation_on_fmu(fmu_dir, h):
    return lambda: simulate(ADAPTER, step_size=h)


def halving_rk4(h):
    method = Halving(h=h, integrator="rk4", locate="illinois")
    return lambda: method.run(
        forced_oscillator(EXAMPLE_1, compiled=True), EXAMPLE_1.t_max
    )


COARSE = {
    "relaxation midpoint fmu h=0.1": (relaxation_on_fmu, 0.1),
    "relaxation midpoint fmu h=0.4": (relaxation_on_fmu, 0.4),
    "halving rk4 illinois h=0.4": (lambda fmu_dir, h: halving_rk4(h), 0.4),
    "halving rk4 illinois h=0.2": (lambda fmu_dir, h: halving_rk4(h), 0.2),
    "halving rk4 illinois h=1.0": (lambda fmu_dir, h: halving_rk4(h), 1.0),
}


@pytest.mark.parametrize("case", list(COARSE))
def test_a_coarse_run_warns_with_a_step_that_answers_right(fmu_dir, exact_1, case):
    make, h = COARSE[case]
    result, messages = run_recorded(make(fmu_dir, h))
    step = ast.literal_eval(result.provenance["step_error"])
    # each of the coarse runs is off: it must say so, with a step
    assert step["relative"] > ERROR_WARNING and step["h"] <= h
    assert step["h_meeting"] < h
    suggested = f"steps of h <= {step['h_meeting']:.3g} s meet it"
    assert any(suggested in m for m in messages), messages
    again, messages = run_recorded(make(fmu_dir, step["h_meeting"]))
    assert impacts_right(again, exact_1)
    checked = ast.literal_eval(again.provenance["step_error"])
    assert checked["relative"] <= ERROR_WARNING and checked["h_meeting"] is None
    assert not any("local error estimate" in m for m in messages), messages


def test_a_strip_wider_than_the_step_warns_with_an_eps_that_answers_right(
    fmu_dir, exact_1
):
    """eps = 1 s delays the first impact to 0.8985 s (exact 0.0921 s): the wait
    displaces the state by eps |dx/dt|, which the run judges and names."""

    def run(eps):
        return lambda: simulate(ADAPTER, step_size=0.01, method_options={"eps": eps})

    result, messages = run_recorded(run(1.0))
    assert abs(result.events[0].t - exact_1.impact_times[0]) > 0.5
    strip = ast.literal_eval(result.provenance["strip_error"])
    assert strip["eps"] == 1.0 and strip["relative"] > 1.0
    assert any(f"eps <= {strip['eps_meeting']:.3g} meets it" in m for m in messages)
    step = ast.literal_eval(result.provenance["step_error"])
    assert step["relative"] <= ERROR_WARNING  # h = 0.01 is not the trouble
    again, messages = run_recorded(run(strip["eps_meeting"]))
    assert abs(again.events[0].t - exact_1.impact_times[0]) < 1e-4
    assert impacts_right(again, exact_1)
    assert ast.literal_eval(again.provenance["strip_error"])["eps_meeting"] is None
    assert not any("strip" in m for m in messages), messages


def test_the_threshold_is_settable():
    method = Relaxation(h=0.1, eps=1e-7, error_warning=1e-2)
    result, messages = run_recorded(
        lambda: method.run(forced_oscillator(EXAMPLE_1, compiled=True), EXAMPLE_1.t_max)
    )
    step = ast.literal_eval(result.provenance["step_error"])
    assert 1e-3 < step["relative"] < 1e-2 and step["h_meeting"] is None
    assert messages == []


def test_the_largest_relative_error_is_numpys_argmax_over_floored_scales():
    """report's compiled search is numpy's argmax of |e_i| / max(s_i,
    SCALE_FLOOR): the first of equal ratios, a state near zero on the floor."""
    x = np.array([2.0, 1e-9, 1.0, 4.0])
    err = np.array([2e-4, 1e-10, 1e-4, 4e-4])
    errors = LocalErrors(x, 4)
    errors.add_step(1.0, 0.1, x, err)
    ratios = err / np.maximum(np.abs(x), SCALE_FLOOR)
    report = errors.report(1e-5)
    assert report["state"] == int(np.argmax(ratios))
    assert report["relative"] == float(ratios.max())
    assert report["h_meeting"] == 0.1 * (0.9 * 1e-5 / ratios.max()) ** 0.25
    assert errors.strip_report(1e-5) is None  # no strips


def test_exact_steps_estimate_no_error():
    """RK4 integrates free flight exactly; its estimate sees that."""
    result = Halving(h=1e-2).run(bouncing_ball(), 3.0)
    assert ast.literal_eval(result.provenance["step_error"])["relative"] == 0.0


def test_events_carry_their_location_tolerance():
    halving = Halving(h=1e-2, t_tol=1e-9).run(bouncing_ball(), 1.0)
    relaxation = Relaxation(h=1e-2, eps=1e-5).run(bouncing_ball(), 1.0)
    assert [e.t_tol for e in halving.events] == [1e-9]
    assert [e.t_tol for e in relaxation.events] == [1e-5]
    assert halving.events_frame()["t_tol"].tolist() == [1e-9]


def test_an_adaptive_run_states_its_tolerance_not_an_estimate():
    result = Halving(rtol=1e-7, atol=1e-9).run(bouncing_ball(), 1.0)
    assert ast.literal_eval(result.provenance["tolerance"]) == {
        "rtol": 1e-7,
        "atol": 1e-9,
    }
    assert "step_error" not in result.provenance
    assert math.isclose(result.events[0].t, 0.451523641, abs_tol=1e-9)


@pytest.mark.parametrize(
    "scheme, boundary",
    [(EULER, 2.0), (MIDPOINT, 2.0), (RK4, 2.785293563), (DOPRI5, 3.306567893)],
    ids=lambda s: getattr(s, "name", ""),
)
def test_stability_boundaries_and_poles_from_the_growth(scheme, boundary):
    """The real stability intervals (Hairer and Wanner II, Sec. IV.2), and the
    pole whose growth per step is |R(h lam)| found back from that growth."""
    assert scheme.stability_boundary == pytest.approx(boundary, rel=1e-9)
    h, rate = 0.01, 490.0
    growth = abs(
        np.polynomial.polynomial.polyval(-h * rate, scheme.stability_polynomial)
    )
    assert scheme.pole_rate(h, growth) == pytest.approx(rate, rel=1e-9)
    assert scheme.stable_step(rate) * rate < boundary


# A DC motor: armature current i and speed w, i' = (V - R i - k w) / L, w' = (k i
# - b w) / J; its electrical pole is -489.5 1/s, its mechanical one -0.61 1/s
MOTOR = np.array([[-4.9 / 0.01, -0.05 / 0.01], [0.05 / 1e-3, -1e-4 / 1e-3]])
MOTOR_DRIVE = np.array([12.0 / 0.01, 0.0])  # V = 12 V
MOTOR_SPAN = 2.0  # s


def motor():
    flow = NativeFlow(lambda t, x: MOTOR @ x + MOTOR_DRIVE, ["i", "w"], name="motor")
    return HybridSystem([Mode("run", flow)], "run", np.zeros(2))


def motor_exact(t):
    """x(t) from rest: A^-1 (e^(A t) - I) b."""
    from scipy.linalg import expm

    return np.linalg.solve(MOTOR, (expm(MOTOR * t) - np.eye(2)) @ MOTOR_DRIVE)


def test_an_unstable_step_stops_early_and_names_a_stable_one():
    """RK4 at h = 0.01 (h lam = -4.9, beyond -2.785): the error estimates grow by
    |R(-4.9)| = 12.5 a step, so the run stops within a few steps (it reached
    1e219 by t = 2 s) naming the pole and a step below 2.785 / 489.5; at that
    step the run ends on the exact solution."""
    with pytest.raises(FmibridgeError, match="unstable") as caught:
        Halving(h=0.01, integrator="rk4").run(motor(), MOTOR_SPAN)
    text = str(caught.value)
    t_stop = float(re.search(r"to t = (\S+) s", text).group(1))
    pole = float(re.search(r"a pole of (\S+) 1/s", text).group(1))
    h_stable = float(re.search(r"Steps of h <= (\S+) s are stable", text).group(1))
    fastest = np.linalg.eigvals(MOTOR).real.min()
    assert t_stop <= 0.01 * (2 * UNSTABLE_STEPS)  # bounded by steps
    assert pole == pytest.approx(fastest, rel=1e-3)
    assert h_stable < RK4.stability_boundary / abs(fastest)
    result, _ = run_recorded(
        lambda: Halving(h=h_stable, integrator="rk4").run(motor(), MOTOR_SPAN)
    )
    assert result.status.name == "REACHED_END"
    np.testing.assert_allclose(result.x[-1], motor_exact(result.t[-1]), rtol=1e-6)


def test_a_growing_solution_is_no_blow_up():
    """x' = x over 10 s at h = 0.01: the estimates grow by e^0.01 a step, as the
    solution does, far below the threshold of its scale: the run ends on e^10."""
    flow = NativeFlow(lambda t, x: x, ["x"], name="growth")
    system = HybridSystem([Mode("run", flow)], "run", np.ones(1))
    result = Halving(h=0.01, integrator="rk4").run(system, 10.0)
    assert result.status.name == "REACHED_END"
    assert result.x[-1, 0] == pytest.approx(math.exp(10.0), rel=1e-8)
