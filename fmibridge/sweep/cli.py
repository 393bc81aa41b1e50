"""`fmibridge sweep SPEC.toml`: the command line of sweeps.

Every output is checked before the first run, and the summary is claimed
(created empty), so that a second sweep on it fails at once. A plugin metric is
named only here (`--metric package.module:function`), never in a spec.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pandas as pd

from ..core.errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from ..core.limits import MAX_SWEEP_RUNS
from ..core.outputs import check_output, check_output_folder, claimed, write_atomically
from ..core.records import Status
from ..core.time_limit import check_timeout
from .batch import ERROR, FORMATS, NOT_RUN, run_sweep
from .metrics import metric_named
from .spec import load_sweep


def cmd_sweep(args) -> int:
    """`fmibridge sweep SPEC.toml`: run a sweep and write its summary CSV.

    Exit code 0 if every run returned a Result, 1 if some raised, crashed or
    reached their time limit, 130 on Ctrl-C and 143 on SIGTERM (after writing
    the summary).
    """
    spec = load_sweep(args.spec, args.output_dir, max_runs=args.max_runs)
    timeout = check_timeout(args.timeout, "--timeout") or spec.timeout
    for name in args.metric:
        metric_named(name)  # a plugin that does not import fails here, once
    sweep = dataclasses.replace(spec.sweep, metrics=[*spec.sweep.metrics, *args.metric])
    out = check_output(
        spec.summary if args.out is None else args.out, force=args.force, what="--out"
    )
    trajectories = args.trajectories or spec.trajectories
    if trajectories:
        check_output_folder(trajectories, force=args.force, what="--trajectories")
    print(f"{args.spec}: {sweep.n_runs} runs on scheduler {args.scheduler!r}")
    with claimed(out, force=args.force, what="--out"):  # a second sweep fails now
        result = run_sweep(
            sweep,
            scheduler=args.scheduler,
            workers=args.workers,
            trajectories=trajectories or False,
            file_format=args.format or spec.file_format,
            progress=not args.no_progress,
            timeout=timeout,
        )
        summary = result.summary
        write_atomically(out, summary.to_csv)
    _print(summary, out, trajectories, result.is_interrupted)
    if result.is_interrupted:
        return EXIT_TERMINATED if result.is_terminated else EXIT_INTERRUPTED
    return 1 if summary["status"].isin(FAILED).any() else 0


FAILED = (ERROR, Status.TIME_LIMIT.name)  # statuses that make the exit code 1


def _print(summary: pd.DataFrame, out: Path, trajectories, is_interrupted) -> None:
    """Print the first rows, the failed runs and where the output went."""
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(
            summary.drop(columns=["error"])
            .head(20)
            .to_string(float_format="{:.6g}".format)
        )
    failed = summary[summary["status"].isin(FAILED)]
    for run, message in failed["error"].items():
        print(f"run {run} failed: {message or 'its time limit ended it'}")
    finished = (summary["status"] != NOT_RUN).sum()
    state = "interrupted; " if is_interrupted else ""
    print(
        f"{state}{finished}/{len(summary)} runs finished ({len(failed)} failed); "
        f"wrote {out}" + (f" and {trajectories}/" if trajectories else "")
    )


def _count(text: str) -> int:
    """argparse type of --workers and --max-runs: an integer >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return int(text)


def add_arguments(sweep: argparse.ArgumentParser) -> None:
    """The arguments of `fmibridge sweep`."""
    sweep.add_argument("spec", type=Path, help="sweep spec (.toml)")
    sweep.add_argument(
        "--scheduler",
        default="local",
        help="'local' (default: one process per core), 'serial', or a "
        "dask.distributed scheduler address (tcp://host:8786)",
    )
    sweep.add_argument(
        "--workers", type=_count, help="processes of the local cluster (>= 1)"
    )
    sweep.add_argument(
        "--output-dir",
        type=Path,
        default=Path("."),
        help="the folder the spec's [output] paths are in, and may not leave "
        "(default: the working directory)",
    )
    sweep.add_argument("--out", help="summary CSV (default: the spec's)")
    sweep.add_argument("--trajectories", type=Path, help="folder for one file per run")
    sweep.add_argument("--format", choices=FORMATS, help="trajectory file format")
    sweep.add_argument(
        "--metric",
        action="append",
        default=[],
        help="a plugin metric column, package.module:function (repeatable); "
        "a spec file names only built-in metrics",
    )
    for flag, text in (
        ("--force", "replace existing output files"),
        ("--no-progress", "hide the progress bar"),
    ):
        sweep.add_argument(flag, action="store_true", help=text)
    sweep.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="stop each run after S seconds of wall time (status TIME_LIMIT; "
        "default: the spec's `timeout`, else none)",
    )
    sweep.add_argument(
        "--max-runs",
        type=_count,
        metavar="N",
        help="allow up to N runs (default: the spec's `max_runs`, else "
        f"{MAX_SWEEP_RUNS})",
    )
    sweep.set_defaults(func=cmd_sweep)
