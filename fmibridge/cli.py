"""The `fmibridge` command: run | build-fmus (and more as they land)."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from .errors import FmibridgeError, FmibridgeWarning
from .methods import METHODS, Method
from .result import Result

DEFAULT_T_END = 3.0  # s: the built-in ball makes six bounces, well before its Zeno time


def _method_from_args(args: argparse.Namespace, defaults: dict | None = None) -> Method:
    """Build the method named by --method with the options the user gave."""
    options = dict(defaults or {})
    name = args.method or options.pop("method", "halving")
    options.pop("method", None)
    if name not in METHODS:
        raise FmibridgeError(f"--method must be one of {sorted(METHODS)}, got {name!r}.")
    for key in ("h", "eps", "integrator"):
        value = getattr(args, key, None)
        if value is not None:
            options[key] = value
    cls = METHODS[name]
    known = set(cls.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise FmibridgeError(
            f"Method {name!r} takes no option(s) {unknown}; its options are {sorted(known)}."
        )
    return cls(**options)


def _print_summary(result: Result, max_rows: int = 10) -> None:
    stats = result.stats
    print(
        f"{result.provenance['system']}: {result.status.value} "
        f"t = {result.t[-1]:.6g} s, {stats['n_events']} events, {stats['n_steps']} steps "
        f"({stats['n_rejected']} rejected), wall {float(result.provenance['wall_time_s']):.3g} s"
    )
    events = result.events_frame()
    if len(events):
        with_names = events.drop(columns=["simultaneous"])
        print(with_names.head(max_rows).to_string(index=False, float_format="{:.9g}".format))
        if len(events) > max_rows:
            print(f"... {len(events) - max_rows} more events")


def _write(result: Result, out: Path | None) -> None:
    if out is None:
        return
    result.to_csv(out)
    events_path = out.with_name(out.stem + ".events.csv")
    result.events_frame().to_csv(events_path, index=False)
    print(f"wrote {out} and {events_path}")


def cmd_run(args: argparse.Namespace) -> int:
    """Run a model: the built-in bouncing ball when no model is given."""
    from .models import bouncing_ball

    if args.model is not None:
        raise FmibridgeError(f"{args.model}: running FMUs and adapter files is not available yet.")
    system = bouncing_ball()
    method = _method_from_args(args)
    result = method.run(system, args.t_end, progress=not args.no_progress)
    _print_summary(result)
    _write(result, args.out)
    return 0 if result.status.is_success else 1


def cmd_build_fmus(args: argparse.Namespace) -> int:
    """Compile the models in fmus/ into FMUs."""
    from .build import build_fmus

    built = build_fmus(args.source, force=args.force)
    for name, path in sorted(built.items()):
        print(f"{name}: {path}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fmibridge",
        description="Drive FMUs and native models of mechanical systems with impacts.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="simulate a model and print its event table")
    run.add_argument("model", nargs="?", type=Path,
                     help="adapter file (.toml) or FMU; default: the built-in bouncing ball")
    run.add_argument("--t-end", type=float, default=DEFAULT_T_END, help="final time, s")
    run.add_argument("--method", choices=sorted(METHODS), help="master algorithm")
    run.add_argument("--h", type=float, help="nominal step, s")
    run.add_argument("--integrator", choices=["euler", "midpoint", "rk4"])
    run.add_argument("--eps", type=float, help="strip width of --method relaxation")
    run.add_argument("--out", type=Path, help="write the samples to this CSV")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(func=cmd_run)

    build = sub.add_parser("build-fmus", help="compile the models in fmus/ with gcc")
    build.add_argument("--source", type=Path, default=Path("fmus"), help="fmus/ folder")
    build.add_argument("--force", action="store_true", help="rebuild everything")
    build.set_defaults(func=cmd_build_fmus)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fmibridge` command; errors are one line, exit code 2."""
    args = _parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    warnings.simplefilter("default", FmibridgeWarning)
    warnings.formatwarning = lambda msg, cat, *a, **k: f"fmibridge: warning: {msg}\n"
    try:
        return func(args)
    except (FmibridgeError, FileNotFoundError) as exc:
        print(f"fmibridge: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
