"""The `fmibridge` command: run | info | build-fmus | validate | ...

`run` checks its output paths before it runs, writes its files before it
prints (so `| head` cannot lose them), and keeps what was simulated when an
error, Ctrl-C or SIGTERM cuts the run short: the samples so far go to
X.partial.csv (and X.partial.events.csv), never over a complete X.csv.
Exit codes: 0 success, 1 a run that stopped early, 2 an error, 130 Ctrl-C,
143 SIGTERM, 141 a closed pipe.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from .core.errors import (
    FmibridgeError,
    FmibridgeWarning,
    Terminated,
    exit_code,
    sigterm_raises,
)
from .core.outputs import check_output
from .core.result import Result, Status, events_path, recording
from .core.span import check_span, check_step
from .methods import METHODS, Method, method_named

METHOD_OPTIONS = ("h", "eps", "integrator", "locate")  # the run flags a method takes
DEFAULT_T_END = 3.0  # s: the built-in ball makes six bounces, well before its Zeno time
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of our output went away


def _method_from_args(args: argparse.Namespace, h: float | None = None) -> Method:
    """Build the method named by --method with the options the user gave
    (`h`, the model's default step, where --h is not given)."""
    options = {k: getattr(args, k, None) for k in METHOD_OPTIONS}
    if options["h"] is None:
        options["h"] = h
    method = method_named(
        args.method or "halving", {k: v for k, v in options.items() if v is not None}
    )
    if args.zeno == "complete":
        from .methods.completion import Completion

        method = Completion(method)
    return method


def _print_summary(result: Result, max_rows: int = 10) -> None:
    stats = result.stats
    print(
        f"{result.provenance['system']}: {result.status.value} "
        f"t = {result.t[-1]:.6g} s, {stats['n_events']} events, "
        f"{stats['n_steps']} steps ({stats['n_rejected']} rejected), "
        f"wall {float(result.provenance['wall_time_s']):.3g} s"
    )
    events = result.events_frame()
    if len(events):
        with_names = events.drop(columns=["simultaneous"])
        print(
            with_names.head(max_rows).to_string(
                index=False, float_format="{:.9g}".format
            )
        )
        if len(events) > max_rows:
            print(f"... {len(events) - max_rows} more events")


def partial_path(out: Path) -> Path:
    """Where a cut-short run's samples go: ball.csv -> ball.partial.csv."""
    return out.with_name(f"{out.stem}.partial{out.suffix}")


def _check_outputs(out: str | None, force: bool) -> Path | None:
    """Check every file `run --out` may write, before the run."""
    if out is None:
        return None
    path = check_output(out, force=force, what="--out")
    partial = partial_path(path)
    for also in (events_path(path), partial, events_path(partial)):
        check_output(also, force=force, what="--out")
    return path


def _write(result: Result, out: Path) -> str:
    """Write the samples and the event log; return what was written, in words."""
    result.to_csv(out)
    result.events_to_csv(events_path(out))
    return f"{out} and {events_path(out)}"


def _load(args: argparse.Namespace):
    """Return (system, method, t_end, adapter or None) for the model argument."""
    from .models.ball import bouncing_ball

    model = args.model
    if model is not None and model.suffix == ".toml":
        from .formats.adapters import load_adapter

        options = {k: getattr(args, k, None) for k in METHOD_OPTIONS}
        adapter = load_adapter(
            model,
            method=args.method,
            method_options=options,
            t_end=args.t_end,
            interface=args.interface,
            zeno=args.zeno,
        )
        return adapter.system, adapter.method, adapter.t_end, adapter
    if model is not None and model.suffix not in (".fmu", ".ssp"):
        raise FmibridgeError(
            f"{model}: expected an adapter file (.toml), an SSP (.ssp) or an FMU "
            f"(.fmu)."
        )
    if model is None:
        system = bouncing_ball()
    elif model.suffix == ".ssp":
        from .formats.ssp import ssp_system

        system = ssp_system(model, interface=args.interface)
    else:
        from .flows.fmu import fmu_system

        system = fmu_system(model, args.interface)
    try:
        method, t_end = _method_and_end(args, system)
    except BaseException:
        system.close()
        raise
    return system, method, t_end, None


def _method_and_end(args: argparse.Namespace, system) -> tuple[Method, float]:
    """The method and t_end of a run: the flags, else the model's default
    experiment, else DEFAULT_T_END; t_end and the step checked together."""
    experiment = system.experiment
    method = _method_from_args(args, experiment.step)
    t_end = args.t_end if args.t_end is not None else experiment.stop
    t_end = check_span(system.t0, DEFAULT_T_END if t_end is None else t_end, "--t-end")
    check_step(method.h, system.t0, t_end, method.max_steps, "--h")
    return method, t_end


def cmd_run(args: argparse.Namespace) -> int:
    """Run a model: an adapter file, an FMU, or the built-in bouncing ball."""
    out = _check_outputs(args.out, args.force)
    system, method, t_end, adapter = _load(args)
    progress = not args.no_progress
    with recording() as record:
        try:
            if adapter is not None:
                result = adapter.run(progress=progress)
            else:
                result = method.run(system, t_end, progress=progress)
        except (FmibridgeError, KeyboardInterrupt) as exc:
            provenance = {"system": system.name, "method": method.name}
            partial = record.result(_cut_short_status(exc), provenance)
            return _report_cut_short(exc, partial, out)
        finally:
            system.close()
    written = _write(result, out) if out is not None else None
    _print_summary(result)
    if written:
        print(f"wrote {written}")
    return 0 if result.status.is_success else 1


def _cut_short_status(exc: BaseException) -> Status:
    return Status.FAILED if isinstance(exc, FmibridgeError) else Status.INTERRUPTED


def _report_cut_short(exc: BaseException, partial: Result | None, out) -> int:
    """Say why the run stopped, and write its samples so far to X.partial.csv."""
    is_error = isinstance(exc, FmibridgeError)
    if is_error:
        print(f"fmibridge: error: {exc}", file=sys.stderr)
    why = "the run stopped" if is_error else _interrupted(exc)
    if partial is not None:
        why += f" at t = {partial.t[-1]:.6g} s"
        if out is not None:
            why += f"; wrote the samples so far to {_write(partial, partial_path(out))}"
    if partial is not None or not is_error:
        print(f"fmibridge: {why}.", file=sys.stderr)
    return 2 if is_error else exit_code(exc)


def _interrupted(exc: KeyboardInterrupt) -> str:
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


INFO_FLAGS = (  # capability flags `info` lists where an FMU sets them
    "canGetAndSetFMUstate",
    "canSerializeFMUstate",
    "needsCompletedIntegratorStep",
    "providesDirectionalDerivative",
    "providesDirectionalDerivatives",
    "providesAdjointDerivatives",
    "canHandleVariableCommunicationStepSize",
    "canInterpolateInputs",
    "hasEventMode",
    "mightReturnEarlyFromDoStep",
    "canReturnEarlyAfterIntermediateUpdate",
    "providesIntermediateUpdate",
    "fixedInternalStepSize",
    "maxOutputDerivativeOrder",
)
INFO_START_WIDTH = 24  # characters of a start value shown (arrays are long)


def cmd_info(args: argparse.Namespace) -> int:
    """Describe an FMU: experiment, interfaces, capabilities and variables."""
    from .flows.fmi import FmuArchive

    archive = FmuArchive(args.fmu)
    d = archive.description
    print(f"{args.fmu}: {d.modelName}, FMI {archive.fmi_version}")
    if d.description:
        print(f"  {d.description}")
    e = archive.experiment
    values = [("start", e.start), ("stop", e.stop), ("step", e.step)]
    values.append(("tolerance", e.tolerance))
    print("  DefaultExperiment: " + ", ".join(f"{k} {_or_dash(v)}" for k, v in values))
    for interface in archive.interfaces:
        part = archive.part(interface)
        flags = [_flag(f, getattr(part, f, None)) for f in INFO_FLAGS]
        flags = [f for f in flags if f]
        note = " (fmibridge cannot run it)" if interface == "ScheduledExecution" else ""
        print(f"  {interface}: {', '.join(flags) or 'no state get/set'}{note}")
    print(
        f"  continuous states: {d.numberOfContinuousStates}, "
        f"event indicators: {d.numberOfEventIndicators}"
    )
    header = ("name", "causality", "variability", "type", "start", "unit", "dims")
    rows = [header] + [
        (
            v.name,
            v.causality,
            v.variability,
            v.type,
            _start(v.start_text),
            v.unit or "",
            f"[{','.join(map(str, v.shape))}]" if v.shape else "",
        )
        for v in archive.variables.values()
    ]
    widths = [max(len(row[k]) for row in rows) for k in range(len(header))]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=True)]
        print("  " + " ".join(cells).rstrip())
    return 0


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _flag(name: str, value: object) -> str:
    if value is None or value is False or value == 0:
        return ""
    return name if value is True else f"{name}={value}"


def _start(text: str | None) -> str:
    if text is None:
        return ""
    text = " ".join(text.split())
    return (
        text if len(text) <= INFO_START_WIDTH else text[: INFO_START_WIDTH - 3] + "..."
    )


def cmd_build_fmus(args: argparse.Namespace) -> int:
    """Compile the models in fmus/ into FMUs."""
    from .build import build_fmus, build_systems

    built = build_fmus(args.source, force=args.force)
    built.update(build_systems(args.source, next(iter(built.values())).parent))
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
    run.add_argument(
        "model",
        nargs="?",
        type=Path,
        help="adapter file (.toml), SSP (.ssp) or FMU; default: the built-in "
        "bouncing ball",
    )
    run.add_argument(
        "--t-end",
        type=float,
        help=f"final time, s (default: the adapter's, else the FMU's "
        f"DefaultExperiment stopTime, else {DEFAULT_T_END})",
    )
    run.add_argument(
        "--interface",
        choices=["me", "cs"],
        help="FMU interface type (default: the adapter's, else Model Exchange)",
    )
    run.add_argument("--method", choices=sorted(METHODS), help="master algorithm")
    run.add_argument(
        "--h",
        type=float,
        help="nominal step, s (default: the FMU's DefaultExperiment stepSize)",
    )
    run.add_argument("--integrator", choices=["euler", "midpoint", "rk4"])
    run.add_argument("--eps", type=float, help="strip width of --method relaxation")
    run.add_argument(
        "--locate",
        choices=["halving", "illinois"],
        help="how --method halving narrows a crossed step (default halving)",
    )
    run.add_argument(
        "--zeno",
        choices=["off", "complete"],
        help="complete Zeno executions (Or-Ames): truncate, slide, lift off",
    )
    run.add_argument(
        "--out", help="write the samples to this CSV (and X.events.csv beside it)"
    )
    run.add_argument(
        "--force", action="store_true", help="replace existing --out files"
    )
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    run.set_defaults(func=cmd_run)

    info = sub.add_parser(
        "info",
        help="list an FMU's default experiment, interfaces, capabilities and "
        "variables (type, start, unit, dimensions)",
    )
    info.add_argument("fmu", type=Path)
    info.set_defaults(func=cmd_info)

    build = sub.add_parser("build-fmus", help="compile the models in fmus/ with gcc")
    build.add_argument("--source", type=Path, default=Path("fmus"), help="fmus/ folder")
    build.add_argument("--force", action="store_true", help="rebuild everything")
    build.set_defaults(func=cmd_build_fmus)

    from .validation.cli import add_validate_parser

    add_validate_parser(sub)

    from .sweep.cli import add_parser as add_sweep_parser

    add_sweep_parser(sub)

    from .benchmarks.cli import add_bench_parser

    add_bench_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fmibridge` command; errors are one line, exit code 2."""
    args = _parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    warnings.simplefilter("default", FmibridgeWarning)
    warnings.formatwarning = lambda msg, cat, *a, **k: f"fmibridge: warning: {msg}\n"
    try:
        with sigterm_raises():
            return func(args)
    except (FmibridgeError, FileNotFoundError) as exc:
        print(f"fmibridge: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM outside a run
        print(f"fmibridge: {_interrupted(exc)}.", file=sys.stderr)
        return exit_code(exc)
    except BrokenPipeError:  # output piped into `head`: files are already written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
