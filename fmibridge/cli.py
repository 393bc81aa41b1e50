"""The `fmibridge` command: run | info | examples | validate | sweep.

`run` calls `fmibridge.simulate` in a supervised child process, so a crashing
or hanging FMU ends that run, not this process. A run cut short keeps its
samples in X.partial.csv, never over a complete X.csv. Exit codes: 0 success,
1 a run stopped early, 2 an error, 130 Ctrl-C, 143 SIGTERM, 141 a closed pipe.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .core import supervision
from .core.errors import (
    FmibridgeError,
    FmibridgeWarning,
    Terminated,
    did_you_mean,
    exit_code,
    sigterm_raises,
)
from .core.limits import TIMEOUT_GRACE_S
from .core.outputs import check_output, claimed
from .core.recorder import recording
from .core.records import Status
from .core.result import Result, events_path
from .core.system import EXPERIMENT_VALUES
from .core.time_limit import check_timeout
from .methods import METHODS
from .methods.halving import LOCATE

# a method's run flags
METHOD_OPTIONS = ("eps", "integrator", "locate", "tol", "atol", "error_warning")
DEFAULT_T_END = 3.0  # s: the built-in ball makes six bounces, well before its Zeno time
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of our output went away
# commands whose modules load only when they run (validate imports scipy.optimize,
# sweep pandas and dask): name -> (help, module of `add_arguments`)
LAZY_COMMANDS = {
    "validate": (
        "relaxation vs PS on Table I of Burden et al.: rho-hat table and plots",
        ".validation.cli",
    ),
    "sweep": ("run a parameter sweep (grid or list) on Dask", ".sweep.cli"),
}
# commands that left the package: name -> where they are now
MOVED_COMMANDS = {
    "bench": "the benchmark suite is a development tool beside the package: run "
    "`python -m benchmarks` in a clone of the repository",
    "build-fmus": "the FMU builder is part of the example FMUs' sources: run "
    "`python fmus/build.py` in a clone of the repository, or "
    "`fmibridge examples DIR` to build the FMUs into DIR",
}
# simulate's keywords -> `run`'s flags (dest: the flag's name), named in messages
KEYWORD_FLAGS = {
    k: "--" + k.replace("_", "-")
    for k in "start_time stop_time step_size start_values parameters output_interval "
    "output method integrator atol error_warning zeno zeno_eps timeout".split()
}
KEYWORD_FLAGS |= {"fmi_type": "--interface", "relative_tolerance": "--rtol"}
INTERFACE_NAMES = {"modelexchange": "me", "cosimulation": "cs"}  # --interface, any case
# to X.partial.csv: the runs cut short by the clock, a signal, an error, or an
# explicit integrator on a stiff model (the run to its end needs another one)
CUT_SHORT = (Status.TIME_LIMIT, Status.INTERRUPTED, Status.FAILED, Status.STIFF)


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
        shown = events.drop(columns=["simultaneous"]).head(max_rows)
        print(shown.to_string(index=False, float_format="{:.9g}".format))
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
    result.to_csv(out, events=events_path(out))  # the two as a unit
    return f"{out} and {events_path(out)}"


def _keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of `simulate` that the flags given set (--stop-time: stop_time)."""
    keywords = {
        k: getattr(args, flag[2:].replace("-", "_"))
        for k, flag in KEYWORD_FLAGS.items()
        if k not in METHOD_OPTIONS
    }
    options = {k: getattr(args, k) for k in METHOD_OPTIONS}
    keywords["method_options"] = {k: v for k, v in options.items() if v is not None}
    keywords["progress"] = not args.no_progress
    if args.model is None and args.stop_time is None:
        keywords["stop_time"] = DEFAULT_T_END
    return {k: v for k, v in keywords.items() if v is not None and v != {}}


def run_model(model: Path | None, keywords: dict[str, Any]) -> Result:
    """`simulate` the model (None: the built-in ball), in `run`'s supervised process."""
    from .simulation import simulate

    if model is not None:
        return simulate(model, **keywords)
    from .models.ball import bouncing_ball

    keywords = dict(keywords)
    parameters = keywords.pop("parameters", {})
    known = list(inspect.signature(bouncing_ball).parameters)
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise FmibridgeError(
            f"--parameters: the built-in ball has no parameter(s) {unknown}; its "
            f"parameters are {known}."
        )
    return simulate(bouncing_ball(**parameters), **keywords)


def cmd_run(args: argparse.Namespace) -> int:
    """Run a model through `simulate` in the supervised process."""
    out = _check_outputs(args.out, args.force)
    check_timeout(args.timeout, "--timeout")
    what = str(args.model or "the built-in ball")
    call = {"model": args.model, "keywords": _keywords(args)}
    with claimed(out, force=args.force, what="--out"), recording() as record:
        try:
            result = supervision.shared().call(
                run_model, call, timeout=args.timeout, grace=TIMEOUT_GRACE_S, what=what
            )
        except (FmibridgeError, KeyboardInterrupt) as exc:
            return _report_cut_short(exc, record.result, what, out)
        cut_short = result.status in CUT_SHORT
        target = partial_path(out) if out is not None and cut_short else out
        written = _write(result, target) if target is not None else None
    _print_summary(result)
    if written:
        print(f"wrote {written}")
    return 0 if result.status.is_success else 1


def _report_cut_short(
    exc: BaseException, recorded: Callable, what: str, out: Path | None
) -> int:
    """Say why the run stopped; write its samples so far to X.partial.csv."""
    is_error = isinstance(exc, FmibridgeError)
    is_late = isinstance(exc, supervision.TimeLimitExceeded)
    status = Status.FAILED if is_error else Status.INTERRUPTED
    partial = recorded(Status.TIME_LIMIT if is_late else status, {"system": what})
    if is_error:  # simulate's keywords named as the flags of `run`
        message = str(exc)
        for keyword, flag in KEYWORD_FLAGS.items():
            message = message.replace(f"`{keyword}`", f"`{flag}`")
        print(f"fmibridge: {'' if is_late else 'error: '}{message}", file=sys.stderr)
    why = "the run stopped" if is_error else _interrupted(exc)
    if partial is not None:
        why += f" at t = {partial.t[-1]:.6g} s"
        if out is not None:
            why += f"; wrote the samples so far to {_write(partial, partial_path(out))}"
    if partial is not None or not is_error:
        print(f"fmibridge: {why}.", file=sys.stderr)
    if is_late:
        return 1
    return 2 if is_error else exit_code(exc)


def _interrupted(exc: BaseException) -> str:
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


# capability flags `info` lists where an FMU sets them
INFO_FLAGS = tuple(
    "canGetAndSetFMUstate canSerializeFMUstate needsCompletedIntegratorStep "
    "providesDirectionalDerivative providesDirectionalDerivatives "
    "providesAdjointDerivatives canHandleVariableCommunicationStepSize "
    "canInterpolateInputs hasEventMode mightReturnEarlyFromDoStep "
    "canReturnEarlyAfterIntermediateUpdate providesIntermediateUpdate "
    "fixedInternalStepSize maxOutputDerivativeOrder".split()
)
OFF = (None, False, 0)  # a flag's values that `info` leaves out
INFO_START_WIDTH = 24  # characters of a start value shown (arrays are long)


def cmd_info(args: argparse.Namespace) -> int:
    """Describe an FMU (experiment, interfaces, flags, variables), SSP or adapter."""
    from .flows.fmi import FmuArchive

    describe = {".ssp": _info_ssp, ".toml": _info_adapter}.get(args.fmu.suffix.lower())
    if describe is not None:
        return describe(args.fmu)
    archive = FmuArchive(args.fmu)
    d = archive.description
    print(f"{args.fmu}: {d.modelName}, FMI {archive.declared_version}")
    if d.description:
        print(f"  {d.description}")
    _print_experiment({k: getattr(archive.experiment, k) for k in EXPERIMENT_VALUES})
    _print_interfaces(archive, "  ")
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


def _print_interfaces(archive, indent: str) -> None:
    """One line per interface of an FMU: its capability flags."""
    for interface in archive.interfaces:
        part = archive.part(interface)
        values = [(f, getattr(part, f, None)) for f in INFO_FLAGS]
        flags = [f if v is True else f"{f}={v}" for f, v in values if v not in OFF]
        note = " (fmibridge cannot run it)" if interface == "ScheduledExecution" else ""
        print(f"{indent}{interface}: {', '.join(flags) or 'no state get/set'}{note}")


def _info_ssp(path: Path) -> int:
    """Describe an SSP: systems, components, their FMUs' interfaces, connections."""
    from .formats.ssp import ssp_fmus

    with ssp_fmus(path) as (structure, fmus):
        print(f"{path}: SSP {structure.version}, system {structure.name or '-'}")
        _print_experiment({"start": structure.start_time, "stop": structure.stop_time})
        for system in structure.systems:
            members = [c for c in structure.components if c.system == system]
            print(f"  system {system}: {len(members)} component(s)")
            for c in members:
                archive = fmus[c.name]
                names = {"me": "ModelExchange", "cs": "CoSimulation"}
                implementation = names.get(c.implementation or "", "any")
                print(
                    f"    {c.name}: {c.source} (FMI {archive.declared_version}, "
                    f"implementation {implementation})"
                )
                _print_interfaces(archive, "      ")
        print(f"  connections: {len(structure.connections)}")
        for source, target in structure.connections:
            print(f"    {source} -> {target}")
    return 0


def _info_adapter(path: Path) -> int:
    """Describe an adapter file table by table, with the FMUs or SSP it names."""
    from .core.errors import AdapterError
    from .formats.toml_file import read_toml

    spec = read_toml(path, "an adapter file", AdapterError)
    print(f"{path}: adapter {spec.get('name', path.stem)}")
    if "description" in spec:
        print(f"  {spec['description']}")
    for key, value in spec.items():
        if key in ("name", "description"):
            continue
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            print(f"  {key} ({len(value)}):")
            for item in value:
                print(f"    {_inline(item)}")
                _print_fmu(path, item.get("fmu"), "      ")
        else:
            print(f"  {key}: {_inline(value)}")
            _print_fmu(path, value if key in ("fmu", "ssp") else None, "    ")
    return 0


def _inline(value: object, nested: bool = False) -> str:
    """A TOML value on one line (`from`/`to` pairs as an arrow)."""
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v, True) for v in value) + "]"
    if not isinstance(value, dict):
        return str(value)
    if set(value) == {"from", "to"}:
        return f"{value['from']} -> {value['to']}"
    pairs = ", ".join(f"{k} = {_inline(v, True)}" for k, v in value.items())
    return f"{{{pairs}}}" if nested else pairs


def _print_fmu(adapter: Path, fmu: object, indent: str) -> None:
    """The FMU an adapter names (interfaces, states, event indicators), or its SSP."""
    from .flows.fmi import FmuArchive

    if not isinstance(fmu, str):
        return
    found = (adapter.parent / fmu).resolve()
    kind = "SSP" if found.suffix.lower() == ".ssp" else "FMU"
    if not found.is_file():
        print(f"{indent}{found}: missing; `python fmus/build.py` (in a clone) or "
              f"`fmibridge examples DIR` builds the project's {kind}s")  # fmt: skip
        return
    if kind == "SSP":
        _info_ssp(found)
        return
    archive = FmuArchive(found)
    d = archive.description
    print(
        f"{indent}{found}: {d.modelName}, FMI {archive.fmi_version}, "
        f"{' + '.join(archive.interfaces)}; states "
        f"{', '.join(archive.state_names) or '-'}; {d.numberOfEventIndicators} "
        f"event indicator(s)"
    )


def _print_experiment(values: dict[str, float | None]) -> None:
    """The DefaultExperiment line of `info` ('-': not given)."""
    shown = (f"{k} {'-' if v is None else f'{v:g}'}" for k, v in values.items())
    print("  DefaultExperiment: " + ", ".join(shown))


def _start(text: str | None) -> str:
    text = " ".join((text or "").split())
    short = len(text) <= INFO_START_WIDTH
    return text if short else text[: INFO_START_WIDTH - 3] + "..."


def cmd_examples(args: argparse.Namespace) -> int:
    """Write the example adapter files and build their FMUs into a folder."""
    from .examples import write_examples

    written = write_examples(args.folder, force=args.force)
    print(f"wrote {len(written)} files into {args.folder}; from there, for example:")
    print("  fmibridge run adapters/bouncing_ball.toml --stop-time 3")
    return 0


class _AsDict(argparse.Action):
    """Collect NAME=VALUE pairs (a number, or a,b,c for an array) from each use."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        merged = dict(getattr(namespace, self.dest) or {})
        for text in values:
            name, sep, value = text.partition("=")
            try:
                numbers = [float(v) for v in value.split(",")]
            except ValueError:
                numbers = []
            if not (sep and name and numbers):
                parser.error(
                    f"argument {option_string}: {option_string} takes NAME=VALUE "
                    f"(a number, or a,b,c for an array), got {text!r}"
                )
            if name in merged:
                parser.error(
                    f"argument {option_string}: {name!r} is given twice (={value} "
                    f"after ={merged[name]}); give each name once"
                )
            merged[name] = numbers[0] if len(numbers) == 1 else numbers
        setattr(namespace, self.dest, merged)


class _Deprecated(argparse.Action):
    """A hidden old spelling of a flag: works, and says which flag replaced it."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(
            f"fmibridge: warning: {option_string} is deprecated; use {self.metavar}.",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def _add_run_parser(sub) -> None:
    """Register `fmibridge run` (alias `simulate`) on the CLI's subparsers."""
    run = sub.add_parser(
        "run",
        aliases=["simulate"],
        help="simulate a model and print its event table",
        description="Simulate a model (an FMU, an adapter file, or the built-in "
        "bouncing ball) and print its event table. Defaults come from the FMU's "
        "DefaultExperiment; a flag the chosen method would ignore is refused.",
    )
    run.add_argument(
        "model",
        nargs="?",
        type=Path,
        help="adapter file (.toml), SSP (.ssp) or FMU; default: the built-in "
        "bouncing ball",
    )
    for flags, what in (
        (
            ("--start-time",),
            "start time, s (default: the FMU's DefaultExperiment startTime, else "
            "0; an adapter file or an SSP starts at its FMUs' own)",
        ),
        (
            ("--stop-time", "--t-end"),
            f"final time, s (default: the adapter's, else the FMU's "
            f"DefaultExperiment stopTime, else {DEFAULT_T_END})",
        ),
    ):
        run.add_argument(*flags, type=float, metavar="T", help=what)
    for flag, what in (
        ("--start-values", "start values of FMU variables (the ball's: h, v)"),
        ("--parameters", "parameters of the FMU or adapter (the ball's: h0, v0, g, e)"),
    ):
        run.add_argument(
            flag, nargs="+", action=_AsDict, metavar="NAME=VALUE", help=what
        )
    run.add_argument(
        "--interface",
        type=lambda text: INTERFACE_NAMES.get(text.lower(), text.lower()),
        choices=["me", "cs"],
        help="FMU interface type, in any case; FMPy's ModelExchange and "
        "CoSimulation too (default: the adapter's, else Model Exchange)",
    )
    _add_method_flags(run)
    _add_output_flags(run)
    run.set_defaults(func=cmd_run)


def _add_method_flags(run) -> None:
    """The flags that choose the method and its parameters."""
    for flag, choices, what in (
        ("--method", sorted(METHODS), "master algorithm"),
        (
            "--integrator",
            ["euler", "midpoint", "rk4", "dopri5", "cvode", "bdf"],
            "integrator of the master (not for --method unilateral or a "
            "Co-Simulation FMU): a Runge-Kutta scheme; dopri5 chooses its steps "
            "under a tolerance (--rtol, else the FMU's DefaultExperiment tolerance, "
            "else 1e-5), and so does cvode (or bdf: the same), CVODE's implicit BDF "
            "for stiff models",
        ),
        (
            "--locate",
            list(LOCATE),
            "how --method halving narrows a crossed step (default halving); "
            "approach: no step crosses, each stops short of the guard (Co-Simulation)",
        ),
        (
            "--zeno",
            ["off", "complete"],
            "complete Zeno executions (Or-Ames): truncate, slide, lift off",
        ),
    ):
        run.add_argument(flag, type=str.lower, choices=choices, help=what)
    for flag, what in (
        (
            "--step-size",
            "the method's step h, s (default: the FMU's DefaultExperiment stepSize)",
        ),
        (
            "--rtol",
            "relative tolerance: adaptive steps (dopri5, cvode) between events for "
            "--method halving or relaxation, --step-size the first; the rtol of "
            "--method unilateral; a Co-Simulation FMU's own solver",
        ),
        ("--atol", "absolute tolerance of --rtol's steps (default rtol)"),
        (
            "--error-warning",
            "warn when a fixed step's local error estimate exceeds this fraction "
            "of its state's scale (default 1e-4)",
        ),
        ("--eps", "strip width of --method relaxation"),
        ("--tol", "error tolerance per state of --method unilateral"),
        (
            "--zeno-eps",
            "truncation budget of --zeno complete (eps_t, eps_q, eps_v; 1e-3)",
        ),
    ):
        run.add_argument(flag, type=float, help=what)
    run.add_argument(
        "--h", dest="step_size", type=float, action=_Deprecated, metavar="--step-size",
        help=argparse.SUPPRESS,
    )  # fmt: skip


def _output_interval(text: str) -> float | str:
    """--output-interval: a number of seconds, or 'steps' (every step)."""
    if text == "steps":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds or 'steps', got {text!r}"
        ) from None


def _add_output_flags(run) -> None:
    """The flags that choose what is kept and where it goes."""
    run.add_argument(
        "--output-interval",
        type=_output_interval,
        metavar="S|steps",
        help="keep samples every S s, and each event's two rows (default, as "
        "FMPy: the step doubled until the run has at most 1000 intervals); "
        "'steps' keeps every step",
    )
    run.add_argument(
        "--output",
        nargs="+",
        metavar="NAME",
        help="FMU variables to record besides the states (default: every output)",
    )
    run.add_argument(
        "--out", help="write the samples to this CSV (and X.events.csv beside it)"
    )
    for flag, what in (
        ("--force", "replace existing --out files"),
        ("--no-progress", "hide the progress bar (shown only on a terminal)"),
    ):
        run.add_argument(flag, action="store_true", help=what)
    run.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="stop the run after S seconds of wall time, keeping its samples in "
        f"X.partial.csv (a run hung in an FMU's code is killed {TIMEOUT_GRACE_S:g} "
        "s later)",
    )


def _unrecognized(parser: argparse.ArgumentParser, extras: Sequence[str]) -> NoReturn:
    """Exit with argparse's error naming each argument not understood, with hints."""
    flags = [
        f
        for action in parser._actions
        if action.help is not argparse.SUPPRESS
        for f in action.option_strings
        if f.startswith("--")
    ]
    named = []
    for extra in extras:
        flag = extra.partition("=")[0]
        spelled = flag.replace("_", "-").lower()
        if spelled in flags:
            extra += f" (did you mean {spelled}?)"
        elif flag.startswith("-"):
            extra += did_you_mean(flag, flags, str)
        named.append(extra)
    parser.error(f"unrecognized arguments: {', '.join(named)}")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `fmibridge` parser; of LAZY_COMMANDS only `command`'s module loads."""
    parser = argparse.ArgumentParser(
        prog="fmibridge",
        description="Drive FMUs and native models of mechanical systems with impacts.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"fmibridge {__version__}",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_run_parser(sub)

    info = sub.add_parser(
        "info",
        help="list an FMU's default experiment, interfaces, capabilities and "
        "variables (type, start, unit, dimensions); an SSP's systems, "
        "components, their FMUs' interfaces and capabilities, and connections; "
        "or an adapter file's FMUs or SSP, edges, constraint and method",
    )
    info.add_argument(
        "fmu", type=Path, help="the FMU (.fmu), SSP (.ssp) or adapter file (.toml)"
    )
    info.set_defaults(func=cmd_info)

    examples = sub.add_parser(
        "examples",
        help="write the README's adapter files into a folder and build the FMUs "
        "they run there (gcc), as the repository lays them out",
    )
    examples.add_argument("folder", type=Path, help="a new or empty folder")
    examples.add_argument(
        "--force", action="store_true", help="write into a folder with files"
    )
    examples.set_defaults(func=cmd_examples)

    for name, (help_, module) in LAZY_COMMANDS.items():
        parser_ = sub.add_parser(name, help=help_)
        if command in (None, name):
            importlib.import_module(module, __package__).add_arguments(parser_)
    for command_parser in sub.choices.values():  # named in its errors
        command_parser.set_defaults(parser=command_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fmibridge` command; errors are one line, exit code 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    if command in MOVED_COMMANDS:
        print(f"fmibridge: error: {MOVED_COMMANDS[command]}.", file=sys.stderr)
        return 2
    parser = _parser(command)
    args, extras = parser.parse_known_args(argv)
    if extras:
        _unrecognized(getattr(args, "parser", parser), extras)
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
    except OSError as exc:  # a full standard output (/dev/full): files name theirs
        if exc.filename is None:  # the exit's flush would fail again: a traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        where = exc.filename or "cannot write to standard output"
        print(f"fmibridge: error: {where}: {exc.strerror or exc}.", file=sys.stderr)
        return 2


if __name__ == "__main__":  # python -m fmibridge.cli: run the module by its name,
    from fmibridge.cli import main as named_main  # so that its functions pickle

    sys.exit(named_main())
