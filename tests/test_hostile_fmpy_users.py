"""Bad input as a user switching over from FMPy gives it: FMPy's keywords at odd
values, odd containers and odd model files. Each gets one FmibridgeError that
names the keyword, variable or file, never a raw traceback or a wrong number.
"""

import math
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from test_fmu_extraction import rebuild

from fmibridge import (
    AdapterError,
    FmibridgeError,
    FmibridgeWarning,
    simulate,
    simulate_fmu,
)
from fmibridge.formats.ssp import SspError, pack_ssp

REPO = Path(__file__).resolve().parents[1]


def edited(fmu: Path, target: Path, pattern: str, new: str) -> Path:
    """A copy of `fmu` whose model description has `pattern` (found once)
    replaced by `new`."""
    with zipfile.ZipFile(fmu) as archive:
        xml = archive.read("modelDescription.xml").decode()
    xml, n = re.subn(pattern, new, xml)
    assert n == 1
    return rebuild(fmu, target, {"modelDescription.xml": xml})


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"stop_time": math.inf}, "`stop_time` must be a finite time after t0"),
        ({"stop_time": "inf"}, "`stop_time` must be a finite time after t0"),
        ({"start_time": -math.inf}, "`start_time` must be a finite number, got -inf"),
        ({"start_time": 10**400}, "`start_time` must be a finite number, got 1"),
    ],
)
def test_an_infinite_span_is_refused_before_fmpys_grid(fmu_dir, keywords, message):
    """FMPy's default grid doubles the step until the span has 1000 intervals:
    an infinite span is refused by name before that loop (it overflowed)."""
    with pytest.raises(FmibridgeError, match=message):
        simulate_fmu(fmu_dir / "BouncingBall.fmu", **keywords)


@pytest.mark.parametrize("value", [math.nan, "nan", -1.0])
def test_a_nan_timeout_is_refused_before_the_supervised_run(fmu_dir, value):
    """A NaN `timeout` reached the supervisor's wait (a ValueError from
    selectors); it is refused by name as 0 and -1 are."""
    with pytest.raises(FmibridgeError, match="`timeout` must be a finite number > 0"):
        simulate_fmu(fmu_dir / "BouncingBall.fmu", timeout=value)


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"start_values": [("g", 3.0)]}, "`start_values` must be a mapping of"),
        ({"parameters": 5}, "`parameters` must be a mapping of variable name"),
        ({"output": "he"}, r"got 'he' \(for one variable, \['he'\]\)"),
        ({"output": 5}, "`output` must be a list of variable names, got 5"),
    ],
)
def test_names_in_the_wrong_container_are_refused_naming_the_keyword(
    fmu_dir, keywords, message
):
    """A list of pairs as `start_values` raised AttributeError; `output="he"`
    recorded 'h' and 'e' (a str read letter by letter) and `output=5` raised
    TypeError."""
    with pytest.raises(FmibridgeError, match=message):
        simulate(fmu_dir / "BouncingBall.fmu", stop_time=0.1, **keywords)


@pytest.mark.parametrize(
    "version, value", [("", 2**32 + 1), ("", -(2**31) - 1), ("_fmi3", 2**40)]
)
def test_an_integer_beyond_its_c_type_is_refused_not_wrapped(fmu_dir, version, value):
    """FMI 2.0's Integer is a C int: 2**32 + 1 reached the FMU as 1 (the
    `use_input` switch turned on, silently; -2**31 - 1 as 2**31 - 1, and FMI
    3.0's Int32 2**40 as 0). It is refused naming the variable and the type's
    range; the range's ends are set as given."""
    path = fmu_dir / f"ForcedOscillatorWithStop{version}.fmu"
    message = "start value 'use_input' is stored as Int32, -2147483648 to 2147483647"
    with pytest.raises(FmibridgeError, match=message):
        simulate(path, stop_time=0.01, start_values={"use_input": value})
    for end in (2**31 - 1, -(2**31)):
        calls = []
        simulate(
            path, stop_time=0.01, start_values={"use_input": end},
            fmi_call_logger=calls.append,
        )  # fmt: skip
        assert any("SetInt" in call and f"=[{end}]" in call for call in calls)


@pytest.mark.parametrize(
    "version, validate, old, new, message",
    [
        ("_fmi3", True, '"v" valueReference="2"', '"v" valueReference="1"',
         "variables 'h' and 'v' share valueReference 1; a get of one reads the other"),
        ("", False, '"v" valueReference="2"', '"v" valueReference="-2"',
         "variable 'v' has valueReference '-2'; it must be an integer from 0 to 4294"),
        ("", False, '"v" valueReference="2"', '"v"',
         "variable 'v' has valueReference None; it must be an integer from 0 to 4294"),
        ("", False, '"v" valueReference="2"', '"v" valueReference="\u00b2"',
         "variable 'v' has valueReference '\u00b2'; it must be an integer from 0"),
    ],
)  # fmt: skip
def test_a_value_reference_shared_or_out_of_range_is_refused_naming_it(
    fmu_dir, tmp_path, version, validate, old, new, message
):
    """FMI 3.0 variables have unique valueReferences: a shared one raised
    KeyError 2 from fmpy ('unreadable modelDescription.xml: 2'); valueReference
    -2 with validate=False an OverflowError."""
    name = f"BouncingBall{version}.fmu"
    path = edited(fmu_dir / name, tmp_path / name, old, new)
    with pytest.raises(FmibridgeError, match=re.escape(f"{path}: {message}")):
        simulate_fmu(path, stop_time=0.1, validate=validate)


def test_fmi2_aliases_that_both_have_a_start_value_run_with_a_warning(
    fmu_dir, tmp_path
):
    """FMI 2.0 aliases share a valueReference, but at most one of them has a
    start value: 'v' made an alias of 'h' passes fmpy's validation and runs
    there, so it runs here too (as fmpy runs it, v's column holding h), and a
    warning names both variables."""
    path = edited(
        fmu_dir / "BouncingBall.fmu",
        tmp_path / "BouncingBall.fmu",
        '"v" valueReference="2"',
        '"v" valueReference="1"',
    )
    message = "variables 'h' and 'v' share valueReference 1 and both have a start"
    with pytest.warns(FmibridgeWarning, match=re.escape(f"{path}: {message}")):
        result = simulate_fmu(path, stop_time=0.1, fmi_type="CoSimulation")
    np.testing.assert_array_equal(result["v"], result["h"])
    assert result["h"][0] == 1.0 and result["h"][-1] < 1.0


def ball_adapter(tmp_path: Path, fmu_dir: Path, old: str, new: str) -> Path:
    """The README's ball adapter in tmp_path, with `old` (found once) as `new`."""
    text = (REPO / "adapters" / "bouncing_ball.toml").read_text()
    text = text.replace('"../fmus/build/', f'"{fmu_dir}/')
    assert text.count(old) == 1
    path = tmp_path / "ball.toml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("guard", ["5", "1 + e", "0", "g * m"])
def test_a_guard_of_parameters_only_is_refused_naming_it(fmu_dir, tmp_path, guard):
    """A guard that reads no state, output, input or t never changes sign: the
    edge silently never fired (the ball fell through the floor to h < 0)."""
    toml = guard if guard == "5" else f'"{guard}"'  # a number, or an expression
    path = ball_adapter(tmp_path, fmu_dir, 'guard = "h"', f"guard = {toml}")
    with pytest.raises(AdapterError) as error:
        simulate(path, stop_time=1.0)
    assert f"[edges[0].guard] {guard!r} reads no state" in str(error.value)
    assert str(path) in str(error.value)


def test_two_edges_of_one_mode_with_one_name_are_refused(fmu_dir, tmp_path):
    """A copied [[edges]] block kept its name: the event table then named two
    different guards 'floor'. Edges of different modes may share a name (the
    Pronk's touchdowns), edges of one mode may not."""
    second = '\n[[edges]]\nname = "floor"\nguard = "h + 1"\nreset = { v = "-v" }\n'
    path = ball_adapter(tmp_path, fmu_dir, "[constraint]", f"{second}\n[constraint]")
    with pytest.raises(AdapterError) as error:
        simulate(path, stop_time=1.0)
    assert "[edges[1].name] 'floor' names edges[0] of mode 'model' too" in str(
        error.value
    )


def test_an_ssp_parameter_in_another_unit_is_refused_not_set_as_given(
    fmu_dir, tmp_path
):
    """x_stop = 1000 'mm' was set as 1000 (the FMU's 'm'): the plant's gap
    read 1000 m at x = 0, and a stop on it never fired, silently. fmibridge does
    not convert units, so a value in another unit than its variable's is refused."""
    ssd = (REPO / "fmus" / "systems" / "ControlledStop.ssd").read_text()
    old = '<ssv:Real value="1.0" unit="m"/>'
    assert ssd.count(old) == 1
    edited_ssd = tmp_path / "SystemStructure.ssd"
    edited_ssd.write_text(ssd.replace(old, '<ssv:Real value="1000.0" unit="mm"/>'))
    archive = pack_ssp(edited_ssd, fmu_dir, tmp_path / "ControlledStop.ssp")
    message = (
        f"{archive}: component 'plant': parameter 'x_stop' is given in 'mm' but "
        f"the FMU's variable is in 'm'"
    )
    with pytest.raises(SspError, match=re.escape(message)):
        simulate(archive, stop_time=0.5, fmi_type="me")


@pytest.mark.parametrize("given, meant", [("CS", "cs"), ("modelexchange", "me")])
def test_fmi_type_in_any_case_runs_as_its_interface(fmu_dir, given, meant):
    """simulate_fmu took fmi_type='CS' as Co-Simulation for its defaults, then
    `simulate` refused it ("must be 'me' or 'cs', got 'CS'"); the command line
    took any case. Every front door now reads the interface in any case."""
    path = fmu_dir / "BouncingBall.fmu"
    ours = simulate_fmu(path, stop_time=0.1, fmi_type=given)
    assert np.array_equal(
        np.asarray(ours), np.asarray(simulate_fmu(path, stop_time=0.1, fmi_type=meant))
    )
    kind = {"cs": "CoSimulation", "me": "ModelExchange"}[meant]
    assert f"flow=fmu:{kind}," in ours.provenance["flows"]


def test_a_misspelled_fmi_type_names_fmpys_keyword_and_the_name_meant(fmu_dir):
    with pytest.raises(FmibridgeError) as error:
        simulate(fmu_dir / "BouncingBall.fmu", fmi_type="Co-Simulation")
    assert "`interface` (FMPy's `fmi_type`) must be 'me' or 'cs'" in str(error.value)
    assert "got 'Co-Simulation' (did you mean 'CoSimulation'?)" in str(error.value)


@pytest.mark.parametrize("path", [None, "", "."])
def test_to_csv_without_a_file_name_is_refused_naming_it(fmu_dir, path):
    """pandas' `to_csv(None)` returns the text; a Result's raised TypeError
    (None) or ValueError ('': "PosixPath('.') has an empty name")."""
    result = simulate_fmu(fmu_dir / "BouncingBall.fmu", stop_time=0.1)
    with pytest.raises(FmibridgeError, match=re.escape(f"Cannot write {path!r}: give")):
        result.to_csv(path)


@pytest.mark.parametrize("filename", [None, 3])
def test_simulate_fmu_of_no_path_names_filename(filename):
    """`simulate_fmu(None)` raised Path's TypeError."""
    message = f"`filename` must be the path of an FMU (.fmu), got {filename!r}."
    with pytest.raises(FmibridgeError, match=re.escape(message)):
        simulate_fmu(filename)


@pytest.mark.parametrize("t_eval", ["abc", ["0.1", "x"], {"t": 0.1}])
def test_t_eval_that_is_not_numbers_is_refused_naming_it(fmu_dir, t_eval):
    """A str or dict `t_eval` raised numpy's ValueError/TypeError from the
    conversion before OutputGrid's check."""
    with pytest.raises(FmibridgeError, match="`t_eval` must be finite, strictly"):
        simulate(fmu_dir / "BouncingBall.fmu", stop_time=0.5, t_eval=t_eval)


@pytest.mark.parametrize("fmi_type", ["ModelExchange", "CoSimulation"])
def test_simulate_fmus_record_events_must_be_a_flag(fmu_dir, fmi_type):
    """simulate_fmu passed `record_events and not is_cs`, so 'no' recorded
    event rows (a truthy str) where `simulate` refuses it."""
    with pytest.raises(FmibridgeError, match="`record_events` must be True or False"):
        simulate_fmu(
            fmu_dir / "BouncingBall.fmu", record_events="no", fmi_type=fmi_type
        )


def test_an_event_indicator_count_beyond_memory_is_refused_naming_it(fmu_dir, tmp_path):
    """numberOfEventIndicators="4000000000" passes FMI 2.0's schema (an
    unsigned int) and raised numpy's MemoryError (29.8 GiB) when the Model
    Exchange instance made its buffer."""
    name = "BouncingBall.fmu"
    path = edited(
        fmu_dir / name, tmp_path / name,
        'numberOfEventIndicators="0"', 'numberOfEventIndicators="4000000000"',
    )  # fmt: skip
    message = f"{path}: numberOfEventIndicators = 4000000000 in modelDescription.xml"
    with pytest.raises(FmibridgeError, match=re.escape(message)):
        simulate_fmu(path, fmi_type="ModelExchange")
