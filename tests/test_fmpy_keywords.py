"""FMPy's `simulate_fmu` keywords in `fmibridge.simulate`, one test per keyword.

A keyword fmibridge takes is checked against `fmpy.simulate_fmu` on the same
Reference FMU where both compute the same thing: forward Euler on VanDerPol
(equal to round-off), FMPy's default output grid, `record_events=False` on the
bouncing ball. A keyword it refuses is checked by its message, which names what
to use instead; no FMPy keyword is a TypeError.
"""

from __future__ import annotations

import inspect
import os
import re
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.model_description import ValidationError

import fmibridge
from fmibridge import FmibridgeError, FmibridgeWarning, FMUError, Halving, Unilateral
from fmibridge.flows.fmu_archive import FmuArchive
from fmibridge.fmpy_keywords import FIXED
from fmibridge.models import bouncing_ball, bouncing_ball_impacts
from fmibridge.simulation import default_output_interval

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
needs_reference = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
EULER_ATOL = 1e-13  # the same Euler steps: round-off over 200 steps (2.4e-15)
ME_ATOL = 1e-7  # RK4 at h = 0.01 against CVode at rtol 1e-10 (test_simulate's)
REFUSED_VALUE = {True: False, False: True, None: print}  # a value FMPy takes


def reference(version: int, model: str) -> Path:
    return Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"


def test_every_keyword_of_fmpy_is_taken_or_refused_by_name():
    """A new FMPy keyword fails here until it gets a row in FIXED or a keyword."""
    theirs = set(inspect.signature(fmpy.simulate_fmu).parameters) - {"filename"}
    ours = set(inspect.signature(fmibridge.simulate).parameters) | set(FIXED)
    assert theirs <= ours, sorted(theirs - ours)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fmpy_keyword_at_fmibridge_behaviour_is_accepted(name):
    """The value that means what fmibridge does runs as without it."""
    value = FIXED[name].accepted[0]
    plain = fmibridge.simulate(bouncing_ball(), stop_time=0.5)
    result = fmibridge.simulate(bouncing_ball(), stop_time=0.5, **{name: value})
    assert np.array_equal(result.x, plain.x) and np.array_equal(result.t, plain.t)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fmpy_keyword_at_another_value_is_refused_with_the_reason(name):
    fixed = FIXED[name]
    value = "win64" if name == "remote_platform" else REFUSED_VALUE[fixed.accepted[0]]
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(bouncing_ball(), stop_time=0.5, **{name: value})
    assert f"`{name}={value!r}`: {fixed.instead}" in str(error.value)


def test_all_refused_keywords_are_named_in_one_error():
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(
            bouncing_ball(), stop_time=0.5, visible=True, validate=False, fmu_state=b""
        )
    message = str(error.value)
    assert message.startswith("simulate: 3 keyword problem(s) with this")
    assert "`visible=True`" in message and "`fmu_state=b''`" in message


def test_a_keyword_of_neither_is_a_type_error_with_the_nearest_names():
    with pytest.raises(TypeError, match=r"'stoptime' \(did you mean 'stop_time'"):
        fmibridge.simulate(bouncing_ball(), stoptime=1.0)


def test_validate_true_refuses_unknown_start_values_as_fmpy_does(fmu_dir):
    with pytest.raises(FmibridgeError, match="no variable 'hh'"):
        fmibridge.simulate(
            fmu_dir / "BouncingBall.fmu", validate=True, start_values={"hh": 1}
        )


def _with_undefined_unit(fmu: Path, target: Path) -> Path:
    """A copy of `fmu` whose h has a unit its UnitDefinitions lack: a model
    description fmpy's validation refuses, with the same binary."""
    old = b'<Real unit="m" start="1.0" />'
    new = b'<Real unit="furlong" start="1.0" />'
    return _with_replaced(fmu, target, "modelDescription.xml", old, new)


def _with_replaced(
    fmu: Path, target: Path, member: str, old: bytes, new: bytes
) -> Path:
    """A copy of `fmu` whose `member` has `old` (found once) replaced by `new`."""
    with zipfile.ZipFile(fmu) as source, zipfile.ZipFile(target, "w") as copy:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == member:
                assert data.count(old) == 1
                data = data.replace(old, new)
            copy.writestr(item, data)
    return target


def test_a_description_its_schema_refuses_is_refused_in_fmpys_words(fmu_dir, tmp_path):
    """An attribute FMI 2.0's XML schema does not allow: fmpy's validation
    refuses it before reading further; fmibridge names the same problems (its
    schema is built once, fmpy's at every read), and with validate=False runs
    it as the valid FMU runs."""
    valid = fmu_dir / "BouncingBall.fmu"
    old = b'<Real unit="m" start="1.0" />'
    path = _with_replaced(
        valid, tmp_path / "Odd.fmu", "modelDescription.xml", old,
        b'<Real unit="m" start="1.0" odd="1" />',
    )  # fmt: skip
    with pytest.raises(ValidationError) as theirs:
        fmpy.read_model_description(str(path))
    failed = "; ".join(theirs.value.problems)
    assert "'odd'" in failed and failed.startswith("ERROR (line 20, column")
    for _ in range(2):  # the schema built for the first FMU checks the next
        with pytest.raises(FmibridgeError) as error:
            fmibridge.simulate_fmu(path, stop_time=0.4)
        assert f"fails fmpy's validation: {failed}. Fix the FMU" in str(error.value)
    with pytest.warns(FmibridgeWarning, match=re.escape(failed)):
        result = fmibridge.simulate_fmu(path, stop_time=0.4, validate=False)
    plain = fmibridge.simulate_fmu(valid, stop_time=0.4)
    assert np.array_equal(np.asarray(result), np.asarray(plain))
    with pytest.warns(FmibridgeWarning, match=re.escape(failed)) as read:
        FmuArchive(path, validate=False).cleanup()
    assert read[0].filename == __file__  # the warning names the caller's line


@needs_reference
def test_an_fmi3_build_description_its_schema_refuses_is_named(tmp_path):
    """FMI 3.0: fmpy's validation also checks sources/buildDescription.xml
    against its schema (fmpy then raises a bare Exception); fmibridge refuses
    it with the same problem and the member's name, and runs it with
    validate=False as fmpy does, equal to fmpy's run."""
    valid = reference(3, "Dahlquist")
    path = _with_replaced(
        valid, tmp_path / "Build.fmu", "sources/buildDescription.xml",
        b'<SourceFileSet language="C99">', b'<SourceFileSet language="C99" odd="1">',
    )  # fmt: skip
    with pytest.raises(Exception, match="Failed to validate buildDescription") as exc:
        fmpy.read_model_description(str(path))
    failed = str(exc.value).splitlines()[1]
    assert "'odd'" in failed and failed.startswith("ERROR (line 5, column")
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate_fmu(path)
    named = f"fails fmpy's validation: sources/buildDescription.xml: {failed}. "
    assert named in str(error.value)
    with pytest.warns(FmibridgeWarning, match="read regardless"):
        ours = fmibridge.simulate_fmu(path, validate=False)
    theirs = fmpy.simulate_fmu(path, validate=False)
    assert np.array_equal(np.asarray(ours)["x"], theirs["x"])
    assert np.array_equal(np.asarray(ours)["time"], theirs["time"])


def test_validate_false_runs_what_fails_validation_and_says_what_failed(
    fmu_dir, tmp_path
):
    """FMPy refuses the model description by default and runs it silently with
    validate=False; fmibridge refuses it by default too, and with
    validate=False runs it as the valid FMU runs, warning once what failed."""
    valid = fmu_dir / "BouncingBall.fmu"
    path = _with_undefined_unit(valid, tmp_path / "Furlong.fmu")
    failed = 'The unit "furlong" of variable "h" (line 19) is not defined.'
    with pytest.raises(ValidationError, match=re.escape(failed)):
        fmpy.simulate_fmu(path, stop_time=0.4)
    assert fmpy.simulate_fmu(path, stop_time=0.4, validate=False)["h"][-1] < 1.0
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(path, stop_time=0.4)
    assert str(error.value) == (
        f"{path}: modelDescription.xml fails fmpy's validation: {failed}. Fix the "
        f"FMU, or run it regardless with validate=False (FMPy's keyword)."
    )
    with pytest.warns(FmibridgeWarning) as caught:
        result = fmibridge.simulate(path, stop_time=0.4, validate=False)
    assert [str(w.message) for w in caught] == [
        f"{path}: modelDescription.xml fails fmpy's validation ({failed}); read "
        f"regardless, as validate=False asks."
    ]
    plain = fmibridge.simulate(valid, stop_time=0.4)
    assert np.array_equal(result.t, plain.t) and np.array_equal(result.x, plain.x)
    t = result["time"]  # free fall from h = 1 m: RK4 is exact on the parabola
    assert np.abs(result["h"] - (1.0 - 9.81 / 2 * t**2)).max() < 1e-12


def test_simulate_fmu_passes_validate_to_the_one_reading_of_the_fmu(fmu_dir, tmp_path):
    """`fmibridge.simulate_fmu(path, validate=False)` runs what fails validation,
    as `fmpy.simulate_fmu` does (and `simulate`), warning once; its default
    refuses it. In a supervised run (`timeout`) the child reads the FMU with
    the same `validate`."""
    valid = fmu_dir / "BouncingBall.fmu"
    path = _with_undefined_unit(valid, tmp_path / "Furlong.fmu")
    with pytest.raises(FmibridgeError, match="fails fmpy's validation"):
        fmibridge.simulate_fmu(path, stop_time=0.4)
    with pytest.warns(FmibridgeWarning, match="read regardless") as caught:
        result = fmibridge.simulate_fmu(path, stop_time=0.4, validate=False)
    assert len(caught) == 1
    plain = fmibridge.simulate_fmu(valid, stop_time=0.4)
    assert np.array_equal(np.asarray(result), np.asarray(plain))
    supervised = fmibridge.simulate_fmu(path, stop_time=0.4, validate=False, timeout=60)
    assert np.array_equal(np.asarray(supervised), np.asarray(plain))
    with pytest.raises(FmibridgeError, match="`validate` must be True or False"):
        fmibridge.simulate_fmu(valid, validate="no")


def test_simulate_fmu_reads_the_fmu_once(fmu_dir, monkeypatch):
    """One FmuArchive per call: the archive read for FMPy's defaults is the one
    that runs (its description read and validated once, its binary unpacked
    once), in Co-Simulation (the same samples as FMPy's) and in Model Exchange
    (the impacts at FMPy's times, within its CVode's tolerance)."""
    from fmibridge.flows.fmu_archive import FmuArchive

    made = []
    read = FmuArchive.__init__

    def counted(self, *args, **kwargs):
        made.append(args[0])
        read(self, *args, **kwargs)

    path = fmu_dir / "BouncingBallEvents.fmu"
    theirs = fmpy.simulate_fmu(path, fmi_type="CoSimulation")
    monkeypatch.setattr(FmuArchive, "__init__", counted)
    ours = fmibridge.simulate_fmu(path, fmi_type="CoSimulation")
    assert made == [path]
    assert all(np.array_equal(ours[n], theirs[n]) for n in theirs.dtype.names)
    made.clear()
    ours = fmibridge.simulate_fmu(path, fmi_type="ModelExchange")
    assert made == [path]
    monkeypatch.undo()
    t = fmpy.simulate_fmu(path, fmi_type="ModelExchange")["time"]
    repeated = t[1:][np.diff(t) == 0]  # FMPy's rows at an event, a few per event
    ours_t = np.array([e.t for e in ours.events])
    assert len(ours_t) == 1 + np.sum(np.diff(repeated) > 1e-3) > 0
    # within FMPy CVode's drift at its default relative tolerance, 1e-4
    assert np.all(np.abs(ours_t[:, None] - repeated).min(axis=1) < 1e-4)


def test_an_fmu_read_already_runs_as_read(fmu_dir):
    """`simulate` takes an FmuArchive as its model and runs it as a path runs;
    `validate` beside it is refused: the archive was validated (or not) as it
    was read."""
    from fmibridge.flows.fmu_archive import FmuArchive

    path = fmu_dir / "BouncingBall.fmu"
    ours = fmibridge.simulate(FmuArchive(path), stop_time=0.5)
    assert np.array_equal(
        np.asarray(ours), np.asarray(fmibridge.simulate(path, stop_time=0.5))
    )
    with pytest.raises(FmibridgeError, match="`validate`: an FmuArchive is validated"):
        fmibridge.simulate(FmuArchive(path), stop_time=0.5, validate=False)
    with pytest.raises(
        FmibridgeError, match="an FmuArchive or a HybridSystem, got int"
    ):
        fmibridge.simulate(3, stop_time=0.5)


def test_validate_must_be_a_flag_and_applies_to_fmus_only(fmu_dir):
    path = fmu_dir / "BouncingBall.fmu"
    with pytest.raises(FmibridgeError, match="`validate` must be True or False"):
        fmibridge.simulate(path, validate="no")
    with pytest.raises(FmibridgeError, match="`validate`: a HybridSystem has no"):
        fmibridge.simulate(bouncing_ball(), stop_time=0.5, validate=False)


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_solver_euler_takes_fmpys_forward_euler_steps(version):
    """FMPy's Euler steps from one output time to the next, so equal steps need
    output_interval = step_size; then every row agrees to round-off, while RK4
    (fmibridge's default) differs by about 1e-2."""
    path = reference(version, "VanDerPol")
    call = dict(step_size=0.01, output_interval=0.01, stop_time=2.0)
    result = fmibridge.simulate(path, solver="Euler", **call)
    ref = fmpy.simulate_fmu(path, solver="Euler", fmi_type="ModelExchange", **call)
    assert np.array_equal(result.t, ref["time"]) and len(result.t) == 201
    for name in ("x0", "x1"):
        assert np.abs(result[name] - ref[name]).max() < EULER_ATOL
    rk4 = fmibridge.simulate(path, **call)
    assert np.abs(rk4["x0"] - ref["x0"]).max() > 1e-3
    assert "'integrator': 'euler'" in result.provenance["parameters"]


def test_solver_cvode_is_cvode_and_unknown_solvers_are_refused():
    cvode = fmibridge.simulate(
        bouncing_ball(), stop_time=0.5, solver="CVode", relative_tolerance=1e-8
    )
    assert "'integrator': 'cvode'" in cvode.provenance["parameters"]
    assert abs(cvode.event_times[0] - bouncing_ball_impacts(1)[0]) < 1e-6
    with pytest.raises(FmibridgeError, match="`solver` must be FMPy's 'Euler'"):
        fmibridge.simulate(bouncing_ball(), stop_time=0.5, solver="RK45")
    with pytest.raises(FmibridgeError, match="`solver`: give it or method_options"):
        fmibridge.simulate(
            bouncing_ball(),
            stop_time=0.5,
            solver="Euler",
            method_options={"integrator": "rk4"},
        )
    with pytest.raises(FmibridgeError, match="`solver`: give it to the Method"):
        fmibridge.simulate(bouncing_ball(), method=Halving(), solver="Euler")


def test_solver_on_a_co_simulation_fmu_is_refused(fmu_dir):
    with pytest.raises(FmibridgeError, match="`solver`: a Co-Simulation FMU"):
        fmibridge.simulate(fmu_dir / "BouncingBall.fmu", fmi_type="cs", solver="Euler")


def test_relative_tolerance_is_taken_where_it_is_honoured(fmu_dir):
    """A Co-Simulation FMU's solver gets it (FMPy's meaning); on Model Exchange
    and native flows it is the rtol of Halving's adaptive steps; beside a Method
    instance it belongs in the Method."""
    path = fmu_dir / "BouncingBall.fmu"
    cs = fmibridge.simulate(path, fmi_type="cs", relative_tolerance=1e-6, stop_time=1)
    assert cs.status.is_success
    me = fmibridge.simulate(path, relative_tolerance=1e-8, stop_time=1)
    assert me.status.is_success and "1e-08" in me.provenance["tolerance"]
    native = fmibridge.simulate(bouncing_ball(), stop_time=1.0, relative_tolerance=1e-8)
    assert native.status.is_success and len(native.events) == 1
    assert abs(native.event_times[0] - bouncing_ball_impacts(1)[0]) < 1e-7
    with pytest.raises(FmibridgeError, match="its rtol, Unilateral\\(rtol"):
        fmibridge.simulate(
            bouncing_ball(), stop_time=1.0, method=Unilateral(), relative_tolerance=1e-6
        )


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_record_events_false_keeps_fmpys_rows(version):
    """Only the grid, as FMPy's Model Exchange run without event rows; the events
    stay in the Result."""
    path = reference(version, "BouncingBall")
    call = dict(stop_time=3, start_values={"h": 2}, output_interval=0.01)
    result = fmibridge.simulate(path, record_events=False, **call)
    ref = fmpy.simulate_fmu(
        path,
        record_events=False,
        fmi_type="ModelExchange",
        relative_tolerance=1e-10,
        **call,
    )
    assert np.array_equal(result.t, ref["time"]) and len(result.t) == 301
    assert np.abs(result["h"] - ref["h"]).max() < ME_ATOL
    assert len(result.events) == 5 and len(result.mode) == len(result.x) == 301
    for name, values in result.outputs.items():  # FMI 3.0: the output v
        assert np.abs(values - ref[name]).max() < ME_ATOL
    with_events = fmibridge.simulate(path, **call)
    assert len(with_events.t) == 301 + 2 * 5


def test_record_events_false_keeps_the_row_after_an_event_on_the_grid():
    """An impact that lands on a grid time: the row after the reset."""
    impact = bouncing_ball_impacts(1)[0]
    result = fmibridge.simulate(
        bouncing_ball(), stop_time=1.0, t_eval=[0.0, impact, 1.0], record_events=False
    )
    assert result.t.tolist() == [0.0, impact, 1.0]
    assert result["v"][1] > 0  # after the bounce, going up


def test_record_events_must_be_a_flag_and_needs_a_grid():
    with pytest.raises(FmibridgeError, match="`record_events` must be True or False"):
        fmibridge.simulate(bouncing_ball(), stop_time=1.0, record_events="no")
    with pytest.raises(FmibridgeError, match="every step .* includes the steps"):
        fmibridge.simulate(
            bouncing_ball(),
            stop_time=1.0,
            record_events=False,
            output_interval="steps",
        )


def test_debug_logging_prints_the_fmus_messages(fmu_dir, capsys):
    """Our FMU logs an error when a doStep needs too many substeps."""
    call = dict(fmi_type="cs", start_values={"cs_substep": 1e-14}, stop_time=1.0)
    path = fmu_dir / "BouncingBall.fmu"
    with pytest.raises(FMUError):
        fmibridge.simulate(path, **call)
    assert "substeps" not in capsys.readouterr().out  # kept for the error only
    with pytest.raises(FMUError, match="needs more than 1e\\+09 substeps"):
        fmibridge.simulate(path, debug_logging=True, **call)
    out = capsys.readouterr().out
    assert out.startswith("[BouncingBall.fmu] DoStep: h = 0.001 needs more than")


@needs_reference
@pytest.mark.parametrize("fmi_type", ["ModelExchange", "CoSimulation"])
def test_the_default_output_grid_is_fmpys(fmi_type):
    """VanDerPol over 20 s with stepSize 0.01: FMPy's 1001 rows, at its times."""
    path = reference(3, "VanDerPol")
    result = fmibridge.simulate(path, fmi_type=fmi_type)
    ref = fmpy.simulate_fmu(path, fmi_type=fmi_type)
    assert len(result.t) == len(ref) == 1001
    assert np.abs(result.t - ref["time"]).max() < 1e-12


def test_the_default_grid_is_the_step_doubled_up_to_1000_intervals():
    assert default_output_interval(3.0, 1e-3) == 4e-3  # 750 intervals
    assert default_output_interval(1.0, 1e-3) == 1e-3  # 1000: h itself
    assert default_output_interval(1.0, 0.9e-3) == 1.8e-3
    assert default_output_interval(0.5, 1.0) == 1.0  # a step longer than the run
    result = fmibridge.simulate(bouncing_ball(), stop_time=3.0)
    grid = np.arange(751) * 4e-3
    assert (
        np.abs(
            np.unique(result.t) - np.sort([*grid[:-1], 3.0, *result.event_times])
        ).max()
        < 1e-12
    )


def test_output_interval_steps_keeps_every_step_as_method_run():
    system = bouncing_ball()
    result = fmibridge.simulate(system, stop_time=1.0, output_interval="steps")
    plain = Halving(h=1e-3).run(system, 1.0)
    assert np.array_equal(result.t, plain.t) and np.array_equal(result.x, plain.x)
    with pytest.raises(FmibridgeError, match="or 'steps' \\(every step\\)"):
        fmibridge.simulate(system, stop_time=1.0, output_interval="every")


def test_the_grid_rows_are_the_steps_that_end_there():
    """Steps of 1e-3 on a grid of 2e-3: before the first impact, each grid row
    is the same RK4 step as in the run that keeps every step."""
    grid = fmibridge.simulate(bouncing_ball(), stop_time=2.0)
    steps = fmibridge.simulate(bouncing_ball(), stop_time=2.0, output_interval="steps")
    before = grid.t < grid.event_times[0]
    rows = np.searchsorted(steps.t, grid.t[before] - 1e-12)
    assert before.sum() == 226 and np.abs(steps.t[rows] - grid.t[before]).max() < 1e-12
    assert np.abs(steps.x[rows] - grid.x[before]).max() < 1e-12
