"""``python -m benchmarks``: the benchmark suite from a clone of the repository."""

from __future__ import annotations

import argparse
import sys

from fmibridge.core.errors import FmibridgeError

from .cli import add_arguments


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the chosen sections, return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time fmibridge against its peers, side by side in one run.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except FmibridgeError as exc:
        print(f"python -m benchmarks: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
