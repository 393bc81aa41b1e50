"""Adaptive steps under a tolerance (Halving, Relaxation, Completion around them):
Table I's examples to their rho-hat targets with rtol alone, coupled Model
Exchange flows, the DefaultExperiment's tolerance, a Python integrator plugged
into the adaptive interface, and the inputs refused."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from fmibridge import Completion, Halving, Relaxation, simulate
from fmibridge.cli import main
from fmibridge.core.errors import FmibridgeError
from fmibridge.core.system import Experiment, HybridSystem
from fmibridge.flows._stepper import PythonAdaptiveStepper
from fmibridge.models import bouncing_ball, bouncing_ball_impacts, forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution, rho_hat

ADAPTER = Path(__file__).resolve().parent.parent / "adapters" / "forced_oscillator.toml"
# The bench's rho-hat targets (benchmarks.suite.BenchOptions: example_1_ivp,
# example_2_ivp and example_2_ps).
TARGET_1, TARGET_2 = 1e-6, 1e-4


def rho_of(result, params):
    exact = exact_solution(params)
    return rho_hat(result.t, result["x"], exact, t_max=params.t_max)


@pytest.mark.parametrize(
    "method",
    [Halving(rtol=1e-9, locate="illinois"), Relaxation(rtol=1e-9, eps=1e-9)],
    ids=["halving", "relaxation"],
)
def test_example_1_meets_its_target_with_rtol_alone(method):
    """The rtol a user gives is enough: all 49 impacts, rho-hat within the
    target (measured 2.2e-7, Halving; 1.9e-7, Relaxation)."""
    result = method.run(forced_oscillator(EXAMPLE_1, compiled=True), EXAMPLE_1.t_max)
    assert result.status.is_success and len(result.events) == 49
    assert rho_of(result, EXAMPLE_1) <= TARGET_1
    exact = exact_solution(EXAMPLE_1)
    assert np.max(np.abs(result.event_times - exact.impact_times)) < 1e-5
    assert ast.literal_eval(result.provenance["tolerance"])["rtol"] == 1e-9


def test_example_2_meets_its_target_with_rtol_alone():
    """Completion around adaptive Halving: rho-hat 2.3e-6 at rtol = 1e-5."""
    method = Completion(
        Halving(rtol=1e-5, locate="illinois"), eps_q=1e-5, eps_t=0.1, eps_v=0.1
    )
    result = method.run(forced_oscillator(EXAMPLE_2, compiled=True), EXAMPLE_2.t_max)
    assert result.status.is_success and result.mode[-1] == "constrained"
    assert rho_of(result, EXAMPLE_2) <= TARGET_2


def test_tighter_tolerances_give_smaller_errors():
    """Example 1's impacts over 20 s at rtol 1e-6, 1e-8, 1e-10."""
    exact = exact_solution(EXAMPLE_1)
    errors, steps = [], []
    for rtol in (1e-6, 1e-8, 1e-10):
        method = Halving(rtol=rtol, locate="illinois")
        result = method.run(forced_oscillator(EXAMPLE_1, compiled=True), 20.0)
        n = len(result.events)
        assert n == np.count_nonzero(exact.impact_times <= 20.0)
        errors.append(np.max(np.abs(result.event_times - exact.impact_times[:n])))
        steps.append(result.stats["n_steps"])
    assert errors[2] < errors[1] / 10 < errors[0] / 100
    assert steps[0] < steps[1] < steps[2]


def test_coupled_model_exchange_flows_step_under_a_tolerance(fmu_dir):
    from test_coupled import N_IMPACTS, T_END, plant_and_controller, with_stop

    reference = with_stop(plant_and_controller(fmu_dir, "me"))
    adaptive = with_stop(plant_and_controller(fmu_dir, "me"))
    try:
        fixed = Halving(h=1e-3).run(reference, T_END)
        result = Halving(rtol=1e-9, atol=1e-12).run(adaptive, T_END)
    finally:
        reference.close()
        adaptive.close()
    assert len(result.events) == len(fixed.events) == N_IMPACTS
    assert np.max(np.abs(result.event_times - fixed.event_times)) < 1e-7
    assert result.stats["n_steps"] < fixed.stats["n_steps"] / 5


def test_dopri5_without_rtol_takes_the_default_experiment_tolerance():
    system = bouncing_ball()
    method = Halving(integrator="dopri5")
    with_tolerance = HybridSystem(
        list(system.modes.values()),
        system.initial_mode,
        system.x0,
        experiment=Experiment(tolerance=1e-7),
    )
    assert method.tolerance(with_tolerance) == (1e-7, 1e-7)
    assert method.tolerance(system) == (1e-5, 1e-5)  # FMPy's CVode default
    result = method.run(with_tolerance, 1.0)
    assert ast.literal_eval(result.provenance["tolerance"])["rtol"] == 1e-7


def test_roberts_default_experiment_tolerance_is_read():
    from fmibridge.flows.fmu import fmu_system

    path = Path("/work/shared/reference-fmus/fmi3/Roberts.fmu")
    if not path.exists():
        pytest.skip("no Reference FMUs here")
    system = fmu_system(path, "me")
    try:
        assert Halving(integrator="dopri5").tolerance(system) == (1e-4, 1e-4)
    finally:
        system.close()


def test_simulate_and_the_cli_take_the_tolerance(tmp_path):
    result = simulate(bouncing_ball(), stop_time=1.0, relative_tolerance=1e-8)
    assert ast.literal_eval(result.provenance["tolerance"])["rtol"] == 1e-8
    assert math.isclose(result.events[0].t, 0.451523641, abs_tol=1e-9)
    out = tmp_path / "run.csv"
    argv = ["run", str(ADAPTER), "--rtol", "1e-8", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    events = out.with_name("run.events.csv").read_text().splitlines()
    assert len(events) == 1 + 49  # the header and Example 1's impacts


class ScipyRK45:
    """A Python adaptive integrator (scipy's RK45, one step per call) behind
    `PythonAdaptiveStepper`: the shape a stiff integrator plugs in with."""

    name = "scipy-rk45"
    is_adaptive = True

    def adaptive_stepper(self, flow, rtol, atol):
        return PythonAdaptiveStepper(
            _RK45Steps(flow, rtol, atol), flow.rhs_function(), rtol, atol
        )


class _RK45Steps:
    def __init__(self, flow, rtol, atol):
        self.flow, self.rtol, self.atol = flow, rtol, atol
        self.h_next, self.n_rejected, self.last = math.inf, 0, None

    def step(self, t, x, h_max):
        from scipy.integrate import RK45

        first = min(self.h_next, h_max)
        solver = RK45(
            self.flow.rhs,
            t,
            x,
            t + h_max,
            rtol=self.rtol,
            atol=self.atol,
            first_step=first,
        )
        solver.step()
        self.h_next, self.last = solver.h_abs, solver.dense_output()
        return solver.t - t, solver.y

    def dense(self, t):
        return self.last(t)


def test_a_python_integrator_plugs_into_the_adaptive_interface():
    exact = bouncing_ball_impacts(3)
    for method in (
        Halving(integrator=ScipyRK45(), rtol=1e-8, locate="illinois"),
        Relaxation(integrator=ScipyRK45(), rtol=1e-8, eps=1e-9),
    ):
        result = method.run(bouncing_ball(), 2.0)
        assert np.max(np.abs(result.event_times[:3] - exact)) < 1e-8
        assert result.provenance["parameters"].count("scipy-rk45") == 1


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Halving(rtol=1e-6, integrator="rk4"), "needs an adaptive integrator"),
        (lambda: Relaxation(atol=1e-6), "`atol` is a tolerance of adaptive steps"),
        (lambda: Halving(rtol=0.0), "`rtol` must be a finite number > 0"),
        (lambda: Halving(rtol=1e-6, atol=-1.0), "`atol` must be a finite number > 0"),
        (lambda: Halving(error_warning=0.0), "`error_warning` must be"),
    ],
)
def test_bad_tolerances_are_refused_naming_them(make, match):
    with pytest.raises(FmibridgeError, match=match):
        make()


def test_a_co_simulation_fmu_cannot_take_adaptive_steps(fmu_dir):
    path = fmu_dir / "BouncingBall.fmu"
    with pytest.raises(FmibridgeError, match="integrates itself .* give a step h"):
        simulate(path, fmi_type="cs", method=Halving(integrator="dopri5"))
