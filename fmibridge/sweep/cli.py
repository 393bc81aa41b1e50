"""`fmibridge sweep SPEC.toml`: the command line of sweeps."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .batch import ERROR, FORMATS, run_sweep
from .spec import load_sweep


def cmd_sweep(args) -> int:
    """`fmibridge sweep SPEC.toml`: run a sweep and write its summary CSV.

    Exit code 0 if every run returned a Result, 1 if some raised, 130 on Ctrl-C
    (after writing the summary of the finished runs).
    """
    spec = load_sweep(args.spec)
    out = args.out or spec.summary
    trajectories = args.trajectories or spec.trajectories or False
    n_runs = len(spec.sweep.points())
    print(f"{args.spec}: {n_runs} runs on scheduler {args.scheduler!r}")
    result = run_sweep(
        spec.sweep,
        scheduler=args.scheduler,
        workers=args.workers,
        trajectories=trajectories,
        file_format=args.format or spec.file_format,
        progress=not args.no_progress,
    )
    summary = result.summary
    summary.to_csv(out)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(
            summary.drop(columns=["error"])
            .head(20)
            .to_string(float_format="{:.6g}".format)
        )
    failed = summary[summary["status"] == ERROR]
    for run, message in failed["error"].items():
        print(f"run {run} failed: {message}")
    state = "interrupted; " if result.is_interrupted else ""
    print(
        f"{state}{len(summary)}/{n_runs} runs finished ({len(failed)} failed); "
        f"wrote {out}" + (f" and {trajectories}/" if trajectories else "")
    )
    if result.is_interrupted:
        return 130
    return 1 if len(failed) else 0


def add_parser(sub) -> None:
    """Register `fmibridge sweep` on the CLI's subparsers."""
    sweep = sub.add_parser("sweep", help="run a parameter sweep (grid or list) on Dask")
    sweep.add_argument("spec", type=Path, help="sweep spec (.toml)")
    sweep.add_argument(
        "--scheduler",
        default="local",
        help="'local' (default: one process per core), 'serial', or a "
        "dask.distributed scheduler address (tcp://host:8786)",
    )
    sweep.add_argument("--workers", type=int, help="processes of the local cluster")
    sweep.add_argument("--out", type=Path, help="summary CSV (default: from the spec)")
    sweep.add_argument("--trajectories", type=Path, help="folder for one file per run")
    sweep.add_argument("--format", choices=FORMATS, help="trajectory file format")
    sweep.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    sweep.set_defaults(func=cmd_sweep)
