"""Print the tables of the method guides (docs/guide/*.md); about a minute.

    python docs/measure.py

Each table runs a method on a model with an exact solution: the bouncing ball
(impact times t_k = sqrt(2 h0/g) + ...; Zeno time sqrt(2 h0/g)(1 + e)/(1 - e))
and Example 1 of Burden et al.'s Table I (the forced oscillator with a stop,
49 impacts, rho-hat of eq. 30 against the analytic solution of eq. 28).
"""

from __future__ import annotations

import ast
import statistics
import time
import warnings

import numpy as np

from fmibridge import Completion, Halving, Relaxation, Unilateral
from fmibridge.models import (
    EXAMPLE_1,
    bouncing_ball,
    bouncing_ball_impacts,
    bouncing_ball_zeno_time,
    forced_oscillator,
)
from fmibridge.validation import exact_solution, rho_hat

IMPACTS = bouncing_ball_impacts(6)


def ball_row(method) -> str:
    start = time.perf_counter()
    result = method.run(bouncing_ball(), 3.0)
    wall = time.perf_counter() - start
    error = np.abs(result.event_times[:6] - IMPACTS).max()
    return (
        f"| {error:.1e} | {result.stats['n_steps']} | {result.stats['n_rejected']} "
        f"| {wall * 1e3:.0f} |"
    )


def oscillator_row(method, exact) -> str:
    start = time.perf_counter()
    result = method.run(forced_oscillator(EXAMPLE_1), EXAMPLE_1.t_max)
    wall = time.perf_counter() - start
    error = rho_hat(result.t, result["x"], exact)
    return f"| {error:.1e} | {len(result.events)} | {wall:.2f} |"


def step_or_tolerance_row(method, exact) -> str:
    """Example 1 compiled: rho-hat, impacts, steps (rejected), the median wall
    time of five runs, and the step error estimate (fixed steps)."""
    times = []
    for _ in range(5):
        system = forced_oscillator(EXAMPLE_1, compiled=True)
        start = time.perf_counter()
        result = method.run(system, EXAMPLE_1.t_max)
        times.append(time.perf_counter() - start)
    error = rho_hat(result.t, result["x"], exact)
    step = result.provenance.get("step_error")
    estimate = f"{ast.literal_eval(step)['relative']:.1e}" if step else "-"
    return (
        f"| {error:.1e} | {len(result.events)} | {result.stats['n_steps']} "
        f"({result.stats['n_rejected']}) | {statistics.median(times) * 1e3:.1f} "
        f"| {estimate} |"
    )


def main() -> None:
    warnings.simplefilter("ignore")
    exact = exact_solution(EXAMPLE_1, EXAMPLE_1.t_max)
    print("Halving, ball: h, locate -> max impact-time error, steps, rejected, ms")
    for h in (1e-1, 1e-2, 1e-3):
        for locate in ("halving", "illinois"):
            print(f"| {h:g} | {locate} ", ball_row(Halving(h=h, locate=locate)))
    print("Halving, ball, h = 1e-2: t_tol -> error")
    for t_tol in (1e-4, 1e-7, 1e-10):
        print(f"| {t_tol:g} ", ball_row(Halving(h=1e-2, t_tol=t_tol)))
    print("Halving, Example 1: integrator, h -> rho-hat, impacts, s")
    for integrator in ("euler", "midpoint", "rk4"):
        for h in (0.04, 0.02, 0.01):
            method = Halving(h=h, integrator=integrator, locate="illinois")
            print(f"| {integrator} | {h:g} ", oscillator_row(method, exact))
    print(
        "h or a tolerance, Example 1 compiled: setting -> rho-hat, impacts, steps "
        "(rejected), ms, step error estimate"
    )
    forced_oscillator(EXAMPLE_1, compiled=True)  # compiled once, before timing
    settings = [
        (f"Halving rk4, h = {h:g}", Halving(h=h, locate="illinois"))
        for h in (0.2, 0.1, 0.05, 0.02, 0.01, 0.005)
    ]
    settings += [
        (f"Halving dopri5, rtol = {r:g}", Halving(rtol=r, locate="illinois"))
        for r in (1e-4, 1e-6, 1e-8, 1e-9, 1e-10)
    ]
    settings += [
        (f"Relaxation midpoint, h = {h:g}", Relaxation(h=h, eps=1e-9))
        for h in (0.05, 0.02, 0.01)
    ]
    settings += [
        (f"Relaxation dopri5, rtol = {r:g}", Relaxation(rtol=r, eps=1e-9))
        for r in (1e-6, 1e-9)
    ]
    for label, method in settings:
        print(f"| {label} ", step_or_tolerance_row(method, exact))
    print("Relaxation, ball, h = 1e-3 (midpoint): eps -> error")
    for eps in (1e-3, 1e-5, 1e-7):
        print(f"| {eps:g} ", ball_row(Relaxation(h=1e-3, eps=eps)))
    print("Unilateral, ball: tol -> error")
    for tol in (1e-4, 1e-6, 1e-8, 1e-10):
        print(f"| {tol:g} ", ball_row(Unilateral(tol=tol)))
    print("Completion(Halving(h=1e-2)), ball to 10 s: eps -> Zeno-time error, events")
    zeno = bouncing_ball_zeno_time()
    for eps in (1e-1, 1e-2, 1e-3, 1e-4):
        result = Completion(Halving(h=1e-2), eps=eps).run(bouncing_ball(), 10.0)
        start = result.t[list(result.mode).index("constrained")]
        print(
            f"| {eps:g} | {abs(start - zeno):.1e} | {len(result.events)} "
            f"| {result['h'][-1]:.1e} |"
        )


if __name__ == "__main__":
    main()
