"""Hostile and broken input: each case gets one clear error or status, no wrong
answer, no hang, and leaves no stray files or folders behind.

Expressions of bounded cost, adapter files checked in full, parameters checked
against the run, output paths checked before it, files written whole, runs cut
short by an error, Ctrl-C or SIGTERM keeping their samples, sweep specs that
cannot run code or write outside the output folder.
"""

import contextlib
import errno
import fcntl
import math
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fmibridge.core.recorder as recorder_module
import fmibridge.sweep.execution as execution
from benchmarks.__main__ import main as bench_main
from fmibridge import AdapterError, FmibridgeError, simulate
from fmibridge.cli import main
from fmibridge.core.errors import (
    EXIT_TERMINATED,
    ExpressionError,
    FmibridgeWarning,
    Terminated,
    exit_code,
    sigterm_raises,
)
from fmibridge.core.numbers import C_LONG_MAX
from fmibridge.core.outputs import claimed, write_atomically, write_together
from fmibridge.core.recorder import recording
from fmibridge.core.result import Status
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.expressions import MAX_DEPTH, Expression
from fmibridge.methods import Halving
from fmibridge.models import bouncing_ball_impacts
from fmibridge.models.ball import bouncing_ball
from fmibridge.sweep import Run, Sweep, load_sweep, map_runs, run_sweep

REPO = Path(__file__).resolve().parents[1]
BALL = (REPO / "adapters" / "bouncing_ball.toml").read_text()
T_IMPACT = bouncing_ball_impacts(1)[0]  # s: the ball's first impact, from 1 m
EVENT_TOL = 1e-9  # s: Halving (h = 1e-3) locates an impact to t_tol = 1e-10


def ball_adapter(tmp_path: Path, fmu_dir: Path, old: str = "", new: str = "") -> Path:
    """The README's ball adapter in tmp_path, with `old` replaced by `new`."""
    text = BALL.replace('"../fmus/build/', f'"{fmu_dir}/')
    assert old in text
    path = tmp_path / "ball.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def unwritable(folder: str) -> bool:
    """True if `folder` exists and refuses a new file."""
    probe = Path(folder) / "fmibridge_probe"
    try:
        probe.open("x").close()
    except OSError:
        return Path(folder).is_dir()
    probe.unlink()
    return False


def leftovers(folder: Path) -> list[str]:
    """Temporary files a writer left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- expressions of bounded cost --------------------------------------------------


@pytest.mark.parametrize(
    "source, part",
    [
        ("9**9**9", "pow(9.0, 387420489.0)"),
        ("10**10**10", "pow(10.0, 10000000000.0)"),
        ("floor(1e300)**floor(1e300)", "pow(1e+300, 1e+300)"),
        ("h + 0*9**9**9", "pow(9.0, 387420489.0)"),
        ("2**10000", "pow(2.0, 10000.0)"),
        ("1e308 * 10", "1e+308 * 10.0"),
    ],
)
def test_huge_constant_powers_are_refused_at_check_time(source, part):
    with pytest.raises(
        FmibridgeError, match="fails: (overflow|the result is inf)"
    ) as e:
        Expression.parse(source, {"h"}, "ball.toml: [edges[0].guard]")
    assert str(e.value).startswith(f"ball.toml: [edges[0].guard]: {part} in ")


def test_constant_parts_fail_at_check_time_and_fold_to_floats():
    with pytest.raises(FmibridgeError, match=r"1\.0 / 0\.0 in 'h \+ 1/0' fails: div"):
        Expression.parse("h + 1/0", {"h"})
    assert Expression.parse("2 ** 0.5 * pi", set())({}) == math.sqrt(2) * math.pi


def test_huge_powers_of_variables_overflow_at_run_time_at_once():
    expr = Expression.parse("floor(h)**floor(h)", {"h"})
    with pytest.raises(ExpressionError, match=r"h = 1e\+300: overflow"):
        expr({"h": 1e300})


@pytest.mark.parametrize(
    "source, message",
    [
        ("max(" + ", ".join(["h"] * 5000) + ")", "has 15003 characters; at most 1000"),
        ("-" * 100000 + "h", "has 100001 characters; at most 1000"),
        ("+".join(["h"] * 2000), "has 3999 characters; at most 1000"),
        ("+".join(["h"] * (MAX_DEPTH + 1)), f"nests deeper than {MAX_DEPTH}"),
        ("-" * 900 + "h", f"nests deeper than {MAX_DEPTH}"),
        ("min()", r"min\(\) takes at least 2 argument\(s\), got 0"),
        ("max(h)", r"max\(\) takes at least 2 argument\(s\), got 1"),
        ("log(h, 2, 3)", r"log\(\) takes 1 or 2 argument\(s\), got 3"),
        ("1" * 400, "the number 1111.* is not a finite float"),
    ],
)
def test_long_deep_and_malformed_expressions_are_one_error(source, message):
    with pytest.raises(FmibridgeError, match=message):
        Expression.parse(source, {"h"})


def test_longest_and_deepest_allowed_expressions_evaluate_exactly():
    widest = "max(" + ", ".join(["h"] * 332) + ")"
    assert len(widest) <= 1000
    assert Expression.parse(widest, {"h"})({"h": 2.5}) == 2.5
    deepest = "+".join(["h"] * (MAX_DEPTH - 1))
    assert Expression.parse(deepest, {"h"})({"h": 1.0}) == MAX_DEPTH - 1


@pytest.mark.parametrize(
    "source, values, reason",
    [
        ("v / 0", {"v": 2.0}, "v = 2.0: division by zero"),
        ("v % 0", {"v": 2.0}, "v = 2.0: division by zero"),
        ("sqrt(h - 2)", {"h": 1.0}, "h = 1.0: math domain error"),
        ("(-e)**0.5", {"e": 0.8}, "e = 0.8: math domain error"),
        ("2**v", {"v": 1e4}, "v = 10000.0: overflow"),
        ("v * 1e308 * 10", {"v": 1.0}, "v = 1.0: the result is inf"),
    ],
)
def test_run_time_failures_name_the_expression_and_its_inputs(source, values, reason):
    with pytest.raises(ExpressionError) as e:
        Expression.parse(source, set(values))(values)
    assert str(e.value).startswith(f"{source!r} failed with {reason}")


# -- adapter files -------------------------------------------------------------------


def test_failing_reset_names_file_key_expression_and_time_and_keeps_samples(
    tmp_path, fmu_dir
):
    path = ball_adapter(tmp_path, fmu_dir, '"-e * v"', '"v / 0"')
    with load_adapter(path) as adapter, recording() as record:
        with pytest.raises(ExpressionError) as e:
            adapter.run()
    message = str(e.value)
    assert message.startswith(f"{path}: [edges[0].reset.v] at t = ")
    assert "'v / 0' failed with v = -4.4" in message and "division by zero" in message
    t_failed = float(message.split("at t = ")[1].split(" s:")[0])
    assert t_failed == pytest.approx(T_IMPACT, abs=EVENT_TOL)
    partial = record.result(Status.FAILED, {})
    assert t_failed - 1e-3 < partial.t[-1] <= t_failed  # the last step before it
    assert partial.x[-1, 0] == pytest.approx(0, abs=1e-9)
    assert len(partial.t) > 400 and not partial.events


def test_typo_in_a_target_is_an_unknown_mode(tmp_path, fmu_dir):
    path = ball_adapter(
        tmp_path,
        fmu_dir,
        'direction = "falling"',
        'direction = "falling"\ntarget = "mdoel"',
    )
    with pytest.raises(
        AdapterError,
        match=r"\[edges\[0\]\.target\] unknown mode 'mdoel'; the declared modes are "
        r"\['model'\]",
    ):
        load_adapter(path)


def test_non_utf8_adapter_and_directory_fmu_are_one_error(tmp_path, fmu_dir):
    path = tmp_path / "latin1.toml"
    path.write_bytes(BALL.replace("ball of", "b\xe4ll of").encode("latin-1"))
    with pytest.raises(AdapterError, match=r"latin1.toml: not UTF-8 text \(byte 0xe4"):
        load_adapter(path)
    (tmp_path / "folder.fmu").mkdir()
    path = ball_adapter(tmp_path, fmu_dir, f"{fmu_dir}/BouncingBall.fmu", "folder.fmu")
    with pytest.raises(AdapterError, match=r"folder.fmu: is a folder, not an FMU fi"):
        load_adapter(path)


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("t_end = 3.0", "t_end = 0", r"\[t_end\] `t_end` must be a finite time after"),
        ("h = 1e-3", "h = 1e300", r"\[method.h\] `method.h` = 1e\+300 s must not be"),
        ("h = 1e-3", "h = 1e-300", r"\[method.h\] .* lost in round-off at t = 3.0 s"),
    ],
)
def test_adapter_span_and_step_are_checked(tmp_path, fmu_dir, old, new, message):
    with pytest.raises(AdapterError, match=message):
        load_adapter(ball_adapter(tmp_path, fmu_dir, old, new))


# -- the command line: parameters -----------------------------------------------------


@pytest.mark.parametrize(
    "flags, message",
    [
        (
            ["--stop-time", "0"],
            "`--stop-time` must be a finite time after t0 = 0.0 s, got 0.0.",
        ),
        (["--stop-time", "-1"], "`--stop-time` must be a finite time after t0 = 0.0 s"),
        (
            ["--step-size", "1e10"],
            "`--step-size` = 10000000000.0 s must not be longer than the run",
        ),
        (
            ["--step-size", "1e-300"],
            "`--step-size` = 1e-300 s is lost in round-off at t = 3.0 s",
        ),
        (
            ["--step-size", "1e-9"],
            "needs 3e+09 steps to reach t_end = 3.0 s, more than max",
        ),
    ],
)
def test_run_parameters_are_checked_before_the_run(capsys, flags, message):
    assert main(["run", "--no-progress", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err


def test_directory_given_as_fmu_is_a_directory(tmp_path, capsys):
    (tmp_path / "x.fmu").mkdir()
    (tmp_path / "x.toml").mkdir()
    for command, model, message in (
        ("run", "x.fmu", "x.fmu: is a folder, not an FMU file"),
        ("info", "x.fmu", "x.fmu: is a folder, not an FMU file"),
        ("run", "x.toml", "x.toml: is a folder, not an adapter file."),
    ):
        assert main([command, str(tmp_path / model)]) == 2
        assert message in capsys.readouterr().err


# -- the command line: outputs --------------------------------------------------------


def test_bad_out_paths_are_refused_before_the_run(tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    cases = {
        str(tmp_path / "folder"): "is a folder; give a file name in it.",
        "": "--out is empty",
        str(tmp_path / "missing" / "x.csv"): f"folder {tmp_path / 'missing'} does not",
        "/dev/null": "/dev/null exists and is not a regular file.",
    }
    if unwritable("/sys"):  # read-only even for root
        cases["/sys/ball.csv"] = "cannot write in /sys"
    for out, message in cases.items():
        assert main(["run", "--no-progress", "--out", out]) == 2, out
        captured = capsys.readouterr()
        assert captured.out == "" and message in captured.err, (out, captured.err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_existing_outputs_are_replaced_only_with_force(tmp_path, capsys):
    out, events = tmp_path / "ball.csv", tmp_path / "ball.events.csv"
    for existing in (out, events):
        existing.write_text("keep me\n")
        assert main(["run", "--no-progress", "--out", str(out)]) == 2
        assert f"--out {existing} exists; pass --force" in capsys.readouterr().err
        assert existing.read_text() == "keep me\n"
        existing.rename(existing.with_suffix(".kept"))
    for kept in tmp_path.glob("*.kept"):
        kept.rename(kept.with_suffix(".csv"))
    assert main(["run", "--no-progress", "--out", str(out), "--force"]) == 0
    frame = pd.read_csv(out, index_col="time")
    assert frame.index[-1] == 3.0 and len(pd.read_csv(events)) == 6
    assert leftovers(tmp_path) == []


def test_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "ball.csv"
    path.write_text("old\n")

    def full_disk(temporary: Path) -> None:
        temporary.write_text("half a fi")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(FmibridgeError, match="Cannot write .*No space left on device"):
        write_atomically(path, full_disk)
    assert path.read_text() == "old\n" and leftovers(tmp_path) == []


def test_failing_expression_from_the_cli_writes_the_partial_samples(
    tmp_path, fmu_dir, capsys
):
    path = ball_adapter(tmp_path, fmu_dir, '"-e * v"', '"(-e)**0.5"')
    out = tmp_path / "ball.csv"
    assert main(["run", str(path), "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "[edges[0].reset.v] at t = 0.45152364" in err and "math domain error" in err
    assert f"wrote the samples so far to {tmp_path / 'ball.partial.csv'}" in err
    partial = pd.read_csv(tmp_path / "ball.partial.csv", index_col="time")
    assert partial.index[-1] == pytest.approx(T_IMPACT, abs=EVENT_TOL)
    assert not out.exists() and leftovers(tmp_path) == []


def test_guard_failing_at_t0_writes_nothing(tmp_path, fmu_dir, capsys):
    path = ball_adapter(tmp_path, fmu_dir, 'guard = "h"', 'guard = "sqrt(h - 2)"')
    out = tmp_path / "ball.csv"
    assert main(["run", str(path), "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "[edges[0].guard] at t = 0.0 s: 'sqrt(h - 2)' failed with h = 1.0" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ball.toml"]


def fmibridge(*args: str) -> subprocess.Popen:
    """`fmibridge ARGS` in a new process that Ctrl-C can stop (even when pytest
    runs in the background, where SIGINT is ignored and inherited so)."""
    return subprocess.Popen(
        [sys.executable, "-m", "fmibridge.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_closed_pipe_loses_no_output(tmp_path):
    """`fmibridge run --out x.csv | head -1`: the files are written first.

    The reader goes away before the first line is printed (head -1 may quit
    before a buffered line arrives): printing fails, the files are written.
    """
    out = tmp_path / "ball.csv"
    process = fmibridge("run", "--no-progress", "--out", str(out))
    process.stdout.close()
    assert process.wait() == 141 and process.stderr.read() == b""
    assert pd.read_csv(out, index_col="time").index[-1] == 3.0
    assert len(pd.read_csv(tmp_path / "ball.events.csv")) == 6
    process.stderr.close()


@pytest.mark.parametrize(
    "signum, code, said",
    [(signal.SIGINT, 130, b"interrupted"), (signal.SIGTERM, 143, b"terminated")],
)
def test_signals_keep_the_samples_marked_partial(tmp_path, signum, code, said):
    """A long run (3e6 steps) is stopped once its progress bar shows it running
    (its stderr is a terminal: the bar shows only there)."""
    out = tmp_path / "ball.csv"
    terminal, stderr = pty.openpty()
    rows_columns = struct.pack("HHHH", 24, 80, 0, 0)  # tqdm draws nothing at 0 wide
    fcntl.ioctl(stderr, termios.TIOCSWINSZ, rows_columns)
    process = subprocess.Popen(
        [sys.executable, "-m", "fmibridge.cli", "run", "--step-size", "1e-6"]
        + ["--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(stderr)
    os.read(terminal, 1)  # the progress bar appears after 1 s of running
    process.send_signal(signum)
    assert process.wait(timeout=60) == code
    err = b""
    with contextlib.suppress(OSError):  # EIO once the process has closed it
        while chunk := os.read(terminal, 4096):
            err += chunk
    os.close(terminal)
    process.stdout.close()
    assert said + b" " in err and b"wrote the samples so far to" in err
    partial = pd.read_csv(tmp_path / "ball.partial.csv", index_col="time")
    # in time order; an impact it reached has two samples at its time
    assert 0 < partial.index[-1] < 3.0 and np.all(np.diff(partial.index) >= 0)
    assert not out.exists() and leftovers(tmp_path) == []


def test_sigterm_is_raised_as_terminated():
    with pytest.raises(Terminated) as e, sigterm_raises():
        os.kill(os.getpid(), signal.SIGTERM)
    assert exit_code(e.value) == EXIT_TERMINATED


# -- memory budget --------------------------------------------------------------------


def test_samples_beyond_the_budget_are_thinned_with_a_warning(monkeypatch):
    full = Halving(h=1e-3).run(bouncing_ball(), 1.0)
    monkeypatch.setattr(recorder_module, "SAMPLE_BUDGET_BYTES", 100 * (8 * 3 + 4))
    with pytest.warns(
        FmibridgeWarning, match=r"Kept every 16th of the run's 10\d\d samples"
    ):
        thin = Halving(h=1e-3).run(bouncing_ball(), 1.0)
    assert (
        thin.status is Status.REACHED_END and thin.provenance["sample_stride"] == "16"
    )
    kept = np.searchsorted(full.t, thin.t)
    assert np.array_equal(full.t[kept], thin.t) and np.array_equal(full.x[kept], thin.x)
    assert thin.t[-1] == 1.0 and len(thin.t) < 100
    assert [e.t for e in thin.events] == [e.t for e in full.events]


# -- sweeps ---------------------------------------------------------------------------


def spec_file(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        'model = "bouncing_ball"\nt_end = 0.5\n'
        + extra
        + "\n[grid]\nparameters.e = [0.5, 0.6, 0.7, 0.8]\n"
    )
    return path


@pytest.mark.parametrize(
    "output",
    [
        'summary = "../outside.csv"',
        'summary = "/tmp/elsewhere.csv"',
        'trajectories = "../runs"',
        'trajectories = "/tmp/fmibridge_hostile/a/b"',
    ],
)
def test_spec_outputs_stay_inside_the_output_folder(tmp_path, output):
    inside = tmp_path / "out"
    inside.mkdir()
    path = spec_file(tmp_path, f"[output]\n{output}\n")
    with pytest.raises(FmibridgeError, match="must be a relative path inside the out"):
        load_sweep(path, inside)
    assert not Path("/tmp/fmibridge_hostile").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "spec.toml"]


def test_spec_metrics_cannot_import_code(tmp_path):
    path = spec_file(tmp_path, 'metrics = ["this:x", "zeno_time"]')
    with pytest.raises(FmibridgeError, match="metric 'this:x' is not one of .*cannot"):
        load_sweep(path, tmp_path)
    assert "this" not in sys.modules


def plugin_metric(result, run) -> float:
    """A plugin metric: the number of samples; Ctrl-C when the run has e >= 0.7."""
    if run.parameters["e"] >= 0.7:
        raise KeyboardInterrupt
    return float(len(result.t))


def test_interrupted_sweep_csv_says_which_runs_did_not_finish(tmp_path, capsys):
    path = spec_file(tmp_path, "")
    code = main(
        [
            "sweep",
            str(path),
            "--scheduler",
            "serial",
            "--no-progress",
            "--output-dir",
            str(tmp_path),
            "--metric",
            f"{__name__}:plugin_metric",
        ]
    )
    assert code == 130 and "interrupted; 2/4 runs finished" in capsys.readouterr().out
    summary = pd.read_csv(tmp_path / "spec.csv", index_col="run")
    assert list(summary["status"]) == ["REACHED_END"] * 2 + ["NOT_RUN"] * 2
    column = summary[f"{__name__}:plugin_metric"]
    assert column.iloc[:2].gt(400).all() and column.iloc[2:].isna().all()


def test_sweep_outputs_are_checked_before_any_run(tmp_path, capsys):
    path = spec_file(tmp_path, "")
    missing = tmp_path / "missing" / "summary.csv"
    assert main(["sweep", str(path), "--out", str(missing), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert "runs on scheduler" not in captured.out
    assert f"folder {missing.parent} does not exist" in captured.err
    (tmp_path / "spec.csv").write_text("keep me\n")
    args = ["sweep", str(path), "--output-dir", str(tmp_path), "--no-progress"]
    assert main(args) == 2 and "exists; pass --force" in capsys.readouterr().err
    assert (tmp_path / "spec.csv").read_text() == "keep me\n"


def test_two_sweeps_on_one_summary_leave_one_and_an_error(tmp_path):
    """The second sweep fails on the claimed summary, not silently replacing it."""
    path = spec_file(tmp_path, "")
    sweeps = [
        fmibridge("sweep", str(path), "--output-dir", str(tmp_path), "--scheduler",
                  "serial", "--no-progress")
        for _ in range(2)
    ]  # fmt: skip
    codes = [sweep.wait(timeout=120) for sweep in sweeps]
    errors = [sweep.stderr.read().decode() for sweep in sweeps]
    assert sorted(codes) == [0, 2]
    assert f"--out {tmp_path / 'spec.csv'} exists" in errors[codes.index(2)]
    assert len(pd.read_csv(tmp_path / "spec.csv")) == 4


@pytest.mark.parametrize("workers", ["0", "-1", "two"])
def test_workers_must_be_at_least_one(tmp_path, capsys, workers):
    with pytest.raises(SystemExit) as e:
        main(["sweep", str(spec_file(tmp_path, "")), "--workers", workers])
    assert e.value.code == 2 and "must be an integer >= 1" in capsys.readouterr().err
    with pytest.raises(FmibridgeError, match="`workers` must be an integer >= 1"):
        map_runs(pow, [{"base": 2, "exp": 3}], workers=-1)


def test_silent_scheduler_is_one_error(monkeypatch):
    monkeypatch.setattr(execution, "SCHEDULER_TIMEOUT_S", 1.0)
    with pytest.raises(FmibridgeError, match="'tcp://127.0.0.1:9' did not answer wi"):
        map_runs(pow, [{"base": 2, "exp": 3}], scheduler="tcp://127.0.0.1:9")


def test_sweep_t_end_zero_is_a_value_not_unset():
    sweep = Sweep(Run("bouncing_ball", t_end=0.0), runs=[{"parameters.e": 0.5}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = run_sweep(sweep, scheduler="serial").summary
    assert summary.loc[0, "status"] == "ERROR"
    assert "`t_end` must be a finite time after t0 = 0.0 s" in summary.loc[0, "error"]


# -- numbers and types checked where they enter (issue 42) -------------------------


@pytest.mark.parametrize("fmi_type", ["me", "cs"])
@pytest.mark.parametrize(
    "keyword, value",
    [
        ("step_size", 0),
        ("step_size", -1e-3),
        ("step_size", math.nan),
        ("relative_tolerance", -1),
        ("relative_tolerance", 0),
        ("relative_tolerance", math.nan),
    ],
)
def test_a_zero_negative_or_nan_step_or_tolerance_is_refused(
    fmu_dir, fmi_type, keyword, value
):
    """`step_size=0` is not "no step" and a tolerance of -1 never reaches a
    Co-Simulation FMU's solver: both are refused as a negative step is."""
    with pytest.raises(FmibridgeError) as error:
        path = fmu_dir / "BouncingBall.fmu"
        simulate(path, stop_time=1.0, fmi_type=fmi_type, **{keyword: value})
    assert (
        str(error.value) == f"`{keyword}` must be a finite number > 0, got {value!r}."
    )


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"stop_time": 10**400}, "`stop_time` must be a finite time after t0"),
        ({"start_time": -(10**400)}, "`start_time` must be a finite number, got -1"),
        (
            {"method_options": {"max_steps": 2**70}},
            f"`max_steps` must be at most {C_LONG_MAX}, got {2**70}.",
        ),
        (
            {"method_options": {"max_halvings": 2**70}},
            f"`max_halvings` must be at most 2100, got {2**70}.",
        ),
        (
            {"output_interval": 1e-12, "step_size": 1e-3},
            "`output_interval` = 1e-12 s needs 1e+12 steps to reach t_end = 1.0 s, "
            "more than max_steps = 10000000",
        ),
    ],
)
def test_numbers_past_what_a_run_can_hold_are_refused_before_it(keywords, message):
    """Integers past the C range and a grid of 1e12 samples: an FmibridgeError
    before anything is allocated, not an OverflowError or a MemoryError."""
    with pytest.raises(FmibridgeError) as error:
        simulate(bouncing_ball(), **{"stop_time": 1.0, **keywords})
    assert message in str(error.value)


def test_numpy_numbers_are_numbers():
    """A step from np.linspace or a count from np.arange is a number, without a
    RuntimeWarning (a float32 stop time must not overflow in the range check)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = simulate(
            bouncing_ball(),
            stop_time=np.float32(1.0),
            step_size=np.float64(1e-3),
            method_options={"max_steps": np.int64(10**6)},
        )
    assert abs(result.event_times[0] - T_IMPACT) < EVENT_TOL


@pytest.mark.parametrize("value", ["2.0", 2j, [2.0, 1.0], None])
def test_a_start_value_that_is_not_a_number_is_refused(fmu_dir, value):
    with pytest.raises(FmibridgeError) as error:
        simulate(bouncing_ball(), stop_time=1.0, start_values={"h": value})
    assert str(error.value) == (
        f"HybridSystem `bouncing_ball`: the start value of state 'h' must be a "
        f"number, got {value!r}."
    )
    path = fmu_dir / "BouncingBall.fmu"
    with pytest.raises(FmibridgeError) as error:
        simulate(path, stop_time=1.0, start_values={"h": value})
    assert str(error.value).startswith(f"{path}: start value 'h' ")


@pytest.mark.parametrize(
    "value, message",
    [
        ("1.5", "input 'lam' must be a number (for an array variable, numbers), "
         "got '1.5' of type str."),
        (1j, "input 'lam' must be a number (for an array variable, numbers), got "
         "1j of type complex."),
        (lambda t: "1.5", "the value u(t0) of input 'lam' must be a number"),
        (np.array([(0.0, "0"), (1.0, "1")], dtype=[("time", float), ("lam", "U1")]),
         "Input 'lam': the table's values must be numbers, got array(['0', '1']"),
        (pd.DataFrame({"time": [0.0, 1.0], "lam": [1j, 2j]}), "Input 'lam': the "
         "table's values must be numbers"),
    ],
)  # fmt: skip
def test_an_input_that_is_not_a_number_is_refused_naming_it(fmu_dir, value, message):
    tables = (pd.DataFrame, np.ndarray)
    inputs = value if isinstance(value, tables) else {"lam": value}
    with pytest.raises(FmibridgeError) as error:
        simulate(fmu_dir / "BouncingBall.fmu", stop_time=1.0, input=inputs)
    assert message in str(error.value)


def test_an_array_start_value_on_the_command_line_is_one_error(capsys):
    assert main(["run", "--start-values", "h=1,2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "fmibridge: error: HybridSystem `bouncing_ball`: the start value of state "
        "'h' must be a number, got [1.0, 2.0].\n"
    )


# -- outputs as a unit (issue 42) ----------------------------------------------------


def test_two_writers_of_one_pair_leave_one_writers_pair(tmp_path):
    """A second writer that writes the same two files while the first is between
    its files finishes first; the first's pair then replaces it whole, never a
    mix of one's samples and the other's events."""
    out, events = tmp_path / "ball.csv", tmp_path / "ball.events.csv"

    def second(path: Path) -> None:
        write_together({out: lambda p: p.write_text("2"), events: second_events})
        path.write_text("1")

    def second_events(path: Path) -> None:
        path.write_text("2")

    write_together({out: lambda p: p.write_text("1"), events: second})
    assert (out.read_text(), events.read_text()) == ("1", "1")
    assert leftovers(tmp_path) == []


def test_forced_runs_at_once_leave_the_samples_and_events_of_one(tmp_path):
    """Four `run --out x --force` at once, each from another height: the events
    file holds the first impact of the height that the samples start from."""
    out = tmp_path / "ball.csv"
    heights = (1.0, 2.0, 3.0, 4.0)
    runs = [
        fmibridge("run", "--no-progress", "--stop-time", "1.5", "--out", str(out),
                  "--force", "--parameters", f"h0={h0}")
        for h0 in heights
    ]  # fmt: skip
    assert [run.wait(timeout=120) for run in runs] == [0] * 4
    h0 = pd.read_csv(out)["h"].iloc[0]
    first = pd.read_csv(tmp_path / "ball.events.csv")["time"].iloc[0]
    assert h0 in heights
    assert first == pytest.approx(bouncing_ball_impacts(1, h0=h0)[0], abs=EVENT_TOL)
    assert leftovers(tmp_path) == []


def test_a_claim_left_by_a_killed_run_is_taken_over(tmp_path, capsys):
    """A run killed by SIGKILL cannot release its claim on x.csv: a later run
    takes it over once its owner is gone. A live claim is still refused."""
    out = tmp_path / "ball.csv"
    code = (
        "import os, signal, sys; from pathlib import Path\n"
        "from fmibridge.core.outputs import claimed\n"
        "with claimed(Path(sys.argv[1])): os.kill(os.getpid(), signal.SIGKILL)"
    )
    killed = subprocess.run([sys.executable, "-c", code, str(out)])
    assert killed.returncode == -signal.SIGKILL and out.read_bytes() == b""
    assert main(["run", "--no-progress", "--out", str(out)]) == 0
    assert len(pd.read_csv(tmp_path / "ball.events.csv")) == 6
    live = tmp_path / "live.csv"
    with claimed(live):
        assert main(["run", "--no-progress", "--out", str(live)]) == 2
    assert f"--out {live} exists; pass --force" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ball.csv", "ball.events.csv",
    ]  # fmt: skip


def test_validate_and_bench_refuse_to_overwrite_without_force(tmp_path, capsys):
    (tmp_path / "validation.csv").write_text("keep me\n")
    table = tmp_path / "bench.csv"
    table.write_text("keep me\n")
    assert main(["validate", "--tiny", "--out", str(tmp_path), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"fmibridge: error: --out {tmp_path} is a folder with files in it; pass "
        f"--force to write over them.\n"
    )
    assert bench_main(["--quick", "--out", str(table)]) == 2
    assert capsys.readouterr().err == (
        f"python -m benchmarks: error: --out {table} exists; pass --force to "
        f"replace it.\n"
    )
    assert table.read_text() == (tmp_path / "validation.csv").read_text() == "keep me\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_standard_output_is_one_line_after_the_files(tmp_path):
    """A full standard output (OSError: No space left on device) is one line on
    standard error, not a traceback."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "fmibridge.cli", "run", "--out", "ball.csv"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
    assert (done.returncode, done.stderr) == (
        2,
        "fmibridge: error: cannot write to standard output: No space left on device.\n",
    )
    assert len(pd.read_csv(tmp_path / "ball.events.csv")) == 6
