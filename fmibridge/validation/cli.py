"""`fmibridge validate`: the convergence study of Burden et al., Sec. V-B."""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from ..core.outputs import check_output_folder, write_atomically
from .study import GRIDS, plot_study, run_study

DEFAULT_OUT = Path("validation_out")
SIZES = {  # the grids of `study.GRIDS`, as flags
    "quick": "small grid, under a minute (the default)",
    "full": "the paper's grid (long: many minutes)",
    "tiny": "smoke test, a few seconds",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of `fmibridge validate`."""
    size = parser.add_mutually_exclusive_group()
    for name, text in SIZES.items():
        size.add_argument(
            f"--{name}", dest="grid", action="store_const", const=name, help=text
        )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"folder for the CSV and plots (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--scheduler",
        help="run the cases on Dask: 'local' (one process per core; "
        "the default for --full), 'serial', or a "
        "dask.distributed scheduler address",
    )
    for flag, text in (
        ("--force", "write into an --out folder that has files in it"),
        ("--no-progress", "hide the progress bar"),
        (
            "--cosim",
            "instead: the co-simulation master's orders (Jacobi, Gauss-Seidel, "
            "inputs held or extrapolated) on the plant with a stop and its controller",
        ),
    ):
        parser.add_argument(flag, action="store_true", help=text)
    parser.set_defaults(func=cmd_validate, grid="quick")


def cmd_validate(args: argparse.Namespace) -> int:
    """Run the study grid, print the table, write validation.csv and PNG plots."""
    out = check_output_folder(args.out, force=args.force, what="--out")
    out.mkdir(exist_ok=True)
    if args.cosim:
        return _cosim_orders(args.grid, out)
    scheduler = args.scheduler or ("local" if args.grid == "full" else None)
    frame = run_study(
        GRIDS[args.grid].cases(), progress=not args.no_progress, scheduler=scheduler
    )
    print(frame.to_string(index=False, float_format="{:.3g}".format))
    csv = write_atomically(out / "validation.csv", partial(frame.to_csv, index=False))
    plots = plot_study(frame, out)
    print(f"wrote {csv} and {', '.join(str(p) for p in plots)}")
    failed = frame[frame["error"].notna()] if "error" in frame else frame.iloc[:0]
    for row in failed.itertuples():  # a study with a failed case is not a result
        print(
            f"fmibridge validate: {row.example} {row.method} {row.integrator} "
            f"h={row.h:g} eps={row.eps:g} failed: {row.error}",
            file=sys.stderr,
        )
    return 1 if len(failed) else 0


def _cosim_orders(grid: str, out: Path) -> int:
    """Print and write the co-simulation order study (`cosim_orders`)."""
    from .cosim_orders import STEPS, communication_orders

    errors, orders = communication_orders(STEPS[grid])
    print(errors.to_string(index=False, float_format="{:.3g}".format))
    print(orders.to_string(index=False, float_format="{:.3g}".format))
    table = errors.merge(orders, on=["scheme", "inputs"])
    csv = write_atomically(out / "cosim_orders.csv", partial(table.to_csv, index=False))
    print(f"wrote {csv}")
    return 0
