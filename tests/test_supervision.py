"""FMUs that crash, exit or hang: the run ends alone, says what, keeps its data.

The FMU is our own FaultyBall (tests/fmus): a ball in free flight whose C code,
once t > 0.5 s, writes through a null pointer (fault 1, SIGSEGV), calls
abort() (2), exit(0) (3) or loops forever (4). Each case runs it as a user
would (`fmibridge run`, `fmibridge sweep` serial and on a local cluster) and
checks the exit code and message, the samples kept up to 0.5 s with every
column of a complete run, that the healthy runs of a sweep are untouched,
and that no temporary folder is left. Runs use Co-Simulation (its steps are
recorded one by one); `test_a_compiled_loop_keeps_its_samples_to_the_crash`
and `test_a_model_exchange_sweep_keeps_its_samples_to_the_crash` check that
Model Exchange's compiled loop keeps them too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmibridge import FmibridgeWarning, Halving, simulate
from fmibridge.cli import main
from fmibridge.core import supervision
from fmibridge.core.journal import Journal, replay
from fmibridge.core.recorder import recording
from fmibridge.core.result import Status
from fmibridge.core.time_limit import time_limit
from fmibridge.flows.fmu import fmu_system
from fmibridge.models import bouncing_ball

REPO = Path(__file__).resolve().parents[1]
T_FAULT = 0.5  # s: FaultyBall's equations fail after this time
H = 1e-3  # s: the communication step; the last sample lies within 2 steps of T_FAULT
FAULTS = {
    1: ("was killed by signal SIGSEGV (Segmentation fault)", 2),
    2: ("was killed by signal SIGABRT (Aborted)", 2),
    3: ("exited with code 0 without finishing", 2),
}
COLUMNS = ["time", "h", "v", "gap", "mode"]  # of a complete run: gap is an output
TIMEOUT = 3.0  # s: a run's time limit (healthy runs take well under 1 s)


def own(temp: Path) -> Path:
    """fmibridge's own folder in the temporary directory `temp` (`core.outputs`)."""
    return temp / f"fmibridge-{os.getuid()}"


@pytest.fixture(scope="module")
def faulty(builder, fmu_dir) -> Path:
    built = builder.build_fmus(
        REPO / "fmus", fmu_dir, ["FaultyBall"], models_dir=REPO / "tests" / "fmus"
    )
    return built["FaultyBall"]


def cli(*args: str, env: dict | None = None) -> subprocess.Popen:
    """`fmibridge ARGS` as its own process (default SIGINT, a private TMPDIR)."""
    return subprocess.Popen(
        [sys.executable, "-m", "fmibridge.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def kept_to_the_fault(frame: pd.DataFrame) -> None:
    """The partial samples: every column, from t = 0 to just before the fault."""
    assert list(frame.columns) == COLUMNS
    assert frame["time"].iloc[0] == 0.0
    assert T_FAULT - 2 * H <= frame["time"].iloc[-1] <= T_FAULT + 2 * H
    assert np.allclose(frame["gap"], frame["h"])


def run_args(faulty: Path, fault: int, out: Path, *flags: str) -> list[str]:
    return [
        "run", str(faulty), "--interface", "cs", "--parameters", f"fault={fault}",
        "--step-size", str(H), "--no-progress", "--out", str(out), *flags,
    ]  # fmt: skip


# -- fmibridge run -----------------------------------------------------------------


def test_a_healthy_run_has_the_columns_a_partial_one_keeps(faulty, tmp_path):
    out = tmp_path / "ball.csv"
    assert main(run_args(faulty, 0, out)) == 0
    assert list(pd.read_csv(out).columns) == COLUMNS


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_crashing_fmu_ends_its_run_with_a_message_and_its_samples(
    faulty, tmp_path, capsys, monkeypatch, fault
):
    """A segfault, abort or exit() in FMU code ends the supervised run, not the
    caller: a message, the partial file, the unpacked folder removed."""
    said, code = FAULTS[fault]
    temp = tmp_path / "tmp"  # where the next supervised process puts its folder
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    supervision.close_all()
    out = tmp_path / "out" / "ball.csv"
    out.parent.mkdir()
    assert main(run_args(faulty, fault, out)) == code
    err = capsys.readouterr().err
    assert (
        f"fmibridge: error: {faulty}: the simulation process {said} at t = 0.5" in err
    )
    assert "wrote the samples so far to" in err
    kept_to_the_fault(pd.read_csv(out.parent / "ball.partial.csv"))
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "ball.partial.csv", "ball.partial.events.csv",
    ]  # fmt: skip
    assert list(own(temp).iterdir()) == []  # the crashed process's folder, FMU and all


def test_a_hanging_fmu_is_ended_at_its_time_limit(faulty, tmp_path, capsys):
    out = tmp_path / "ball.csv"
    assert main(run_args(faulty, 4, out, "--timeout", str(TIMEOUT))) == 1
    err = capsys.readouterr().err
    assert f"{faulty}: the simulation did not stop at its time limit of 3 s" in err
    kept_to_the_fault(pd.read_csv(tmp_path / "ball.partial.csv"))
    assert not out.exists()


def test_a_run_past_its_time_limit_stops_itself_with_its_samples(tmp_path, capsys):
    out = tmp_path / "ball.csv"
    argv = ["run", "--stop-time", "1", "--step-size", "1e-6", "--timeout", "1"]
    argv.append("--no-progress")
    assert main([*argv, "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "Stopped at its time limit (timeout)" in captured.out
    frame = pd.read_csv(tmp_path / "ball.partial.csv")
    assert 0 < frame["time"].iloc[-1] < 1.0 and not out.exists()


def test_sigterm_ends_a_hanging_run_within_a_second(faulty, tmp_path):
    """`timeout -s TERM 10 fmibridge run <hanging FMU>` ends within 12 s, with its
    partial file and no temporary folder: the signal is honoured while FMU code
    runs."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "ball.csv"
    argv = ["timeout", "-s", "TERM", "10", sys.executable, "-m", "fmibridge.cli"]
    start = time.monotonic()
    done = subprocess.run(
        [*argv, *run_args(faulty, 4, out)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
        timeout=60,
    )
    assert time.monotonic() - start < 12.0
    assert done.returncode == 124  # timeout's code: the command ended on SIGTERM
    assert "fmibridge: terminated (SIGTERM) at t = 0.5" in done.stderr
    kept_to_the_fault(pd.read_csv(tmp_path / "ball.partial.csv"))
    assert list(own(temp).iterdir()) == []


def test_a_second_run_on_the_same_out_fails_before_simulating(faulty, tmp_path, capsys):
    """The second run refuses the claimed file instead of silently replacing
    the first's. The first then ends on Ctrl-C at once, its FMU hanging."""
    out = tmp_path / "ball.csv"
    first = cli(*run_args(faulty, 4, out, "--timeout", str(TIMEOUT)))
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline:  # its claim
        time.sleep(0.05)
    assert main(["run", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out} exists" in err  # claimed: the file is there, empty
    start = time.monotonic()
    first.send_signal(signal.SIGINT)  # Ctrl-C, while the FMU's code hangs
    assert first.wait(timeout=60) == 130
    assert time.monotonic() - start < 5.0  # within a second, and a margin
    first.stdout.close(), first.stderr.close()
    assert not out.exists()  # its claim is given up


# -- sweeps ------------------------------------------------------------------------


def sweep_spec(tmp_path: Path, faulty: Path, faults: list[int]) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(
        f'model = "{faulty}"\ninterface = "cs"\nt_end = 1.0\ntimeout = {TIMEOUT}\n'
        f"[method]\nh = {H}\n[grid]\nparameters.fault = {faults}\n"
        '[output]\ntrajectories = "runs"\n'
    )
    return path


def check_sweep(tmp_path: Path, faults: list[int], code: int, out: str) -> None:
    """The summary and trajectories of a sweep over FaultyBall's faults."""
    assert code == 1
    summary = pd.read_csv(tmp_path / "spec.csv", index_col="run")
    for run, fault in enumerate(faults):
        row = summary.loc[run]
        if fault == 0:
            assert row["status"] == "REACHED_END" and row["t_final"] == 1.0
            assert row["n_steps"] == 1000
            continue
        expected = "TIME_LIMIT" if fault == 4 else "ERROR"
        assert (
            row["status"] == expected
            and "FaultyBall.fmu: the simulation" in (row["error"])
        )
        assert T_FAULT - 2 * H <= row["t_final"] <= T_FAULT + 2 * H
        kept_to_the_fault(pd.read_csv(tmp_path / "runs" / f"run_{run:05d}.csv"))
    messages = {1: "SIGSEGV", 2: "SIGABRT", 3: "exited with code 0"}
    assert all(messages[f] in out for f in faults if f in messages)
    assert "did not stop at its time limit of 3 s" in out


def test_a_model_exchange_sweep_keeps_its_samples_to_the_crash(
    faulty, tmp_path, capsys
):
    """The compiled loop's samples, as `fmibridge run` keeps them, in a sweep."""
    faults = [0, 1, 0]
    spec = sweep_spec(tmp_path, faulty, faults)
    spec.write_text(spec.read_text().replace('interface = "cs"', 'interface = "me"'))
    argv = ["sweep", str(spec), "--scheduler", "serial", "--no-progress"]
    code = main([*argv, "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "SIGSEGV" in out
    summary = pd.read_csv(tmp_path / "spec.csv", index_col="run")
    assert list(summary["status"]) == ["REACHED_END", "ERROR", "REACHED_END"]
    assert T_FAULT - 2 * H <= summary.loc[1, "t_final"] <= T_FAULT + 2 * H
    kept_to_the_fault(pd.read_csv(tmp_path / "runs" / "run_00001.csv"))


def test_a_serial_sweep_goes_on_past_crashing_and_hanging_runs(
    faulty, tmp_path, capsys
):
    """A crashing or hanging run ends alone: the sweep goes on and sums up."""
    faults = [0, 2, 3, 0, 4, 0]
    spec = sweep_spec(tmp_path, faulty, faults)
    argv = ["sweep", str(spec), "--scheduler", "serial", "--no-progress"]
    code = main([*argv, "--output-dir", str(tmp_path)])
    check_sweep(tmp_path, faults, code, capsys.readouterr().out)


@pytest.mark.slow  # 12-30 s; test_sweep's cluster test runs supervised FMUs too
def test_a_local_cluster_sweep_keeps_healthy_runs_ok(faulty, tmp_path):
    """Supervision keeps a crash out of the Dask worker (else its healthy runs
    become KilledWorker errors) and a hung run from holding the worker."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    faults = [0, 1, 4, 0, 0, 0]
    spec = sweep_spec(tmp_path, faulty, faults)
    argv = ["sweep", str(spec), "--scheduler", "local", "--workers", "2"]
    process = cli(*argv, "--no-progress", "--output-dir", str(tmp_path),
                  env={"TMPDIR": str(temp)})  # fmt: skip
    out, _ = process.communicate(timeout=300)
    check_sweep(tmp_path, faults, process.returncode, out)
    assert list(own(temp).iterdir()) == []


# -- the parts ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["halving", "relaxation", "unilateral"])
def test_a_compiled_loop_keeps_its_samples_to_the_crash(
    faulty, tmp_path, capsys, method
):
    """Model Exchange's compiled loops hand their samples over in blocks: a
    crash inside a block must not lose the block's samples."""
    out = tmp_path / "ball.csv"
    flags = ("--output-interval", "steps", "--method", method)  # every step kept
    argv = [a if a != "cs" else "me" for a in run_args(faulty, 1, out, *flags)]
    assert main(argv) == 2
    frame = pd.read_csv(tmp_path / "ball.partial.csv")
    kept_to_the_fault(frame)
    assert len(frame) >= round(frame["time"].iloc[-1] / H) + 1  # steps of <= h


def test_simulate_stops_at_its_timeout_with_its_samples():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = simulate(bouncing_ball(), stop_time=1.0, step_size=1e-6, timeout=0.5)
    assert result.status is Status.TIME_LIMIT
    assert "time limit of 0.5 s of wall time ended at t = " in result.detail
    assert 0 < result.t[-1] < 1.0


def test_simulate_ends_a_hanging_fmu_at_its_timeout_with_its_samples(faulty):
    """A Python timeout cannot interrupt an FMU that loops in C: a model file
    runs supervised, as on the command line."""
    with pytest.warns(FmibridgeWarning, match="Run stopped at t = 0.5"):
        result = simulate(
            faulty, fmi_type="cs", parameters={"fault": 4}, step_size=H, timeout=1.0
        )
    assert result.status is Status.TIME_LIMIT
    assert "did not stop at its time limit of 1 s and was killed" in result.detail
    kept_to_the_fault(result.to_pandas().reset_index())


def test_simulate_survives_a_crashing_fmu_given_a_timeout(faulty):
    with pytest.raises(supervision.ProcessDied, match="killed by signal SIGSEGV"):
        simulate(
            faulty, fmi_type="cs", parameters={"fault": 1}, step_size=H, timeout=10.0
        )


def test_simulate_says_when_its_timeout_cannot_stop_an_fmu(faulty):
    """A HybridSystem (of an FMU) or a lambda as guard stays in this process."""
    system = fmu_system(faulty, "cs", parameters={"fault": 0})
    try:
        with pytest.warns(FmibridgeWarning, match="`timeout`: a HybridSystem runs"):
            result = simulate(system, stop_time=0.1, step_size=H, timeout=10.0)
    finally:
        system.close()
    assert result.status is Status.REACHED_END
    with pytest.warns(FmibridgeWarning, match="`timeout`: a keyword's value cannot"):
        guard = (lambda t, x: x[0], lambda t, x: x)  # a floor, never reached
        simulate(faulty, stop_time=0.1, guards=[guard], timeout=10.0)


# prints each doStep call of a run without timeout, in this process, as it
# returns, and "atexit" where the interpreter exits normally
IN_PROCESS = """
import atexit
import sys
import fmibridge
atexit.register(print, "atexit", flush=True)
fmibridge.simulate(
    sys.argv[1], fmi_type="cs", parameters={"fault": 4}, step_size=float(sys.argv[2]),
    fmi_call_logger=lambda text: "DoStep(" in text and print(text, flush=True),
)
"""
HANG_CPU_S = 0.5  # s: CPU time a child spends past its last doStep: in the loop


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time of process `pid` (proc(5): fields 14, 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_inside_the_hang(process: subprocess.Popen, fmu: Path) -> None:
    """Return once `process` has returned from the doStep to T_FAULT and then
    spent HANG_CPU_S of CPU time: it loops inside the next doStep."""
    for line in process.stdout:
        if f"currentCommunicationPoint={T_FAULT - H}," in line:
            break
    else:
        pytest.fail(f"{fmu}: the run ended before its fault")
    start = cpu_seconds(process.pid)
    while cpu_seconds(process.pid) < start + HANG_CPU_S and process.poll() is None:
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("variant", ["", "_fmi1cs", "_fmi3"])
def test_sigterm_ends_an_in_process_run_inside_a_hanging_do_step(
    faulty, tmp_path, variant
):
    """SIGTERM ends `simulate` without timeout while the FMU's doStep loops in C,
    where Python cannot run its handler: code 143 and no unpacked folder left
    (`fmu_archive._Folders._watch`), whether doStep is called from `_fmi` (FMI
    2.0) or through fmpy's ctypes (FMI 1.0); the interpreter's exit is skipped."""
    fmu = faulty.with_name(f"FaultyBall{variant}.fmu")
    process = subprocess.Popen(
        [sys.executable, "-c", IN_PROCESS, str(fmu), str(H)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    try:
        wait_inside_the_hang(process, fmu)
        assert [p.name[:10] for p in own(tmp_path).iterdir()] == ["fmibridge_"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        process.kill()  # where it failed: a no-op once it ended
    assert "atexit" not in process.stdout.read()
    assert list(own(tmp_path).iterdir()) == []


def test_an_inner_time_limit_does_not_extend_an_outer_one():
    with time_limit(0.01), time_limit(100.0), pytest.warns(FmibridgeWarning):
        time.sleep(0.02)
        result = Halving(h=1e-3).run(bouncing_ball(), 3.0)
    assert result.status is Status.TIME_LIMIT and result.t[-1] == 0.0


def test_the_journal_replays_a_run_and_ignores_a_cut_record(tmp_path):
    for t_eval in ([0.0, 0.5, 1.0], None):
        journal = Journal(tmp_path / "run.bin")
        with recording(journal):
            full = Halving(h=1e-3).run(bouncing_ball(), 1.0, t_eval=t_eval)
        journal.close()
        with recording() as record:
            replay(tmp_path / "run.bin")
        again = record.result(Status.FAILED, {})
        assert np.array_equal(again.t, full.t) and np.array_equal(again.x, full.x)
        assert [e.t for e in again.events] == [e.t for e in full.events]
    data = bytearray((tmp_path / "run.bin").read_bytes())
    data[:8] = (int.from_bytes(data[:8], "little") - 3).to_bytes(8, "little")
    (tmp_path / "cut.bin").write_bytes(bytes(data))  # the last record cut short
    with recording() as record:
        replay(tmp_path / "cut.bin")
    cut = record.result(Status.FAILED, {})  # the complete records, in order
    assert 0 < len(cut.t) < len(full.t)
    assert np.array_equal(cut.t, full.t[: len(cut.t)])


def raise_bad_value(x: int) -> None:
    """A call that fails in the child with an ordinary exception."""
    raise ValueError(f"bad {x}")


def test_a_supervised_call_returns_or_raises_as_in_process():
    with supervision.Supervisor() as supervisor:
        assert supervisor.call(pow, {"base": 2, "exp": 10}) == 1024
        with pytest.raises(ValueError, match="bad 3") as error:
            supervisor.call(raise_bad_value, {"x": 3})
        assert "Traceback in the simulation process" in error.value.__notes__[0]
        with pytest.raises(supervision.ProcessDied, match="exited with code 7"):
            supervisor.call(os._exit, {"status": 7}, what="X")
        assert supervisor.call(pow, {"base": 3, "exp": 2}) == 9  # a new child


def test_a_source_tree_in_the_working_directory_does_not_shadow_the_package(tmp_path):
    """The README's quick start runs `fmibridge run` in the clone, whose
    fmibridge/ is not built when installed with `pip install .`: the supervised
    child must import the package its parent runs, not the working directory's."""
    script = Path(sys.executable).with_name("fmibridge")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable}")
    shadow = tmp_path / "fmibridge"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('an unbuilt source tree')\n")
    done = subprocess.run(
        [str(script), "run", "--stop-time", "1", "--out", "ball.csv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = (tmp_path / "ball.events.csv").read_text().splitlines()
    assert len(events) == 2  # the header and the impact at 0.4515 s
    assert abs(float(events[1].split(",")[0]) - 0.45152364098573) < 1e-9
