"""Bench rows of the compiled paths against the Python paths they replace.

* Lagrangian models (Or and Ames, Examples 1 and 2) under
  Completion(Halving(h=1e-3)): `to_hybrid(..., compiled=True)` against the
  LagrangianFlow in Python; target: the sine ball over 15 s in 0.1 s;
* adapter-driven FMU runs: guards called by the compiled loop (the stack
  machine over the FMU's C calls), against the same guards called back
  through Python;
* the methods' compiled loops: Unilateral against Halving rk4 at the same h
  (target: at most 2x), Relaxation on the compiled oscillator against the same
  run on the oscillator in Python (Burden et al., Example 2 with its sticking
  phases; the strips are compiled in both);
* the first run in a new process: ``import fmibridge`` and the first
  `simulate_fmu` of a Reference FMU (BouncingBall, else the project's
  BouncingBallEvents.fmu), against the same with fmpy; target: at most 1.3x
  fmpy's (issue 41);
* the cold start: `fmibridge run` of an FMU in a new process with an empty
  numba cache (the FMU path compiles nothing at run time), then again;
  target: the first at most 3x the second.

Each pair is timed side by side (`suite.paired_times`); the compiled run's
"error" is its largest difference from the Python run's samples (0: the same
floating-point operations).

References
----------
Or and Ames, Examples 1 and 2 (Fig. 4).
"""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fmibridge.formats.adapters import load_adapter
from fmibridge.methods.completion import Completion
from fmibridge.methods.halving import Halving
from fmibridge.methods.relaxation import Relaxation
from fmibridge.methods.unilateral import Unilateral
from fmibridge.models.lagrangian import to_hybrid
from fmibridge.models.or_ames import knee_pendulum, sine_ball
from fmibridge.models.oscillator import forced_oscillator
from fmibridge.validation import EXAMPLE_1, EXAMPLE_2, exact_solution

from .suite import (
    ROOT,
    BenchOptions,
    Row,
    _skipped,
    against_target,
    ball_fmu_path,
    paired_times,
    reference_fmu,
)

ZENO_H = 1e-3  # s: the inner step
SINE_TARGET_S = 0.1  # s: the sine ball's 15 s run, compiled
COLD_TARGET = 3.0  # the first run's wall over the second's, at most
FIRST_RUN_TARGET = 1.3  # a new process's import + first FMU run over fmpy's (issue 41)
# new processes per side, alternating: a process's start varies by tens of ms on
# a shared machine, and the median of this many holds the ratio to a few percent
FIRST_RUN_REPEATS = 15
METHOD_H = 1e-2  # s: the step for Unilateral, Halving and Relaxation
UNILATERAL_TARGET = 2.0  # Unilateral's wall over Halving rk4's at the same h
RELAXATION_EPS = 2e-7  # Burden et al.'s headline strip width on Example 2
RELAXATION_BEFORE_S = 0.5  # s: issue 20's wall of that run, strips in Python


def _difference(a, b) -> float:
    """The largest difference of two runs' samples (inf if they differ in shape)."""
    if a.x.shape != b.x.shape:
        return math.inf
    return float(np.max(np.abs(a.x - b.x)))


def lagrangian_rows(options: BenchOptions) -> list[Row]:
    """The sine ball and the knee pendulum completed, compiled against Python."""
    t_end = 5.0 if options.quick else 15.0
    cases = [("sine ball", sine_ball(), [0.0, 2.0], [1.5, 0.0])]
    if not options.quick:
        cases.append(
            ("knee pendulum", knee_pendulum(), [math.radians(30), math.radians(25)],
             [0.0, 0.0])
        )  # fmt: skip
    method = Completion(Halving(h=ZENO_H))
    rows = []
    for name, model, q0, v0 in cases:
        start = time.perf_counter()
        compiled = to_hybrid(model, q0, v0, compiled=True)
        fast = method.run(compiled, t_end)
        first = time.perf_counter() - start
        python = to_hybrid(model, q0, v0)
        slow = method.run(python, t_end)
        ours, theirs = paired_times(
            functools.partial(method.run, compiled, t_end),
            functools.partial(method.run, python, t_end),
            options,
        )
        notes = [f"first run with numba compiling: {first:.1f} s"]
        if name == "sine ball" and t_end == 15.0:
            target = against_target(ours, SINE_TARGET_S, f"{SINE_TARGET_S:g} s")
            notes.insert(0, target)
        rows.append(
            Row(
                f"{name}, Completion {t_end:g} s",
                "wall s",
                ours,
                "Python path",
                theirs,
                _difference(fast, slow),
                math.nan,
                f"to_hybrid(compiled=True), halving h={ZENO_H:g}, "
                f"{fast.stats['n_steps']} steps, {len(fast.events)} events",
                "LagrangianFlow (numpy)",
                "; ".join(notes),
            )
        )
    return rows


def _impact_error(result, exact, t_end: float) -> float:
    """The largest impact-time error against the exact solution (inf if the
    run's impacts are not the exact ones before t_end)."""
    times = [t for t in exact.impact_times if t < t_end]
    if len(result.event_times) != len(times):
        return math.inf
    return float(np.max(np.abs(np.asarray(result.event_times) - times)))


def method_rows(options: BenchOptions) -> list[Row]:
    """Unilateral against Halving rk4 at the same h on Example 1 (a compiled
    model), and Relaxation on Example 2, compiled model against Python model."""
    t_end = 10.0 if options.quick else 30.0
    system, exact = (
        forced_oscillator(EXAMPLE_1, compiled=True),
        exact_solution(EXAMPLE_1),
    )
    ours_method = Unilateral(h=METHOD_H)
    peer = Halving(h=METHOD_H, integrator="rk4", locate="illinois")
    ours_run, peer_run = ours_method.run(system, t_end), peer.run(system, t_end)
    ours, theirs = paired_times(
        lambda: ours_method.run(system, t_end), lambda: peer.run(system, t_end), options
    )
    unilateral = Row(
        f"Unilateral vs Halving rk4, Example 1 {t_end:g} s",
        "wall s",
        ours,
        "Halving rk4 (Illinois)",
        theirs,
        _impact_error(ours_run, exact, t_end),
        _impact_error(peer_run, exact, t_end),
        f"Unilateral h={METHOD_H:g} (Adams PECE), {len(ours_run.events)} impacts",
        f"Halving h={METHOD_H:g}, the same compiled model",
        "error: impact times; "
        + against_target(ours / theirs, UNILATERAL_TARGET, f"x{UNILATERAL_TARGET:g}"),
    )
    return [unilateral, _relaxation_row(options)]


def _relaxation_row(options: BenchOptions) -> Row:
    """Relaxation(h=1e-2, eps=2e-7) on Example 2 (three sticking phases): the
    oscillator compiled (f, guard and reset called at their C addresses)
    against the oscillator in Python (called back), the strips compiled in both.

    The peer was the strips in Python (the same compiled flow and guard, the
    reset in Python, which kept the transitions out of the numba kernel); that
    path no longer exists.
    """
    t_end = 3.0 if options.quick else EXAMPLE_2.t_max
    method = Relaxation(h=METHOD_H, eps=RELAXATION_EPS, max_events=1_000_000)
    fast_system = forced_oscillator(EXAMPLE_2, compiled=True)
    python_system = forced_oscillator(EXAMPLE_2)
    fast, slow = method.run(fast_system, t_end), method.run(python_system, t_end)
    ours, theirs = paired_times(
        lambda: method.run(fast_system, t_end),
        lambda: method.run(python_system, t_end),
        options,
    )
    n_transitions = len(fast.events) + fast.stats["n_silent_events"]
    return Row(
        f"Relaxation, Example 2 {t_end:.4g} s",
        "wall s",
        ours,
        "model in Python",
        theirs,
        _difference(fast, slow),
        math.nan,
        f"compiled model, h={METHOD_H:g}, eps={RELAXATION_EPS:g}, "
        f"{n_transitions} transitions",
        "the same run, f, guard and reset in Python",
        f"issue 20 measured about {RELAXATION_BEFORE_S:g} s for this run before"
        if t_end == EXAMPLE_2.t_max
        else "",
    )


def adapter_rows(options: BenchOptions) -> list[Row]:
    """Adapter-driven FMU runs: guards called by the compiled loop, against the
    same guards called back through Python."""
    ball_fmu_path()  # builds the FMUs the adapters name
    rows = []
    for name in ("bouncing_ball", "ball_on_sine_surface"):
        path = ROOT / "adapters" / f"{name}.toml"
        with load_adapter(path) as fast, load_adapter(path) as slow:
            for edge in slow.system.mode(slow.system.initial_mode).edges:
                vars(edge.guard.fn).pop("engine_entry", None)  # called back
            ours_result, theirs_result = fast.run(), slow.run()
            ours, theirs = paired_times(fast.run, slow.run, options)
        guards = ", ".join(
            repr(e.guard.fn.__name__)
            for e in fast.system.mode(fast.system.initial_mode).edges
        )
        rows.append(
            Row(
                f"adapter {name}.toml",
                "wall s",
                ours,
                "guards called back",
                theirs,
                _difference(ours_result, theirs_result),
                math.nan,
                f"guards {guards} in the compiled loop, {fast.method.name} "
                f"h={fast.method.h:g}, t_end={fast.t_end:g}",
                "the same run, the guards called back through Python",
                f"{len(ours_result.events)} events",
            )
        )
    return rows


def _fmibridge_run(path: Path, env: dict) -> float:
    """Wall time of `fmibridge run PATH --stop-time 3` in a new process."""
    start = time.perf_counter()
    subprocess.run(  # noqa: S603 - this interpreter, fmibridge's CLI
        [sys.executable, "-m", "fmibridge.cli", "run", str(path), "--stop-time", "3",
         "--no-progress"],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - start


def _new_process(code: str, env: dict[str, str]) -> float:
    """Wall time of `python -c code` in a new process of this interpreter."""
    start = time.perf_counter()
    subprocess.run(  # noqa: S603 - this interpreter, a fixed one-line script
        [sys.executable, "-c", code], env=env, capture_output=True, check=True
    )
    return time.perf_counter() - start


def first_run_row(options: BenchOptions) -> Row:
    """A new process's ``import fmibridge`` and first `simulate_fmu` of an FMU,
    against ``import fmpy`` and `fmpy.simulate_fmu` of the same FMU, with
    FMPy's defaults on both sides; new processes alternate, and each side's
    median is kept.

    Both run as a user's do: with bytecode written (PYTHONDONTWRITEBYTECODE
    dropped from their environment, each side run once first), else
    fmibridge's modules would be compiled from source in every process while
    fmpy's installed ones have theirs.
    """
    path = reference_fmu("fmi2/BouncingBall.fmu") or ball_fmu_path()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    codes = {
        name: f"import {name}; {name}.simulate_fmu({str(path)!r})"
        for name in ("fmibridge", "fmpy")
    }
    for code in codes.values():  # writes the bytecode
        _new_process(code, env)
    repeats = options.repeats if options.quick else FIRST_RUN_REPEATS
    times: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(repeats):
        for name, code in codes.items():
            times[name].append(_new_process(code, env))
    ours, theirs = (float(np.median(times[name])) for name in codes)
    shown = f"x{FIRST_RUN_TARGET:g}"
    return Row(
        f"first run in a new process: import + simulate_fmu({path.name})",
        "wall s (new process)",
        ours,
        "fmpy",
        theirs,
        math.nan,
        math.nan,
        f"import fmibridge; fmibridge.simulate_fmu(path), median of {repeats}",
        f"import fmpy; fmpy.simulate_fmu(path), median of {repeats}",
        f"fmibridge/fmpy x{ours / theirs:.2f}, "
        f"{against_target(ours / theirs, FIRST_RUN_TARGET, shown)}; bytecode "
        f"written (PYTHONDONTWRITEBYTECODE dropped), each side run once first, "
        f"then alternating",
    )


def cold_start_rows(options: BenchOptions) -> list[Row]:
    """The first FMU run in a new process against fmpy's (`first_run_row`), and
    against the next runs (`cold_cache_row`)."""
    return [first_run_row(options), cold_cache_row(options)]


def cold_cache_row(options: BenchOptions) -> Row:
    """`fmibridge run BouncingBallEvents.fmu` in a new process with an empty numba
    cache, then three times more: nothing on the FMU path compiles at run time."""
    if options.quick:
        return _skipped("cold start", "skipped in --quick (new processes)")
    path = ball_fmu_path()
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "NUMBA_CACHE_DIR": folder}
        first = _fmibridge_run(path, env)
        second = float(np.median([_fmibridge_run(path, env) for _ in range(3)]))
    ratio = first / second
    return Row(
        "cold start: fmibridge run BouncingBallEvents.fmu --stop-time 3",
        "wall s (new process)",
        first,
        "the next runs",
        second,
        math.nan,
        math.nan,
        "empty NUMBA_CACHE_DIR, first run",
        "the same, median of 3 new processes",
        f"first/next x{ratio:.2f}, "
        f"{against_target(ratio, COLD_TARGET, f'x{COLD_TARGET:g}')}",
    )
