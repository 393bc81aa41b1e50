"""`python -m benchmarks`: run the benchmark suite, print the table, write it as CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fmibridge.core.outputs import check_output, write_atomically

from .suite import SECTIONS, BenchOptions, run_bench


def cmd_bench(args: argparse.Namespace) -> int:
    """Run the benchmark suite against its peers and print median times and ratios."""
    if args.repeats < 1:
        from fmibridge.core.errors import FmibridgeError

        raise FmibridgeError(f"`--repeats` must be >= 1, got {args.repeats}.")
    if args.out is not None:  # before the run, as `run` and `sweep` check theirs
        check_output(args.out, force=args.force, what="--out")
    options = (
        BenchOptions.quick_options(args.repeats)
        if args.quick
        else BenchOptions(repeats=args.repeats)
    )
    sections = tuple(args.only or SECTIONS)
    frame = run_bench(
        options,
        sections,
        progress=lambda name: print(f"bench: {name} ...", file=sys.stderr),
    )
    print(format_table(frame))
    if args.out is not None:
        write_atomically(args.out, lambda p: frame.to_csv(p, index=False))
        print(f"wrote {args.out}")
    return 0


def format_table(frame) -> str:
    """Return the table as Markdown-like text with 3 significant digits."""
    shown = frame.drop(columns=["fmibridge_settings", "peer_settings", "note"])
    lines = [shown.to_string(index=False, float_format="{:.3g}".format, na_rep="-")]
    for _, row in frame.iterrows():
        parts = [
            p
            for p in (
                row["fmibridge_settings"] and f"fmibridge: {row['fmibridge_settings']}",
                row["peer_settings"] and f"{row['peer']}: {row['peer_settings']}",
                row["note"],
            )
            if p
        ]
        lines.append(f"  {row['case']}: " + " | ".join(parts))
    return "\n".join(lines)


def add_arguments(bench: argparse.ArgumentParser) -> None:
    """The arguments of `python -m benchmarks`."""
    bench.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="repetitions of each timed run; the median is reported (3)",
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="loose targets and small budgets: a few seconds",
    )
    bench.add_argument(
        "--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections"
    )
    bench.add_argument("--out", type=Path, help="write the table to this CSV")
    bench.add_argument(
        "--force", action="store_true", help="replace an existing --out file"
    )
    bench.set_defaults(func=cmd_bench)
