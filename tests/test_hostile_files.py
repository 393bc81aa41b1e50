"""Files that lie, and outputs that must stay whole (issue 26).

Each case is one clear error naming the file and the key or member, never a
traceback (`main` raising fails the test), and nothing unpacked first: SSDs
that are not XML or carry a DTD, systems without components or with two of
one name, archive members beyond the limits, TOML nested without end, sweep
grids of strings or of a million runs, `h = true`. Then the outputs: a
partial file has a complete one's columns, the t = 0 row is kept, and a
write killed half-way leaves no temporary file for good.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_fmu_extraction import declare_size, rebuild

from fmibridge import AdapterError, FmibridgeError, FmibridgeWarning, simulate
from fmibridge.cli import main
from fmibridge.core import limits, outputs, supervision
from fmibridge.core.outputs import write_atomically
from fmibridge.flows.fmu import open_fmu
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.ssp import SspError, read_ssp
from fmibridge.sweep import Run, Sweep, load_sweep

REPO = Path(__file__).resolve().parents[1]
SSD = """<?xml version="1.0" encoding="UTF-8"?>{doctype}
<ssd:SystemStructureDescription
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues"
    version="2.0" name="Balls">
  <ssd:System name="Balls"><ssd:Elements>{components}</ssd:Elements></ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
</ssd:SystemStructureDescription>"""
BALL = (
    '<ssd:Component name="{name}" type="application/x-fmu-sharedlibrary" '
    'source="resources/BouncingBall.fmu">{bindings}</ssd:Component>'
)
BINDING = (
    '<ssd:ParameterBindings><ssd:ParameterBinding source="resources/ball.ssv"/>'
    "</ssd:ParameterBindings>"
)
SSV = (
    '<ssv:ParameterSet version="2.0" name="p" xmlns:ssv='
    '"http://ssp-standard.org/SSP1/SystemStructureParameterValues"><ssv:Parameters>'
    '<ssv:Parameter name="g"><ssv:Real value="3.7"/></ssv:Parameter>'
    "</ssv:Parameters></ssv:ParameterSet>"
)
LAUGHS = (  # an entity that expands to a billion characters
    '\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{k} "{f"&lol{k - 1};" * 10}">'.replace("&lol0;", "&lol;")
        for k in range(1, 10)
    )
    + "]>"
)


def ssp_file(tmp_path: Path, fmu_dir: Path, ssd: str, members=None) -> Path:
    """An .ssp of `ssd`, the BouncingBall FMU and `members` ({name: bytes})."""
    path = tmp_path / "balls.ssp"
    entries = {
        "SystemStructure.ssd": ssd.encode(),
        "resources/BouncingBall.fmu": (fmu_dir / "BouncingBall.fmu").read_bytes(),
        **(members or {}),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def balls(*names: str, bindings: str = "", doctype: str = "") -> str:
    components = "".join(BALL.format(name=n, bindings=bindings) for n in names)
    return SSD.format(components=components, doctype=doctype)


def one_error(argv: list[str], capsys) -> str:
    """Run the command line: exit 2 and one error, no traceback; return it."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("fmibridge: error: ") and "Traceback" not in err, err
    return err


# -- SSP files ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ssd", "message"),
    [
        ("this is not XML", "!SystemStructure.ssd: not valid XML: syntax error"),
        (balls("ball", doctype=LAUGHS), "!SystemStructure.ssd: has a DTD (<!DOCTYPE"),
        (balls(), "!SystemStructure.ssd: the system has no ssd:Component"),
        (
            balls("ball", "ball"),
            "!SystemStructure.ssd: two components flatten to the name 'ball'",
        ),
    ],
    ids=["not-xml", "dtd", "no-components", "same-name"],
)
def test_a_bad_ssd_is_one_error_naming_it(tmp_path, fmu_dir, capsys, ssd, message):
    """One error naming the file, not a ParseError traceback or `zip() argument
    2 is shorter`; two components named alike are refused, not run as one."""
    path = ssp_file(tmp_path, fmu_dir, ssd)
    assert f"{path}{message}" in one_error(["run", str(path), "--no-progress"], capsys)


def test_an_ssv_with_a_dtd_or_not_xml_is_one_error(tmp_path, fmu_dir, capsys):
    for ssv, message in ((LAUGHS + "<a/>", "has a DTD"), ("<a>", "not valid XML")):
        ssd = balls("ball", bindings=BINDING)
        path = ssp_file(tmp_path, fmu_dir, ssd, {"resources/ball.ssv": ssv.encode()})
        argv = ["run", str(path), "--no-progress"]
        assert f"{path}!resources/ball.ssv: {message}" in one_error(argv, capsys)


def test_an_fmu_in_an_ssp_is_named_as_its_member_not_a_temporary_copy(
    tmp_path, fmu_dir, capsys
):
    """The user knows the .ssp and its member, not our temporary copy."""
    garbage = {"resources/BouncingBall.fmu": b"not a zip archive" * 10}
    path = ssp_file(tmp_path, fmu_dir, balls("ball"), garbage)
    error = one_error(["run", str(path), "--no-progress"], capsys)
    assert f"{path}!resources/BouncingBall.fmu: not an FMU (not a zip" in error
    assert "fmibridge_ssp_" not in error


def test_an_fmu_member_declared_huge_is_refused_before_extraction(tmp_path, fmu_dir):
    """The sizes the archive declares are checked before anything is written."""
    path = ssp_file(tmp_path, fmu_dir, balls("ball"), {"resources/big.fmu": b"0" * 64})
    declare_size(path, "resources/big.fmu", 1_600_000_000)
    with pytest.raises(SspError) as error:
        read_ssp(path)
    assert str(error.value).startswith(f"{path}: unpacks to ")
    assert (
        f"('resources/big.fmu' alone 1600000000), more than the limit of {2**30}"
        in (str(error.value))
    )


def test_an_ssv_beyond_the_xml_limit_is_refused_before_reading(
    tmp_path, fmu_dir, monkeypatch
):
    """An .ssv's size is checked against MAX_XML_BYTES before it is read."""
    ssv = (SSV + "<!--" + " " * 4096 + "-->").encode()  # longer than the SSD
    ssd = balls("ball", bindings=BINDING)
    path = ssp_file(tmp_path, fmu_dir, ssd, {"resources/ball.ssv": ssv})
    assert read_ssp(path).components[0].parameters == {"g": 3.7}
    monkeypatch.setattr(limits, "MAX_XML_BYTES", len(ssv) - 1)
    with pytest.raises(SspError) as error:
        read_ssp(path)
    assert str(error.value) == (
        f"{path}!resources/ball.ssv: {len(ssv)} bytes, more than the limit of "
        f"{len(ssv) - 1} bytes for a file read whole."
    )


# -- adapter files and sweep specs ----------------------------------------------


def adapter(tmp_path: Path, fmu_dir: Path, name: str, old="", new="") -> Path:
    """An adapter of the repository, pointed at the fixture's FMUs, edited."""
    text = (REPO / "adapters" / name).read_text().replace("../fmus/build", str(fmu_dir))
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


def test_a_coupled_adapter_without_components_is_one_error(tmp_path, fmu_dir, capsys):
    """One error naming [components], not a ValueError from inside."""
    path = adapter(tmp_path, fmu_dir, "controlled_stop.toml")
    text = path.read_text()
    start, end = text.index("[[components]]"), text.index("[[connections]]")
    path.write_text(text[:start] + "components = []\n\n" + text[end:])
    error = one_error(["run", str(path), "--no-progress"], capsys)
    assert "[components] lists no component; give at least one FMU." in error


def test_h_true_is_refused_naming_the_key(tmp_path, fmu_dir, capsys):
    """TOML's true is not the number 1 (Python's bool is an int)."""
    path = adapter(tmp_path, fmu_dir, "bouncing_ball.toml", "h = 1e-3", "h = true")
    error = one_error(["run", str(path), "--no-progress"], capsys)
    assert f"{path}: 1 problem(s):" in error
    assert "[method] `h` must be a finite number > 0, got True." in error
    with pytest.raises(AdapterError, match=r"\[method\] `h` must be a finite number"):
        load_adapter(path)


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_deeply_nested_toml_is_one_error(tmp_path, capsys, kind):
    """One error naming the depth, not a RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text('model = "bouncing_ball"\nx = ' + "[" * 5000 + "]" * 5000 + "\n")
    error = one_error([kind, str(path), "--no-progress"], capsys)
    assert f"{path}: a value nests tables or arrays more than 32 levels deep" in error


def nested(depth: int) -> str:
    """The SSD of the ball inside `depth` systems nested in the root system."""
    inner = BALL.format(name="ball", bindings="")
    for k in range(depth):
        inner = (
            f'<ssd:System name="s{k}"><ssd:Elements>{inner}</ssd:Elements></ssd:System>'
        )
    return SSD.format(components=inner, doctype="")


@pytest.mark.parametrize("command", [["run", "--no-progress"], ["info"]])
def test_deeply_nested_ssp_is_one_error(tmp_path, fmu_dir, capsys, command):
    """An SSP nested 3000 deep: one error naming the depth, not a RecursionError."""
    path = ssp_file(tmp_path, fmu_dir, nested(3000))
    error = one_error([command[0], str(path), *command[1:]], capsys)
    assert error == (
        f"fmibridge: error: {path}!SystemStructure.ssd: elements nest more than 200 "
        f"levels deep (at Elements ''); flatten the nested systems.\n"
    )


def test_an_ssp_nested_within_the_bound_runs(tmp_path, fmu_dir):
    result = simulate(ssp_file(tmp_path, fmu_dir, nested(90)), stop_time=0.5)
    name = "_".join(f"s{k}" for k in reversed(range(90))) + "_ball"
    assert result.state_names == (f"{name}.h", f"{name}.v")
    assert result["time"][-1] == 0.5


def sweep_spec(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text('model = "bouncing_ball"\nt_end = 0.5\n' + text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[grid]\nparameters.e = ["abc", 0.7]\n',
         "grid['parameters.e'][0] = 'abc' must be a number"),
        ("[method]\nh = true\n[grid]\nparameters.e = [0.5]\n",
         "every run: [method] `h` must be a finite number > 0, got True"),
        ("[grid]\nmethod.h = [1e-3, true]\n",
         "run 1 ({'method.h': True}): [method] `h` must be a finite number > 0"),
        ("[grid]\nt_end = [1.0, true]\n", "grid['t_end'][1] = True must be a number"),
        ("[grid]\nparameters.e = [0.5, 0.6, 0.7]\nparameters.h0 = "
         f"{list(range(1, 3501))}\n",
         "10500 runs, more than max_runs = 10000; set max_runs = 10500 in the spec "
         "(or --max-runs 10500)"),
    ],
)  # fmt: skip
def test_a_bad_sweep_grid_is_one_error_before_any_run(tmp_path, capsys, text, message):
    """Each bad grid is one error naming its key, before any run: a wrong type,
    TOML's true as a number, a grid beyond max_runs."""
    path = sweep_spec(tmp_path, text)
    argv = ["sweep", str(path), "--scheduler", "serial", "--no-progress"]
    error = one_error([*argv, "--output-dir", str(tmp_path)], capsys)
    assert f"{path}: " in error and message in error
    assert not (tmp_path / "spec.csv").exists()


def test_a_large_sweep_runs_when_confirmed(tmp_path):
    path = sweep_spec(tmp_path, f"[grid]\nparameters.h0 = {list(range(1, 10002))}\n")
    assert load_sweep(path, tmp_path, max_runs=10_001).sweep.n_runs == 10_001
    grid = {"parameters.h0": list(range(1, 10_002))}
    with pytest.raises(FmibridgeError, match="10001 runs, more than max_runs = 10000"):
        Sweep(Run("bouncing_ball"), grid)
    assert Sweep(Run("bouncing_ball"), grid, max_runs=10_001).n_runs == 10_001


def test_a_sweep_of_a_billion_runs_is_counted_and_checked_without_listing(tmp_path):
    """A 13-line spec of 10^9 runs (max_runs raised) is not listed in memory:
    its points are made when read, and its methods checked once per distinct
    setting: the bad one is the 1000th."""
    spec = sweep_spec(
        tmp_path,
        "max_runs = 1_000_000_000\n[grid]\nparameters.e = [0.5, 0.6, 0.7, 0.8]\n"
        f"parameters.h0 = {list(range(1, 251))}\nstart.v = {[0.0] * 1000}\n"
        f"method.h = {[1e-3] * 999 + [0.0]}\n",
    )
    with pytest.raises(FmibridgeError) as error:
        load_sweep(spec, tmp_path)
    assert str(error.value) == (
        f"{spec}: run 999 ({{'method.h': 0.0}}): [method] `h` must be a finite "
        f"number > 0, got 0.0."
    )
    grid = {"parameters.e": [0.5, 0.6, 0.7, 0.8], "parameters.h0": range(1, 251)}
    grid |= {"start.v": [0.0] * 1000, "method.h": [1e-3] * 1000}
    sweep = Sweep(Run("bouncing_ball"), grid, max_runs=10**9)
    assert sweep.n_runs == len(sweep.points()) == 10**9
    assert sweep.points()[-1] == {
        "parameters.e": 0.8, "parameters.h0": 250, "start.v": 0.0, "method.h": 1e-3,
    }  # fmt: skip


def test_sweep_points_are_the_runs_crossed_with_the_grid_in_order():
    grid = {"start.h": [1.0, 2.0, 3.0], "parameters.e": [0.5, 0.9]}
    runs = [{"parameters.g": 9.81}, {"parameters.g": 3.7}]
    listed = [
        {**run, **dict(zip(grid, values, strict=True))}
        for run in runs
        for values in itertools.product(*grid.values())
    ]
    points = Sweep(Run("bouncing_ball"), grid, runs).points()
    assert list(points) == listed and points[-3:] == listed[-3:]


# -- outputs -----------------------------------------------------------------------


def test_a_partial_file_has_the_columns_of_a_complete_one(tmp_path, fmu_dir, capsys):
    """A run cut short writes the columns a complete one would (`gap` here)."""
    name = "forced_oscillator.toml"
    whole = adapter(tmp_path, fmu_dir, name)
    argv = ["run", "--stop-time", "5", "--no-progress", "--out"]
    assert main(["run", str(whole), *argv[1:], str(tmp_path / "whole.csv")]) == 0
    broken = adapter(tmp_path, fmu_dir, name, '"-c * v"', '"sqrt(-c) * v"')
    assert main(["run", str(broken), *argv[1:], str(tmp_path / "cut.csv")]) == 2
    assert "math domain error" in capsys.readouterr().err
    columns = list(pd.read_csv(tmp_path / "whole.csv").columns)
    assert columns == ["time", "x", "v", "gap", "mode"]
    partial = pd.read_csv(tmp_path / "cut.partial.csv")
    assert list(partial.columns) == columns and partial["gap"].notna().all()


@pytest.mark.parametrize(
    "model",
    [None, "BouncingBallEvents.fmu", "BouncingBallEvents.fmu cs", "bouncing_ball.toml"],
)
def test_the_first_row_is_kept_with_an_output_interval_beyond_the_run(
    tmp_path, fmu_dir, model
):
    argv = ["run", "--output-interval", "10", "--no-progress"]
    if model is not None:
        name, *interface = model.split()
        path = (
            fmu_dir / name
            if name.endswith(".fmu")
            else adapter(tmp_path, fmu_dir, name)
        )
        argv += [str(path), *(["--interface", "cs"] if interface else [])]
    out = tmp_path / "run.csv"
    assert main([*argv, "--out", str(out)]) == 0
    frame = pd.read_csv(out)
    assert frame["time"].iloc[0] == 0.0 and frame["time"].iloc[-1] == 3.0


def test_a_killed_writer_leaves_no_temporary_file_for_good(tmp_path):
    """A write killed by SIGKILL cannot clean up: the next write removes its
    `.X.csv.<pid>.<hex>.tmp` once its process is gone."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    out = tmp_path / "ball.csv"
    stale = tmp_path / f".ball.csv.{dead.stdout.strip()}.0123456789ab.tmp"
    live = tmp_path / f".ball.csv.{os.getpid()}.ba9876543210.tmp"
    stale.write_text("half a fi")
    live.write_text("being written")
    write_atomically(out, lambda p: p.write_text("whole\n"))
    assert out.read_text() == "whole\n"
    assert not stale.exists() and live.exists()  # another writer may still run


# -- numbers read from an FMU (issue 42) ---------------------------------------------

REFERENCE = Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "/nonexistent"))
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)


def vanderpol_with(
    tmp_path: Path, attributes: str, name="VanDerPol.fmu", old='stepSize="1e-2"'
) -> Path:
    """The Reference VanDerPol (FMI 2.0) with the attribute `old` of its
    DefaultExperiment (startTime="0" stopTime="20" stepSize="1e-2") replaced by
    `attributes`."""
    source = REFERENCE / "fmi2" / "VanDerPol.fmu"
    with zipfile.ZipFile(source) as archive:
        xml = archive.read("modelDescription.xml").decode()
    assert old in xml
    xml = xml.replace(old, attributes)
    return rebuild(source, tmp_path / name, {"modelDescription.xml": xml})


# a bad DefaultExperiment value, the VanDerPol attribute it replaces (or joins),
# the keyword that gives it explicitly and a value for that keyword
BAD_EXPERIMENT = {
    "tolerance=-1": ('tolerance="-1"', 'stepSize="1e-2"', "relative_tolerance", 1e-6),
    "stepSize=0": ('stepSize="0"', 'stepSize="1e-2"', "step_size", 1e-2),
    "startTime=NaN": ('startTime="NaN"', 'startTime="0"', "start_time", 0.0),
    "stopTime=INF": ('stopTime="INF"', 'stopTime="20"', "stop_time", 2.0),
}


@needs_reference
@pytest.mark.parametrize("case", list(BAD_EXPERIMENT))
@pytest.mark.parametrize("fmi_type", ["me", "cs"])
def test_a_bad_default_experiment_value_yields_to_its_keyword(tmp_path, case, fmi_type):
    """A bad attribute is used only where no keyword replaces it: given the
    keyword, the run goes, warns once naming the attribute, and equals the run
    of the valid FMU given the same keywords; without it, it is refused naming
    the attribute."""
    bad_value, old, keyword, value = BAD_EXPERIMENT[case]
    joined = bad_value if bad_value.split("=")[0] in old else f"{old} {bad_value}"
    bad = vanderpol_with(tmp_path, joined, old=old)
    good = vanderpol_with(tmp_path, old, "Good.fmu", old=old)
    keywords = {"fmi_type": fmi_type, "stop_time": 2.0, keyword: value}
    with pytest.warns(FmibridgeWarning) as caught:
        ours = simulate(bad, **keywords)
    named = [w for w in caught if f"<DefaultExperiment {bad_value}>" in str(w.message)]
    assert len(named) == 1 and f"`{keyword}` = {value!r} is used" in str(
        named[0].message
    )
    reference = simulate(good, **keywords)
    assert ours.status.name == "REACHED_END" and ours.t[-1] == 2.0
    assert np.array_equal(ours.x, reference.x)
    del keywords[keyword]
    with pytest.raises(FmibridgeError, match=f"<DefaultExperiment {bad_value}>"):
        simulate(bad, **keywords)


@needs_reference
@pytest.mark.parametrize("case", ["startTime=NaN", "stopTime=INF"])
def test_fmpys_front_door_reads_a_time_only_where_not_given(tmp_path, case):
    """fmibridge.simulate_fmu (FMPy's signature) takes start_time and stop_time
    before the DefaultExperiment's: a bad one given so is ignored (warned)."""
    from fmibridge import simulate_fmu

    bad_value, old, _, _ = BAD_EXPERIMENT[case]
    bad = vanderpol_with(tmp_path, bad_value, old=old)
    good = vanderpol_with(tmp_path, old, "Good.fmu", old=old)
    keywords = {"start_time": 0.0, "stop_time": 2.0}
    with pytest.warns(FmibridgeWarning, match=f"<DefaultExperiment {bad_value}>"):
        ours = simulate_fmu(bad, **keywords)
    assert np.array_equal(ours.x, simulate_fmu(good, **keywords).x)


@needs_reference
@pytest.mark.parametrize(
    "attribute, value", [("tolerance", "-1"), ("tolerance", "0"), ("stepSize", "0")]
)
@pytest.mark.parametrize("fmi_type", ["me", "cs"])
def test_a_bad_default_experiment_number_is_refused_naming_it(
    tmp_path, attribute, value, fmi_type
):
    """A tolerance <= 0 would let an adaptive integrator accept every step, and
    either number would reach a Co-Simulation FMU's solver as is: refused."""
    path = vanderpol_with(tmp_path, f'{attribute}="{value}"')
    with pytest.raises(FmibridgeError) as error:
        simulate(path, fmi_type=fmi_type, solver="CVode" if fmi_type == "me" else None)
    assert str(error.value) == (
        f'{path}: <DefaultExperiment {attribute}="{value}"> in modelDescription.xml '
        f"must be a finite number > 0; the FMU is malformed (export it again with "
        f"a valid {attribute}, or without it)."
    )


@needs_reference
def test_a_default_experiment_tolerance_is_the_runs_tolerance(tmp_path):
    """A valid tolerance is read: the run equals one given it as a keyword."""
    path = vanderpol_with(tmp_path, 'tolerance="1e-7"')
    keywords = {"stop_time": 2.0, "output_interval": "steps"}
    keywords["method_options"] = {"integrator": "dopri5"}  # the run
    read = simulate(path, **keywords)
    given = simulate(path, relative_tolerance=1e-7, **keywords)
    default = simulate(vanderpol_with(tmp_path, "", "Default.fmu"), **keywords)
    assert np.array_equal(read.x, given.x)
    assert not np.array_equal(read.x, default.x)


DERIVATIVES = {  # our ball's derivatives (der(h), der(v)) as each version lists them
    "BouncingBall.fmu": ('<Unknown index="9" />', '<Unknown index="10" />'),
    "BouncingBall_fmi3.fmu": (
        '<ContinuousStateDerivative valueReference="8" />',
        '<ContinuousStateDerivative valueReference="9" />',
    ),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_listed_out_of_state_order_are_refused(tmp_path, fmu_dir, name):
    """States are matched to derivatives by position (FMI 2.0, sec. 2.2.8): in
    another order every column and guard would read the wrong state, silently."""
    first, second = DERIVATIVES[name]
    with zipfile.ZipFile(fmu_dir / name) as archive:
        xml = archive.read("modelDescription.xml").decode()
    block = xml[xml.index(first) : xml.index(second) + len(second)]
    swapped = block.replace(first, "@").replace(second, first).replace("@", second)
    path = rebuild(
        fmu_dir / name,
        tmp_path / name,
        {"modelDescription.xml": xml.replace(block, swapped)},
    )
    with pytest.raises(FmibridgeError) as error:
        simulate(path, stop_time=1.0)
    assert str(error.value) == (
        f"{path}: after initialisation the state vector (GetContinuousStates) is "
        f"[1.0, 0.0], but the states ['v', 'h'] hold [0.0, 1.0]: the model "
        f"description lists its Derivatives ['der(v)', 'der(h)'] in another order "
        f"than its state vector; the FMU is malformed (export it again)."
    )


def with_zeros(source: Path, target: Path, size: int) -> Path:
    """A copy of the FMU `source` with a member of `size` zero bytes, deflated."""
    with zipfile.ZipFile(source) as src:
        members = {m.filename: src.read(m) for m in src.infolist()}
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in {**members, "resources/zeros.bin": bytes(size)}.items():
            archive.writestr(name, data)
    return target


def test_a_zip_bomb_is_refused_by_its_ratio_before_anything_is_written(
    tmp_path, fmu_dir, monkeypatch
):
    """An FMU in an SSP compressed 1000:1 is refused by its declared ratio,
    before its members are unpacked to the temporary folder."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    bomb = with_zeros(fmu_dir / "BouncingBall.fmu", tmp_path / "Bomb.fmu", 8 * 2**20)
    with zipfile.ZipFile(bomb) as archive:
        packed = archive.getinfo("resources/zeros.bin").compress_size
    assert 8 * 2**20 > 100 * packed  # deflate packs zeros about 1000:1
    with pytest.raises(FmibridgeError) as error:
        simulate(bomb, stop_time=1.0)
    assert str(error.value) == (
        f"{bomb}!resources/zeros.bin: unpacks to {8 * 2**20} bytes from {packed}, "
        f"more than 100 times its compressed size (a zip bomb?); set "
        f"FMIBRIDGE_MAX_COMPRESSION_RATIO to allow it."
    )
    ssp = ssp_file(
        tmp_path,
        fmu_dir,
        balls("ball"),
        {"resources/BouncingBall.fmu": bomb.read_bytes()},
    )
    with pytest.raises(FmibridgeError) as error:
        simulate(ssp, stop_time=1.0)
    inner = f"{ssp}!resources/BouncingBall.fmu!resources/zeros.bin"
    assert f"{inner}: unpacks to {8 * 2**20} bytes from {packed}," in str(error.value)
    assert list(temp.iterdir()) == []


def test_the_folders_of_a_killed_process_are_removed_by_the_next(
    tmp_path, fmu_dir, monkeypatch
):
    """A process killed outright (SIGKILL) cannot remove its unpacked FMUs and its
    supervised child's folder: the next process does, once their owner is gone."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(outputs, "_SWEPT", set())
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid = dead.stdout.strip()
    names = [f"fmibridge_{pid}_a", f"fmibridge_{os.getpid()}_b",
             f"fmibridge_worker_{pid}_c", f"other_{pid}_d"]  # fmt: skip
    own = temp / f"fmibridge-{os.getuid()}"  # fmibridge's folder (`core.outputs`)
    for name in names:
        (own / name / "resources").mkdir(parents=True)
    open_fmu(fmu_dir / "BouncingBall.fmu", "me").close()
    assert sorted(p.name for p in own.iterdir()) == sorted(names[1:])
    with supervision.Supervisor() as supervisor:
        assert supervisor.call(pow, {"base": 2, "exp": 10}) == 1024
    assert sorted(p.name for p in own.iterdir()) == sorted([names[1], names[3]])


def test_a_link_planted_as_fmibridges_own_folder_is_refused(
    tmp_path, fmu_dir, monkeypatch
):
    """fmibridge's folder in a shared temporary directory is made mode 0o700;
    a link planted in its place (another user's folder behind it) is refused,
    naming it, and nothing is unpacked behind it."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    open_fmu(fmu_dir / "BouncingBall.fmu", "me").close()
    own = temp / f"fmibridge-{os.getuid()}"
    assert own.stat().st_mode & 0o777 == 0o700
    own.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    own.symlink_to(elsewhere)
    with pytest.raises(FmibridgeError) as error:
        open_fmu(fmu_dir / "BouncingBall.fmu", "me")
    assert str(error.value).startswith(
        f"{own}: fmibridge's temporary folder is not a folder of this user's"
    )
    assert list(elsewhere.iterdir()) == []
