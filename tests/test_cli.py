"""The `fmibridge` command line."""

import subprocess
import sys

import pandas as pd
import pytest

from fmibridge.cli import main
from fmibridge.models import bouncing_ball_impacts


def test_run_writes_ball_csv_that_never_goes_below_floor(tmp_path, capsys):
    out = tmp_path / "ball.csv"
    assert main(["run", "--stop-time", "3", "--out", str(out), "--no-progress"]) == 0
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["time", "h", "v", "mode"]
    assert frame["h"].min() >= -1e-9
    assert frame["time"].iloc[-1] == 3.0
    assert "6 events" in capsys.readouterr().out


def test_locate_illinois_gives_the_exact_impacts(tmp_path):
    out = tmp_path / "ball.csv"
    argv = ["run", "--locate", "illinois", "--stop-time", "3", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    events = pd.read_csv(tmp_path / "ball.events.csv")
    exact = bouncing_ball_impacts(6)
    assert abs(events["time"].to_numpy() - exact).max() < 1e-9


def test_an_option_the_method_lacks_is_named(capsys):
    argv = ["run", "--method", "relaxation", "--locate", "illinois", "--no-progress"]
    assert main(argv) == 2
    assert "takes no option(s) ['locate']" in capsys.readouterr().err


@pytest.mark.parametrize("step", ["-1", "0", "nan"])
def test_bad_option_is_one_line_and_exit_2(capsys, step):
    """A zero step is refused as a negative one is, never taken for "no step"."""
    assert main(["run", "--step-size", step, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"fmibridge: error: `--step-size` must be a finite number > 0, got "
        f"{float(step)!r}."
    )


def test_console_script_help():
    done = subprocess.run(
        [sys.executable, "-m", "fmibridge.cli", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "run" in done.stdout


def test_t_end_zero_is_a_value_not_unset(capsys):
    assert main(["run", "--stop-time", "0", "--no-progress"]) == 2
    assert "`--stop-time` must be a finite time after t0 = 0.0 s, got 0.0." in (
        capsys.readouterr().err
    )


def test_run_builds_its_parser_without_importing_the_other_commands():
    """`validate` and `sweep` load scipy.optimize and dask; `fmibridge run`
    parses its flags without them."""
    code = (
        "import sys; from fmibridge.cli import _parser; "
        "_parser('run').parse_args(['run', '--stop-time', '1']); "
        "print(sorted(m for m in ('fmibridge.validation', 'fmibridge.sweep', "
        "'scipy.optimize') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_bench_says_where_the_benchmarks_are(capsys):
    assert main(["bench", "--quick"]) == 2
    assert "run `python -m benchmarks` in a clone" in capsys.readouterr().err


def test_build_fmus_says_where_the_fmu_builder_is(capsys):
    assert main(["build-fmus", "--force"]) == 2
    err = capsys.readouterr().err
    assert "run `python fmus/build.py` in a clone" in err
    assert "`fmibridge examples DIR`" in err
