"""`python -m benchmarks`: wall time and accuracy against peers, in the same run.

Every case times fmibridge and its peers in this process, each at its best
settings found by a short search (halving a step or a tolerance until the
accuracy target is reached), and reports median wall times, the accuracies
reached and the ratios. The two runs of a row are timed in alternating blocks
(`paired_times`), so a noisy machine's drift hits both alike. Peers:

* the Paoli-Schatzman scheme (eq. 29) on Table I, Examples 1 and 2;
* scipy's `solve_ivp` (RK45, DOP853) with a terminal event and a restart at
  every impact, as a user writes it;
* `fmpy.simulate_fmu` with CVode on the FMU BouncingBallEvents, and on a plain
  Co-Simulation run of MassSpringStop (the same keywords, the same doSteps);
* the raw cost of the FMU calls one master step needs (the master's overhead);
* coupled systems: the coupled Model Exchange step against the raw FMU calls it
  makes, and the co-simulation master against a Jacobi loop written plainly on
  fmpy, as PyFMI's master runs it (same FMUs, same communication step);
* adaptive steps: Halving under a tolerance alone (Dormand-Prince 5(4), rtol
  searched) against its fixed steps (RK4, h searched) on Example 1;
* stiff Model Exchange (`stiff`): CVODE between events against fmpy's CVode on
  Roberts to 1e8 s and on a stiff drive with a stop.

Timings are reported, never asserted: machines are noisy.

References
----------
Burden et al., Sec. V-B, Table I, eqs. 29-30, Fig. 14 (rho-hat against wall time).
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from fmibridge.core.errors import FmibridgeWarning
from fmibridge.examples import load_builder
from fmibridge.methods.base import Method
from fmibridge.methods.completion import Completion
from fmibridge.methods.halving import Halving
from fmibridge.methods.relaxation import Relaxation
from fmibridge.models.ball import bouncing_ball_impacts
from fmibridge.models.oscillator import forced_oscillator
from fmibridge.models.oscillator import rhs as oscillator_rhs
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, OscillatorParams, exact_solution
from fmibridge.validation import rho_hat as rho_hat_of
from fmibridge.validation.paoli_schatzman import paoli_schatzman

ROOT = Path(__file__).resolve().parents[1]  # the repository: fmus/, adapters/
# Strip widths tried, as fractions of the rho-hat target: relaxation's error is
# O(eps) once h is fine enough (Cor. 28), about 1.3 eps on Example 2 and 100-170
# eps on Example 1 (resonant: each delay shifts all later impacts), measured.
EPS_PER_TARGET = (0.25, 0.005, 0.001)
# A search stops once STALL_WINDOW refinements in a row improve the best error by
# less than STALL_RATIO: it is limited by something else (eps, restarts). Three,
# because PS errors are not monotone in h while h is coarse.
STALL_RATIO, STALL_WINDOW = 0.8, 3
# Halving and Completion searches start here: RK4 between impacts reaches 1e-4 on
# Example 2 from h = 0.2 (measured), and each halving of h costs little compiled.
HALVING_H0 = 0.8
# Completion's truncation budgets: eps_q (position, what rho-hat scores) as a
# fraction of the target; eps_t and eps_v either the same, or ZENO_EPS_TV, since
# rho-hat scores positions only. Measured on Example 2 (h = 0.2, eps_q = 1e-5):
# eps_t = eps_v = 1e-4, 1e-2, 0.1 give 34, 20, 14 events, the same rho-hat
# (1.2e-5) and lift-offs (to 1e-6 s), and Zeno times within 1e-4, 1e-4, 1.1e-3 s.
ZENO_EPS_PER_TARGET = 0.1
ZENO_EPS_TV = 0.1
# Halving runs stop here: Example 1 has 49 impacts; more means a Zeno accumulation.
HALVING_MAX_EVENTS = 100_000
# ...and after this many steps per grid step: Example 1 takes ~1.1 (its impacts'
# half steps); a sticking phase takes thousands (chatter resolved bounce by bounce).
HALVING_STEPS_PER_GRID_STEP = 5
# Step searches halve h at most this many times (2**-16 of the start).
MAX_HALVINGS = 16
# Tolerances the adaptive row tries, coarse to fine (rtol alone: atol = rtol).
ADAPTIVE_RTOLS = tuple(10.0**-k for k in range(4, 14))
# solve_ivp tolerances tried, coarse to fine; atol = ATOL_PER_RTOL * rtol (the
# oscillators' states are O(1)-O(30), so atol never binds before rtol).
IVP_RTOLS = tuple(10.0**-k for k in range(3, 14))
ATOL_PER_RTOL = 1e-2
# Bound on solve_ivp restarts of one run: Example 2 needs ~100 impacts before its
# first sticking phase, where a restart-per-event loop makes no more progress.
MAX_RESTARTS = 2000
# A search stops refining once one run of a peer or of fmibridge takes longer:
# the run is reported as "not reached" with the finest setting tried.
SEARCH_BUDGET_S = 20.0
# The two runs compared in a row are timed in alternating blocks (A.. B.. A..),
# so the drift of a shared machine (2x over minutes here, measured) hits both
# alike. A block repeats its run for at least BLOCK_S; its first run, which
# pays for the caches the other side left (measured: up to 1.6x on a 1 ms run
# after PS's), is dropped when the block has more. Blocks alternate until each
# side has `repeats` timed runs and MIN_TIMED_S in total (a median of three
# millisecond runs is mostly noise), at most MAX_BLOCKS blocks.
BLOCK_S, MIN_TIMED_S, MAX_BLOCKS = 0.05, 0.3, 200
BALL_BOUNCES = 10  # impacts scored on BouncingBallEvents (the brief's first ten)
BALL_E, BALL_G = 0.8, 9.81  # the FMU's default restitution and gravity
# (Halving t_tol, CVode rtol) compared on BouncingBallEvents: each side's default,
# then both tight. A reset applied 'beyond' the surface errs by up to t_tol; CVode's
# default rtol errs by ~4e-4 s on these impacts (measured), 1e-8 by ~3e-7 s.
BALL_PAIRS = ((1e-6, None), (1e-10, 1e-8))
# issue 20's targets: Example 2 at most PS compiled by numba's wall (to the same
# rho-hat), Unilateral at most 1.2 the endpoint checks' wall on bumper cars
# (Esposito and Kumar, Table II: 7 %)
PS_COMPILED_TARGET = 1.0
BUMPER_CARS_TARGET = 1.2

T = TypeVar("T")


@dataclass(frozen=True)
class BenchOptions:
    """How much to run: repetitions, targets and budgets (`--quick` shrinks them)."""

    repeats: int = 3
    quick: bool = False
    search_budget_s: float = SEARCH_BUDGET_S
    min_timed_s: float = MIN_TIMED_S
    ball_interval: float = 1e-2
    overhead_steps: int = 4000
    targets: dict[str, float] = field(
        default_factory=lambda: {
            "example_2_ps": 1e-4,
            "example_1_ps": 1e-3,
            "example_1_ivp": 1e-6,
            "example_2_ivp": 1e-4,
            "example_1_adaptive": 1e-6,
        }
    )

    @classmethod
    def quick_options(cls, repeats: int = 1) -> BenchOptions:
        """Loose targets and small budgets: seconds, for tests and smoke runs."""
        return cls(
            repeats=repeats,
            quick=True,
            search_budget_s=2.0,
            min_timed_s=0.0,
            overhead_steps=500,
            targets={
                "example_2_ps": 1e-2,
                "example_1_ps": 1e-1,
                "example_1_ivp": 1e-2,
                "example_2_ivp": 1e-2,
                "example_1_adaptive": 1e-3,
            },
        )


@dataclass(frozen=True)
class Row:
    """One line of the table: fmibridge against one peer on one case."""

    case: str
    metric: str
    fmibridge_s: float
    peer: str
    peer_s: float
    fmibridge_error: float
    peer_error: float
    fmibridge_settings: str
    peer_settings: str
    note: str = ""

    @property
    def time_ratio(self) -> float:
        """fmibridge's time over the peer's (< 1: fmibridge is faster)."""
        return self.fmibridge_s / self.peer_s if self.peer_s > 0 else math.nan

    @property
    def error_ratio(self) -> float:
        """fmibridge's error over the peer's (<= 1: at least as accurate)."""
        if self.peer_error > 0:
            return self.fmibridge_error / self.peer_error
        return math.nan


@dataclass(frozen=True)
class Found:
    """The coarsest setting that reached a target, with its error and median
    time, and the run itself (for `paired_times`)."""

    setting: str
    error: float
    wall_s: float
    is_reached: bool
    note: str = ""
    run: Callable[[], object] | None = field(default=None, compare=False, repr=False)


def median_time(run: Callable[[], T], repeats: int) -> tuple[float, T]:
    """Return (median wall time over `repeats` runs, the last run's value)."""
    times = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def paired_times(
    ours: Callable[[], object], theirs: Callable[[], object], options: BenchOptions
) -> tuple[float, float]:
    """Return the median wall times of two runs timed in alternating blocks
    (BLOCK_S, MIN_TIMED_S, MAX_BLOCKS; `options.min_timed_s` is the latter)."""
    times: tuple[list[float], list[float]] = ([], [])
    for n in range(MAX_BLOCKS):
        run, kept = (ours, theirs)[n % 2], times[n % 2]
        block: list[float] = []
        while not block or (sum(block) < BLOCK_S and options.min_timed_s > 0):
            start = time.perf_counter()
            run()
            block.append(time.perf_counter() - start)
        kept.extend(block[1:] if len(block) > 1 else block)
        if n % 2 and all(
            len(side) >= options.repeats and sum(side) >= options.min_timed_s
            for side in times
        ):
            break
    return statistics.median(times[0]), statistics.median(times[1])


def search(
    run: Callable[[float], object],
    error_of: Callable[[object], float],
    values: list[float],
    target: float,
    *,
    repeats: int,
    budget_s: float,
    label: Callable[[float], str],
    may_stall: bool = False,
) -> Found:
    """Try `values` coarse to fine; time the first whose error is <= target.

    Only `run(value)` is timed; `error_of(its output)` scores it afterwards,
    so the cost of the metric (rho-hat over every sample) is nobody's time.
    A value whose run fails (raises ValueError, e.g. too many PS steps) or
    takes longer than `budget_s` ends the search as "not reached"; with
    `may_stall`, so do STALL_WINDOW values in a row that barely improve the
    error (for errors that are monotone in the value: not PS, whose errors
    jump while h is coarse, nor solve_ivp, which misses grazing impacts at
    some tolerances and not at finer ones).
    """
    best, n_stalled = (math.inf, ""), 0
    for value in values:
        start = time.perf_counter()
        try:
            output = run(value)
        except ValueError as exc:
            return Found(best[1], best[0], math.nan, False, f"{label(value)}: {exc}")
        wall = time.perf_counter() - start
        error = error_of(output)
        if error <= target:
            wall, output = median_time(functools.partial(run, value), repeats)
            found = Found(label(value), float(error_of(output)), wall, True)
            return replace(found, run=functools.partial(run, value))
        n_stalled = n_stalled + 1 if error > STALL_RATIO * best[0] else 0
        if may_stall and n_stalled == STALL_WINDOW:
            return Found(
                best[1],
                best[0],
                math.nan,
                False,
                f"not reached: stalled at {label(value)}",
            )
        best = min(best, (error, label(value)))
        if wall > budget_s:
            return Found(
                best[1],
                best[0],
                math.nan,
                False,
                f"not reached: {label(value)} took {wall:.3g} s (budget)",
            )
    return Found(best[1], best[0], math.nan, False, "not reached: search exhausted")


# -- Table I: relaxation, PS, solve_ivp --


def _compiled_label(name: str, h: float) -> str:
    return f"{name} h={h:.4g}, compiled"


def _halving_steps(start: float) -> list[float]:
    return [start / 2**k for k in range(MAX_HALVINGS + 1)]


@functools.cache
def compiled_oscillator(params: OscillatorParams):
    """The compiled oscillator of `params`, built once per process: the model
    is given to the timed runs, as PS is given its parameters (its timed call
    builds no model; its numba recursion is compiled once per process)."""
    return forced_oscillator(params, compiled=True)


def run_to_t_max(method, params: OscillatorParams):
    """Run `method` on the compiled oscillator (`compiled_oscillator`) to t_max;
    return (t, x), or None (error inf) if it stopped early (a bound hit), never
    the small rho-hat of a partial trajectory. The run's warning is the None.

    The system is built outside the timed call and shared by every run, as in
    the methods rows (`fast_paths`): a run keeps its compiled forms in the
    system's modes, and results do not depend on an earlier run (measured: the
    same samples bit for bit as on a new system, Halving, Completion and
    Relaxation at h = 0.8 to 0.1 on Examples 1 and 2).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        result = method.run(compiled_oscillator(params), params.t_max)
    return (result.t, result["x"]) if result.status.is_success else None


def relaxation_run(params: OscillatorParams, integrator: str, h: float, eps: float):
    """Run Relaxation on the compiled oscillator (`run_to_t_max`)."""
    method = Relaxation(h=h, eps=eps, integrator=integrator, max_events=1_000_000)
    return run_to_t_max(method, params)


def halving_run(params: OscillatorParams, h: float, zeno_eps=None):
    """Run Halving (RK4, Illinois location) on the compiled oscillator, wrapped in
    Completion with the truncation budgets `zeno_eps` (a dict of Completion's
    eps options) if given; return (t, x).

    Halving alone resolves every impact, so a Zeno accumulation or a sticking
    phase (Example 2) exhausts its event or step budget: such a run did not
    reach t_max and returns None (error inf), never the small rho-hat of its
    partial trajectory.
    """
    max_steps = HALVING_STEPS_PER_GRID_STEP * math.ceil(params.t_max / h)
    method: Method = Halving(
        h=h,
        integrator="rk4",
        locate="illinois",
        max_events=HALVING_MAX_EVENTS,
        max_steps=max_steps,
    )
    if zeno_eps is not None:
        method = Completion(method, **zeno_eps)
    return run_to_t_max(method, params)


def adaptive_run(params: OscillatorParams, rtol: float):
    """Run Halving under the tolerance rtol alone (Dormand-Prince 5(4), Illinois
    location) on the compiled oscillator (`run_to_t_max`)."""
    method = Halving(rtol=rtol, locate="illinois", max_events=HALVING_MAX_EVENTS)
    return run_to_t_max(method, params)


def rho_hat_scorer(params: OscillatorParams, exact) -> Callable[[object], float]:
    """Return samples -> rho-hat on [0, t_max] (eq. 30); None scores inf."""

    def score(samples) -> float:
        if samples is None:
            return math.inf
        t, x = samples
        return rho_hat_of(t, x, exact, t_max=params.t_max)

    return score


def best_fmibridge(params, exact, target: float, options: BenchOptions) -> Found:
    """Search h for Halving (RK4, Illinois), for Completion around it (budgets
    from ZENO_EPS_PER_TARGET and ZENO_EPS_TV), and for Relaxation (midpoint,
    RK4) at each eps in EPS_PER_TARGET; keep the fastest that reaches the
    target. The oscillator is compiled (`forced_oscillator(compiled=True)`)."""
    runs = {
        "halving rk4 illinois": lambda h: halving_run(params, h),
    }
    eps_q = ZENO_EPS_PER_TARGET * target
    for budgets in (
        {"eps": eps_q},
        {"eps_q": eps_q, "eps_t": ZENO_EPS_TV, "eps_v": ZENO_EPS_TV},
    ):
        text = ", ".join(f"{k}={v:.0e}" for k, v in budgets.items())
        runs[f"completion(halving rk4 illinois, {text})"] = functools.partial(
            halving_run, params, zeno_eps=budgets
        )
    for integrator in ("midpoint", "rk4"):
        for eps in (f * target for f in EPS_PER_TARGET):
            runs[f"relaxation {integrator} eps={eps:.2g}"] = functools.partial(
                relaxation_run, params, integrator, eps=eps
            )
    found = [
        search(
            run,
            rho_hat_scorer(params, exact),
            _halving_steps(0.1 if name.startswith("relaxation") else HALVING_H0),
            target,
            repeats=options.repeats,
            budget_s=options.search_budget_s,
            may_stall=True,
            label=functools.partial(_compiled_label, name),
        )
        for name, run in runs.items()
    ]
    reached = [f for f in found if f.is_reached]
    return (
        min(reached, key=lambda f: f.wall_s)
        if reached
        else min(found, key=lambda f: f.error)
    )


def best_ps(
    params, exact, target: float, options: BenchOptions, *, compiled: bool = False
) -> Found:
    """Search the PS step h from 1e-2 by halving (eq. 29), in Python or numba."""

    def run(h: float):
        ps = paoli_schatzman(params, h, compiled=compiled)
        return ps.t, ps.x

    return search(
        run,
        rho_hat_scorer(params, exact),
        _halving_steps(1e-2),
        target,
        repeats=options.repeats,
        budget_s=options.search_budget_s,
        label=lambda h: f"PS h={h:.4g}{', compiled' if compiled else ''}",
    )


@dataclass(frozen=True)
class IvpRun:
    """One solve_ivp execution with restarts: samples, restarts and outcome."""

    t: np.ndarray
    x: np.ndarray
    n_restarts: int
    is_complete: bool


def ivp_with_restarts(params: OscillatorParams, method: str, rtol: float) -> IvpRun:
    """Integrate with `solve_ivp`, stop at each impact, apply the reset, restart.

    The event is x - x_max crossing upward (terminal); the restart begins at
    the located impact with v -> -c v. This is what a user writes; it makes no
    progress through sticking or a Zeno accumulation, and MAX_RESTARTS bounds it.
    """
    from scipy.integrate import solve_ivp

    f, x_max, c = oscillator_rhs(params), params.x_max, params.c

    def hits_stop(t, x):
        return x[0] - x_max

    vars(hits_stop).update(terminal=True, direction=1.0)  # what solve_ivp reads
    t, x = 0.0, np.array([params.x0, params.v0], dtype=float)
    ts, xs = [np.array([t])], [np.array([x[0]])]
    for n_restarts in range(MAX_RESTARTS + 1):
        sol = solve_ivp(
            f,
            (t, params.t_max),
            x,
            method=method,
            rtol=rtol,
            atol=ATOL_PER_RTOL * rtol,
            events=hits_stop,
        )
        ts.append(sol.t[1:])
        xs.append(sol.y[0, 1:])
        if sol.status != 1:  # reached t_max (0) or failed (-1)
            return IvpRun(
                np.concatenate(ts), np.concatenate(xs), n_restarts, sol.status == 0
            )
        t, v = float(sol.t_events[0][0]), float(sol.y_events[0][0][1])
        x = np.array([x_max, -c * v])
    return IvpRun(np.concatenate(ts), np.concatenate(xs), MAX_RESTARTS, False)


def best_ivp(params, exact, target: float, method: str, options: BenchOptions) -> Found:
    """Search rtol over IVP_RTOLS; a run stuck restarting counts as failed."""
    outcomes: dict[float, IvpRun] = {}

    def run(rtol: float):
        outcome = ivp_with_restarts(params, method, rtol)
        if not outcome.is_complete and any(
            not r.is_complete for r in outcomes.values()
        ):
            raise ValueError("stuck again at a finer rtol")  # ends the search
        outcomes[rtol] = outcome
        return (outcome.t, outcome.x) if outcome.is_complete else None

    found = search(
        run,
        rho_hat_scorer(params, exact),
        list(IVP_RTOLS),
        target,
        repeats=options.repeats,
        budget_s=options.search_budget_s,
        label=lambda r: f"{method} rtol={r:.0e}",
    )
    stuck = [r for r in outcomes.values() if not r.is_complete]
    if stuck and not found.is_reached:
        last = stuck[-1]
        note = (
            f"never reached: stuck at t = {last.t[-1]:.4g} s of {params.t_max:.4g} "
            f"after {last.n_restarts} restarts (sticking/Zeno)"
        )
        error = max(rho_hat_of(r.t, r.x, exact, t_max=params.t_max) for r in stuck)
        return Found(
            found.setting or f"{method} rtol<= {min(outcomes):.0e}",
            error,
            math.nan,
            False,
            note,
        )
    max_restarts = max((r.n_restarts for r in outcomes.values()), default=0)
    return Found(
        found.setting,
        found.error,
        found.wall_s,
        found.is_reached,
        "; ".join(s for s in (found.note, f"max restarts {max_restarts}") if s),
    )


def against_target(value: float, target: float, shown: str) -> str:
    """Say whether value <= target (shown as `shown`), or by how much not."""
    if value <= target:
        return f"target <= {shown}: met"
    return f"target <= {shown}: not met, x{value / target:.2f} of it"


def _row(
    case, metric, ours: Found, peer: str, theirs: Found, options: BenchOptions
) -> Row:
    """A row of the table; both runs found are timed again, in pairs."""
    notes = "; ".join(n for n in (ours.note, theirs.note) if n)
    ours_s, theirs_s = ours.wall_s, theirs.wall_s
    if ours.run is not None and theirs.run is not None:
        ours_s, theirs_s = paired_times(ours.run, theirs.run, options)
    return Row(
        case,
        metric,
        ours_s,
        peer,
        theirs_s,
        ours.error,
        theirs.error,
        ours.setting,
        theirs.setting,
        notes,
    )


def _with_target(row: Row, target: float) -> Row:
    """The row with its time ratio judged against target in its note."""
    judged = against_target(row.time_ratio, target, f"x{target:g}")
    note = "; ".join(n for n in (judged, row.note) if n)
    return replace(row, note=note)


def table_one_rows(options: BenchOptions) -> list[Row]:
    """fmibridge's Relaxation against PS and solve_ivp on Table I."""
    rows = []
    examples = {"example_1": EXAMPLE_1, "example_2": EXAMPLE_2}
    exacts = {name: exact_solution(p) for name, p in examples.items()}
    ours_by_target: dict[tuple[str, float], Found] = {}
    for name in ("example_2", "example_1"):
        params, exact = examples[name], exacts[name]
        for peer in ("ps", "ivp"):
            target = options.targets[f"{name}_{peer}"]
            if (name, target) not in ours_by_target:
                ours_by_target[name, target] = best_fmibridge(
                    params, exact, target, options
                )
            ours = ours_by_target[name, target]
            metric = f"time to rho-hat <= {target:.0e}"
            if peer == "ps":
                for compiled, label in ((False, "PS eq. 29"), (True, "PS (numba)")):
                    theirs = best_ps(params, exact, target, options, compiled=compiled)
                    rows.append(_row(name, metric, ours, label, theirs, options))
                if name == "example_2":  # issue 20: at most PS compiled's time
                    rows[-1] = _with_target(rows[-1], PS_COMPILED_TARGET)
                continue
            for method in ("RK45", "DOP853"):
                rows.append(
                    _row(
                        name,
                        metric,
                        ours,
                        f"solve_ivp {method}",
                        best_ivp(params, exact, target, method, options),
                        options,
                    )
                )
    return rows


def adaptive_rows(options: BenchOptions) -> list[Row]:
    """Halving under rtol alone against its fixed steps (RK4, Illinois) on
    Example 1, each at its coarsest setting that reaches the rho-hat target."""
    params, target = EXAMPLE_1, options.targets["example_1_adaptive"]
    score = rho_hat_scorer(params, exact_solution(params))
    ours, theirs = (
        search(
            run,
            score,
            values,
            target,
            repeats=options.repeats,
            budget_s=options.search_budget_s,
            may_stall=True,
            label=label,
        )
        for run, values, label in (
            (
                functools.partial(adaptive_run, params),
                list(ADAPTIVE_RTOLS),
                lambda r: f"halving dopri5 illinois rtol={r:.0e}, compiled",
            ),
            (
                functools.partial(halving_run, params),
                _halving_steps(HALVING_H0),
                lambda h: f"halving rk4 illinois h={h:.4g}, compiled",
            ),
        )
    )
    metric = f"time to rho-hat <= {target:.0e}"
    return [_row("example_1", metric, ours, "fmibridge fixed steps", theirs, options)]


# -- FMU: fmpy's CVode, and the master's overhead --


def reference_fmu(name: str) -> Path | None:
    """The Reference FMU `name` ("fmi3/Roberts.fmu") in the folder that
    FMIBRIDGE_REFERENCE_FMUS names, or None where it is not available."""
    folder = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
    path = Path(folder, name)
    return path if folder and path.is_file() else None


def build_fmus(models: list[str] | None = None) -> dict[str, Path]:
    """Build the repository's FMUs (`models`, else all and the SSPs) where
    needed; return each FMU's stem to its path."""
    return load_builder(ROOT / "fmus").build_fmus(models=models)


def ball_fmu_path() -> Path:
    """Return BouncingBallEvents.fmu, building the FMUs if needed."""
    return Path(build_fmus()["BouncingBallEvents"])


def impact_error(times: np.ndarray) -> float:
    """Return the largest error of the first BALL_BOUNCES impacts (inf if missing)."""
    exact = bouncing_ball_impacts(BALL_BOUNCES, g=BALL_G, e=BALL_E)
    if len(times) < BALL_BOUNCES:
        return math.inf
    return float(np.max(np.abs(np.asarray(times[:BALL_BOUNCES]) - exact)))


def _ball_t_end() -> float:
    return float(bouncing_ball_impacts(BALL_BOUNCES, g=BALL_G, e=BALL_E)[-1]) + 0.05


def fmibridge_ball(path: Path, interval: float, t_tol: float = 1e-10) -> float:
    """Open the FMU (ME), run Halving (Illinois location) at h = interval; return
    the impact-time error."""
    from fmibridge.flows.fmu import fmu_system

    system = fmu_system(path, "me")
    try:
        method = Halving(h=interval, integrator="rk4", t_tol=t_tol, locate="illinois")
        result = method.run(system, _ball_t_end())
    finally:
        system.close()
    return impact_error(np.asarray(result.event_times))


def fmpy_ball(path: Path, interval: float, rtol: float | None = None) -> float:
    """Run fmpy's CVode (ME) at `interval`; return the impact-time error.

    Impacts are read off the recorded events: equal times with v jumping up.
    """
    import fmpy

    out = fmpy.simulate_fmu(
        str(path),
        fmi_type="ModelExchange",
        solver="CVode",
        stop_time=_ball_t_end(),
        output_interval=interval,
        relative_tolerance=rtol,
    )
    t, v = out["time"], out["v"]
    jumps = np.flatnonzero((np.diff(t) == 0.0) & (np.diff(v) > 0.0))
    return impact_error(t[jumps])


def ball_rows(options: BenchOptions) -> list[Row]:
    """fmibridge (fmu_system + Halving) against fmpy CVode at equal output interval."""
    path, dt = ball_fmu_path(), options.ball_interval
    rows = []
    for t_tol, rtol in BALL_PAIRS:
        ours_run = functools.partial(fmibridge_ball, path, dt, t_tol)
        theirs_run = functools.partial(fmpy_ball, path, dt, rtol)
        ours_s, ours_err = median_time(ours_run, options.repeats)
        s, err = median_time(theirs_run, options.repeats)
        setting = f"CVode rtol={'default' if rtol is None else f'{rtol:.0e}'} dt={dt:g}"
        rows.append(
            _row(
                "BouncingBallEvents",
                f"first {BALL_BOUNCES} impacts, max |dt|",
                Found(
                    f"halving rk4 illinois h={dt:g} t_tol={t_tol:g}",
                    ours_err,
                    ours_s,
                    True,
                    run=ours_run,
                ),
                "fmpy.simulate_fmu",
                Found(setting, err, s, True, run=theirs_run),
                options,
            )
        )
    return rows


PLAIN_CS_TARGET = 1.0  # a plain Co-Simulation run: at most fmpy's time (issue 41)
PLAIN_CS_STEP = 1e-3  # s: the communication step and output interval


def plain_cs_rows(options: BenchOptions) -> list[Row]:
    """`simulate_fmu` against `fmpy.simulate_fmu`, the same keywords, on a plain
    Co-Simulation run of our MassSpringStop (no guards: fmibridge's compiled
    steps), without and with an input table for its force F; both make the
    same doSteps, so their rows agree exactly. Target: PLAIN_CS_TARGET."""
    import fmpy

    from fmibridge.fmpy_api import simulate_fmu

    path, h = str(build_fmus()["MassSpringStop"]), PLAIN_CS_STEP
    t_end = 2.0 if options.quick else 10.0
    table = np.array(
        [(0.0, 1.0), (t_end / 2, 0.0), (t_end / 2, 2.0), (t_end, 3.0)],
        dtype=[("time", float), ("F", float)],
    )
    rows = []
    for case, given in (("", None), (" + input table", table)):
        keywords: dict[str, Any] = dict(
            fmi_type="CoSimulation", stop_time=t_end, output_interval=h, input=given
        )
        ours_run = functools.partial(simulate_fmu, path, **keywords)
        theirs_run = functools.partial(fmpy.simulate_fmu, path, **keywords)
        ours_out, theirs_out = np.asarray(ours_run()), theirs_run()
        off_jump = theirs_out["time"] != (t_end / 2 if case else math.inf)
        difference = max(
            float(np.max(np.abs(ours_out[n] - theirs_out[n])[off_jump]))
            for n in theirs_out.dtype.names
        )
        ours, theirs = paired_times(ours_run, theirs_run, options)
        steps = ours_run().provenance["flows"].split("steps=")[-1]
        row = Row(
            f"plain CS FMU (MassSpringStop{case})",
            "s per run",
            ours,
            "fmpy.simulate_fmu",
            theirs,
            difference,
            math.nan,
            f"simulate_fmu CoSimulation h={h:g} to {t_end:g} s, steps {steps}",
            f"simulate_fmu CoSimulation h={h:g}",
            f"rows differ by {difference:.1e}" + (" (but at the jump)" if case else ""),
        )
        rows.append(_with_target(row, PLAIN_CS_TARGET))
    return rows


# The Reference FMUs of FMI 2.0 and 3.0 a plain Co-Simulation call is timed on,
# but these: Clocks offers no Co-Simulation, and Roberts' Co-Simulation run (the
# FMU's own fixed-step solver on a stiff model) takes minutes on either side
REFERENCE_CS_SKIPPED = ("Clocks", "Roberts")


def reference_cs_rows(options: BenchOptions) -> list[Row]:
    """`simulate_fmu` against `fmpy.simulate_fmu` with the same keywords
    (fmi_type='CoSimulation', the FMU's defaults otherwise) on each Reference
    FMU, one row each, and their geometric mean against PLAIN_CS_TARGET
    (issue 41): short runs (2-1001 rows), where a call's fixed cost (reading
    and checking the FMU, unpacking, instantiating, building the Result)
    weighs most."""
    folder = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
    paths = [
        path
        for path in sorted(Path(folder).glob("fmi[23]/*.fmu"))
        if path.stem not in REFERENCE_CS_SKIPPED
    ]
    if not folder or not paths:
        why = "skipped: FMIBRIDGE_REFERENCE_FMUS names no Reference FMUs"
        return [_skipped("plain CS, Reference FMUs", why)]
    rows = [_reference_cs_row(path, options) for path in paths]
    ours, theirs = (
        math.exp(statistics.fmean(math.log(getattr(row, side)) for row in rows))
        for side in ("fmibridge_s", "peer_s")
    )
    summary = Row(
        f"plain CS, {len(rows)} Reference FMUs: geometric mean",
        "s per run",
        ours,
        "fmpy.simulate_fmu",
        theirs,
        max(row.fmibridge_error for row in rows),
        math.nan,
        "simulate_fmu(path, fmi_type='CoSimulation')",
        "fmpy.simulate_fmu(path, fmi_type='CoSimulation')",
        "ratios: " + ", ".join(f"{row.case.split()[-1]} {row.time_ratio:.2f}"
                               for row in rows),
    )  # fmt: skip
    return [*rows, _with_target(summary, PLAIN_CS_TARGET)]


def _reference_cs_row(path: Path, options: BenchOptions) -> Row:
    """One Reference FMU's plain Co-Simulation call, both sides timed in pairs;
    the error is the largest difference of the columns both record."""
    import fmpy

    from fmibridge.fmpy_api import simulate_fmu

    ours_run = functools.partial(simulate_fmu, path, fmi_type="CoSimulation")
    theirs_run = functools.partial(fmpy.simulate_fmu, path, fmi_type="CoSimulation")
    ours_out, theirs_out = np.asarray(ours_run()), theirs_run()
    shared = [n for n in theirs_out.dtype.names if n in (ours_out.dtype.names or ())]
    difference = max(float(np.max(np.abs(ours_out[n] - theirs_out[n]))) for n in shared)
    ours, theirs = paired_times(ours_run, theirs_run, options)
    name = f"{path.parent.name}/{path.stem}"
    return Row(
        f"plain CS Reference FMU {name}",
        "s per run",
        ours,
        "fmpy.simulate_fmu",
        theirs,
        difference,
        math.nan,
        f"simulate_fmu CoSimulation, {len(ours_out)} rows",
        "the same keywords",
        f"{len(shared)} columns differ by {difference:.1e}",
    )


def raw_fmu_step_cost(path: Path, n_steps: int, n_stages: int = 4) -> float:
    """Return seconds per step of the bare fmpy calls an RK step with a guard needs.

    Per step: n_stages x (setTime, setContinuousStates, getDerivatives) and one
    (setTime, setContinuousStates, getEventIndicators), through fmpy's FMU2Model
    methods on preallocated ctypes buffers, in a tight loop.
    """
    import ctypes

    from fmibridge.flows.fmi import FmuArchive

    archive = FmuArchive(path)
    instance = archive.instantiate("ModelExchange")
    try:
        instance.initialize(0.0, {})
        instance.finish_initialization(10)
        fmu, nx, nz = instance._fmu, instance.nx, instance.nz
        x, dx, z = np.array([1.0, 0.0]), np.zeros(nx), np.zeros(max(nz, 1))
        pointer = ctypes.POINTER(ctypes.c_double)
        px, pdx, pz = (a.ctypes.data_as(pointer) for a in (x, dx, z))
        start = time.perf_counter()
        for k in range(n_steps):
            t = k * 1e-6
            for _ in range(n_stages):
                fmu.setTime(t)
                fmu.setContinuousStates(px, nx)
                fmu.getDerivatives(pdx, nx)
            fmu.setTime(t)
            fmu.setContinuousStates(px, nx)
            fmu.getEventIndicators(pz, nz)
        return (time.perf_counter() - start) / n_steps
    finally:
        instance.free()
        archive.cleanup()


def overhead_row(options: BenchOptions) -> Row:
    """fmibridge's time per RK4 step over an FMU, against the raw FMU call cost."""
    from fmibridge.flows.fmu import fmu_system

    path, n = ball_fmu_path(), options.overhead_steps
    t_first = float(bouncing_ball_impacts(1, g=BALL_G, e=BALL_E)[0])
    h = 0.9 * t_first / n  # n steps, all before the first impact: no halving
    system = fmu_system(path, "me")
    try:
        method = Halving(h=h, integrator="rk4")
        wall, result = median_time(lambda: method.run(system, n * h), options.repeats)
    finally:
        system.close()
    raw = statistics.median(raw_fmu_step_cost(path, n) for _ in range(options.repeats))
    return _per_step_row(
        "master overhead (ME FMU)",
        wall,
        result,
        raw,
        "4x(setTime, setContinuousStates, getDerivatives) + getEventIndicators",
        "overhead x{ratio:.2f}",
    )


def _per_step_row(case, wall, result, raw, peer_settings, note) -> Row:
    """A row of a run's time per step attempt against the raw FMU calls' cost;
    `note` may name {ratio}."""
    n_attempts = result.stats["n_steps"] + result.stats["n_rejected"]
    per_step = wall / n_attempts
    return Row(
        case,
        "s per RK4 step with guard",
        per_step,
        "raw fmpy calls",
        raw,
        math.nan,
        math.nan,
        f"halving rk4, {n_attempts} steps",
        peer_settings,
        note.format(ratio=per_step / raw),
    )


# -- coupled systems: MassSpringStop driven by PositionController --

COUPLED_CONNECTIONS = (
    ("plant.x", "controller.x_meas"),
    ("plant.v", "controller.v_meas"),
    ("controller.F", "plant.F"),
)
COUPLED_FIRST_IMPACT = 0.5654  # s, the first impact at the stop: runs end before
COMMUNICATION_STEP = 1e-2  # s, the co-simulation rows' step (200 steps to 2 s)


def coupled_paths(plant: str = "MassSpringStop") -> tuple[Path, Path]:
    """Return the plant's FMU (MassSpringStop, or MassSpringStopSlowSave whose state
    costs 0.5 ms to save) and PositionController.fmu (FMI 2), built if needed."""
    built = build_fmus(models=[plant, "PositionController"])
    return Path(built[plant]), Path(built["PositionController"])


def _coupled_flow(interface: str, plant: str = "MassSpringStop"):
    from fmibridge.flows.cosim_master import Communication
    from fmibridge.flows.coupled import couple
    from fmibridge.flows.fmu import open_fmu

    plant_path, controller = coupled_paths(plant)
    parts = {
        "plant": open_fmu(plant_path, interface),
        "controller": open_fmu(controller, interface),
    }
    return couple(parts, COUPLED_CONNECTIONS, communication=Communication("jacobi"))


def _stop_system(flow):
    """The coupled flow with the plant's stop as the guard (x_stop - x, 1 m)."""
    from fmibridge.core.guards import Edge, Guard
    from fmibridge.core.system import HybridSystem, Mode

    def gap(t, x):
        return 1.0 - x[0]

    def bounce(t, x):
        return np.array([x[0], -0.6 * x[1], x[2]])

    stop = Edge(Guard(gap, "falling"), "run", bounce, "stop")
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def _fmpy_instances(kind: str, paths: tuple[Path, ...] | None = None) -> list:
    """The plant and controller (`paths`, default `coupled_paths()`) as initialized
    fmpy instances ("ME" or "CS")."""
    import fmpy
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    instances = []
    for path in paths or coupled_paths():
        md = fmpy.read_model_description(str(path))
        fmu = (FMU2Model if kind == "ME" else FMU2Slave)(
            guid=md.guid,
            unzipDirectory=fmpy.extract(str(path), unzipdir=tempfile.mkdtemp()),
            modelIdentifier=md.modelExchange.modelIdentifier,
            instanceName=path.stem,
        )
        fmu.instantiate()
        _initialize(fmu)
        if kind == "ME":
            fmu.newDiscreteStates()
            fmu.enterContinuousTimeMode()
        vrs = {v.name: v.valueReference for v in md.modelVariables}
        instances.append((fmu, vrs))
    return instances


def _initialize(fmu) -> None:
    """Initialize an instantiated (or reset) fmpy instance at t = 0."""
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()


def _free(*instances) -> None:
    """Terminate and free fmpy instances and delete their unpacked files."""
    for fmu in instances:
        fmu.terminate()
        fmu.freeInstance()
        shutil.rmtree(fmu.unzipDirectory, ignore_errors=True)


def raw_coupled_step_cost(n_steps: int, n_stages: int = 4) -> float:
    """Return seconds per RK step of the bare fmpy calls the coupled step makes.

    Per stage: each FMU's setTime and setContinuousStates, the connections in
    the coupling's order (plant getReal x, v; controller setReal x_meas,
    v_meas; controller getReal F; plant setReal F) and each FMU's
    getDerivatives: ten calls through fmpy's FMU2Model methods, on
    preallocated state buffers, in a tight loop.
    """
    import ctypes

    (plant, p), (controller, c) = _fmpy_instances("ME")
    try:
        pointer = ctypes.POINTER(ctypes.c_double)
        buffers = [np.zeros(n) for n in (2, 2, 1, 1)]  # x, dx of plant, controller
        px, pdx, cx, cdx = (b.ctypes.data_as(pointer) for b in buffers)
        out_vrs, in_vrs = [p["x"], p["v"]], [c["x_meas"], c["v_meas"]]
        start = time.perf_counter()
        for k in range(n_steps):
            t = k * 1e-6
            for _ in range(n_stages):
                for fmu, states, n in ((plant, px, 2), (controller, cx, 1)):
                    fmu.setTime(t)
                    fmu.setContinuousStates(states, n)
                controller.setReal(in_vrs, plant.getReal(out_vrs))
                plant.setReal([p["F"]], controller.getReal([c["F"]]))
                plant.getDerivatives(pdx, 2)
                controller.getDerivatives(cdx, 1)
        return (time.perf_counter() - start) / n_steps
    finally:
        _free(plant, controller)


def coupled_overhead_row(options: BenchOptions) -> Row:
    """The coupled Model Exchange step (Halving, RK4, the stop as guard) per
    attempt, against the raw fmpy calls it makes."""
    n = options.overhead_steps
    h = 0.9 * COUPLED_FIRST_IMPACT / n  # every step before the first impact
    system = _stop_system(_coupled_flow("me"))
    try:
        method = Halving(h=h, integrator="rk4")
        wall, result = median_time(lambda: method.run(system, n * h), options.repeats)
    finally:
        system.close()
    raw = statistics.median(raw_coupled_step_cost(n) for _ in range(options.repeats))
    return _per_step_row(
        "coupled ME loop (2 FMUs)",
        wall,
        result,
        raw,
        "4x(2 setTime, 2 setContinuousStates, 2 getReal, 2 setReal, 2 getDerivatives)",
        "x{ratio:.2f} the raw calls (target <= 1.5)",
    )


class FmpyJacobi:
    """A Jacobi master written plainly on fmpy, as PyFMI's runs it: at each
    communication point set every input from its output (in the order of
    direct feedthrough), then step every FMU. The instances are made once;
    each `run` resets and initializes them, as a run of fmibridge's master
    re-enters t0 in its open FMUs."""

    def __init__(self, plant: str = "MassSpringStop") -> None:
        (self.plant, self.p), (self.controller, self.c) = _fmpy_instances(
            "CS", coupled_paths(plant)
        )

    def run(self, t_end: float, h: float) -> np.ndarray:
        """Return the final states (plant x, v; controller z) at t_end."""
        plant, p, controller, c = self.plant, self.p, self.controller, self.c
        for fmu in (plant, controller):
            fmu.reset()
            _initialize(fmu)
        for k in range(round(t_end / h)):
            t = k * h  # outputs in dependency order: F feeds through x_meas, v_meas
            controller.setReal(
                [c["x_meas"], c["v_meas"]], plant.getReal([p["x"], p["v"]])
            )
            plant.setReal([p["F"]], controller.getReal([c["F"]]))
            plant.doStep(t, h)
            controller.doStep(t, h)
        return np.array(
            [*plant.getReal([p["x"], p["v"]]), *controller.getReal([c["z"]])]
        )

    def close(self) -> None:
        """Terminate and free the instances."""
        _free(self.plant, self.controller)


def cosim_master_row(options: BenchOptions) -> Row:
    """fmibridge's co-simulation master (Jacobi, held inputs) against
    `FmpyJacobi`: same FMUs, same step, no guard, so no state saved."""
    from fmibridge.core.system import HybridSystem, Mode

    h, t_end = COMMUNICATION_STEP, 0.5 if options.quick else 2.0
    flow = _coupled_flow("cs")
    system = HybridSystem([Mode("run", flow)], "run", flow.x0)
    peer = FmpyJacobi()
    try:
        method = Halving(h=h)
        ours_x = method.run(system, t_end).x[-1]
        theirs_x = peer.run(t_end, h)
        ours, theirs = paired_times(
            lambda: method.run(system, t_end), lambda: peer.run(t_end, h), options
        )
    finally:
        system.close()
        peer.close()
    n = round(t_end / h)
    difference = float(np.max(np.abs(ours_x - theirs_x)))
    return Row(
        "CS master, Jacobi (2 FMUs)",
        "s per communication step",
        ours / n,
        "Jacobi loop on fmpy",
        theirs / n,
        difference,
        math.nan,
        f"halving h={h:g}, {n} steps, no guard",
        f"getReal, setReal, doStep per FMU, h={h:g}",
        f"final states differ by {difference:.1e}",
    )


COSIM_GUARD_TARGET = 1.3  # the CS master with a guard over the plain fmpy loop


def cosim_guard_row(options: BenchOptions, plant: str, locate: str = "halving") -> Row:
    """fmibridge's co-simulation master with the stop as guard (Halving locates
    each impact, by undoing and halving the step that crossed, or with `locate`
    "approach" by stepping short of it; FMU states saved only where the guard's
    extrapolation says a step may cross it) against `FmpyJacobi` on the same
    FMUs and step, which has no guard: the price of the events. Target:
    COSIM_GUARD_TARGET."""
    h, t_end = COMMUNICATION_STEP, 1.0 if options.quick else 3.0
    flow = _coupled_flow("cs", plant)
    system = _stop_system(flow)
    peer = FmpyJacobi(plant)
    try:
        method = Halving(h=h, locate=locate)
        result = method.run(system, t_end)
        ours, theirs = paired_times(
            lambda: method.run(system, t_end), lambda: peer.run(t_end, h), options
        )
    finally:
        system.close()
        peer.close()
    saves = result.provenance.get("fmu_state_saves", "?")
    n = round(t_end / h)
    return _with_target(
        Row(
            f"CS master + guard, Jacobi ({plant})"
            + (", approached" if locate == "approach" else ""),
            "s per communication step",
            ours / n,
            "Jacobi loop on fmpy",
            theirs / n,
            math.nan,
            math.nan,
            f"halving h={h:g} locate={locate} to {t_end:g} s, "
            f"{len(result.events)} impacts, {result.stats['n_steps']} steps, "
            f"{result.stats['n_rejected']} undone, FMU state saves {saves}",
            f"getReal, setReal, doStep per FMU, h={h:g}, no guard",
            "",
        ),
        COSIM_GUARD_TARGET,
    )


def coupled_rows(options: BenchOptions) -> list[Row]:
    """The coupled section: the coupled flow's overhead and the co-simulation
    master's."""
    return [
        coupled_overhead_row(options),
        cosim_master_row(options),
        cosim_guard_row(options, "MassSpringStop"),
        cosim_guard_row(options, "MassSpringStopSlowSave"),
        cosim_guard_row(options, "MassSpringStopSlowSave", "approach"),
    ]


# -- other engineers' studies, when present --


def extra_rows(options: BenchOptions) -> list[Row]:
    """bumper_cars_overhead (issue 6) and sweep_speedup (issue 9) if available."""
    from .bumper_cars import bumper_cars_overhead

    rows = []
    if options.quick:
        rows.append(
            _skipped(
                "bumper cars (unilateral vs endpoint)",
                "skipped in --quick (takes ~20 s)",
            )
        )
    else:
        rows.append(_bumper_cars_row(bumper_cars_overhead()))
    if options.quick:
        rows.append(
            _skipped("sweep speedup", "skipped in --quick (starts a Dask cluster)")
        )
        return rows
    from .sweep_speedup import sweep_speedup

    info = sweep_speedup(n_runs=40, workers=2)
    rows.append(
        Row(
            "sweep speedup (40 runs, 2 workers)",
            "wall s",
            info["parallel_s"],
            "serial loop",
            info["serial_s"],
            math.nan,
            math.nan,
            "dask local cluster",
            "for loop",
            f"speedup x{info['speedup']:.2f} (x"
            f"{info['speedup_excluding_startup']:.2f} excluding startup)",
        )
    )
    return rows


def _bumper_cars_row(info: dict) -> Row:
    """Unilateral against EndpointAdams on bumper cars (`bumper_cars_overhead`);
    target: at most BUMPER_CARS_TARGET of the endpoint checks' wall."""
    return _with_target(
        Row(
            "bumper cars (unilateral vs endpoint)",
            "wall s (3 systems, 20 s)",
            info["wall_extrapolation"],
            "EndpointAdams (endpoint checks)",
            info["wall_endpoint"],
            math.nan,
            math.nan,
            f"Unilateral h=1 tol=1e-4, {info['n_steps']} steps, "
            f"{info['n_events']} events",
            "the same integrator, guards checked at step ends",
            "Esposito and Kumar report 7 % overhead (Table II)",
        ),
        BUMPER_CARS_TARGET,
    )


def _skipped(case: str, note: str) -> Row:
    return Row(case, "", math.nan, "", math.nan, math.nan, math.nan, "", "", note)


# -- the suite --


def _fast_paths():
    """The compiled paths' rows (`fast_paths`, which builds on this module)."""
    from . import fast_paths

    return fast_paths


def _stiff():
    """The stiff Model Exchange rows (`stiff`, which builds on this module)."""
    from . import stiff

    return stiff


def _crosscheck():
    """Exported FMUs against fmpy and their references (`crosscheck`)."""
    from . import crosscheck

    return crosscheck


SECTIONS: dict[str, Callable[[BenchOptions], list[Row]]] = {
    "table1": table_one_rows,
    "fmu": lambda options: (
        ball_rows(options) + plain_cs_rows(options) + reference_cs_rows(options)
    ),
    "overhead": lambda options: [overhead_row(options)],
    "coupled": coupled_rows,
    "extra": extra_rows,
    "models": lambda options: _fast_paths().lagrangian_rows(options),
    "adapters": lambda options: _fast_paths().adapter_rows(options),
    "cold": lambda options: _fast_paths().cold_start_rows(options),
    "methods": lambda options: _fast_paths().method_rows(options),
    "adaptive": adaptive_rows,
    "stiff": lambda options: _stiff().stiff_rows(options),
    "crosscheck": lambda options: _crosscheck().crosscheck_rows(options),
}


def run_bench(
    options: BenchOptions | None = None,
    sections: tuple[str, ...] = tuple(SECTIONS),
    *,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Run the benchmark sections and return the table (one row per comparison).

    Columns: case, metric, fmibridge_s, peer, peer_s, time_ratio
    (fmibridge / peer), fmibridge_error, peer_error, error_ratio, the settings
    each side used, and a note (targets not reached, restarts, skips).

    Examples
    --------
    >>> frame = run_bench(BenchOptions.quick_options(), ("overhead",))  # doctest: +SKIP
    """
    options = options or BenchOptions()
    rows: list[Row] = []
    for name in sections:
        if progress is not None:
            progress(name)
        rows += SECTIONS[name](options)
    records = [
        {**asdict(r), "time_ratio": r.time_ratio, "error_ratio": r.error_ratio}
        for r in rows
    ]
    columns = [
        "case",
        "metric",
        "fmibridge_s",
        "peer",
        "peer_s",
        "time_ratio",
        "fmibridge_error",
        "peer_error",
        "error_ratio",
        "fmibridge_settings",
        "peer_settings",
        "note",
    ]
    return pd.DataFrame(records, columns=columns)
