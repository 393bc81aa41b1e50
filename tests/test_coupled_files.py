"""Coupled systems from files: adapters with [[components]], and SSP archives.

The SSP archive is built here from the SSD in the repository
(fmus/systems/ControlledStop.ssd) and the FMUs the fixture compiles.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmibridge import AdapterError, Halving, HybridSystem, Mode, Status
from fmibridge.cli import main
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import open_fmu
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.ssp import SspError, pack_ssp, read_ssp, ssp_system
from fmibridge.models.cradle import swing

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = ROOT / "adapters"
SSD = ROOT / "fmus" / "systems" / "ControlledStop.ssd"


@pytest.fixture
def adapters(tmp_path, fmu_dir):
    """The repository's adapters, pointed at the fixture's FMUs."""
    for path in ADAPTERS.glob("*.toml"):
        text = path.read_text().replace("../fmus/build", str(fmu_dir))
        (tmp_path / path.name).write_text(text)
    return tmp_path


@pytest.fixture
def ssp(tmp_path, fmu_dir):
    """The example SSP archive: the SSD of the repository and our FMUs."""
    return pack_ssp(SSD, fmu_dir, tmp_path / "ControlledStop.ssp")


def run(path, **options):
    with load_adapter(path, **options) as adapter:
        return adapter.run()


def test_coupled_adapter_equals_the_single_fmu_adapter(adapters):
    coupled = run(adapters / "controlled_stop.toml")
    single = run(adapters / "controlled_stop_single.toml")
    assert len(coupled.events) == len(single.events) == 7
    assert np.max(np.abs(coupled.event_times - single.event_times)) <= 1e-9
    frame = coupled.to_pandas()
    assert list(frame.columns[:5]) == [
        "plant.x", "plant.v", "controller.z", "controller.F", "controller.r",
    ]  # fmt: skip
    ours = frame[["plant.x", "plant.v", "controller.z", "controller.F"]].to_numpy()
    theirs = single.to_pandas()[["x", "v", "z", "F"]].to_numpy()
    assert np.max(np.abs(ours - theirs)) <= 1e-9


def test_co_simulation_adapter_and_overrides(adapters):
    cs = run(adapters / "controlled_stop_cs.toml")
    single = run(adapters / "controlled_stop_single.toml")
    assert "gauss-seidel" in cs.provenance["flows"]
    assert np.max(np.abs(cs.x[-1] - single.x[-1, :3])) < 1e-3
    # the same file with the components' values overridden (as sweeps do)
    stiff = run(
        adapters / "controlled_stop.toml",
        parameters={"plant.k": 8.0, "e": 0.5},
        start={"plant.x": 0.5},
        t_end=1.0,
    )
    assert stiff.x[0, 0] == 0.5
    assert "'plant.k': 8.0" in stiff.provenance["system_parameters"]


def test_newtons_cradle_adapter_runs_from_the_cli(adapters, tmp_path, capsys):
    out = tmp_path / "cradle.csv"
    code = main(["run", str(adapters / "newtons_cradle.toml"), "--no-progress",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    events = pd.read_csv(out.with_name("cradle.events.csv"))
    quarter, omega0 = swing(0.3)
    # balls 1 and 2, left at rest touching (gaps of round-off, ~1e-11 rad), may
    # graze once more about a quarter period later, with velocities ~1e-11 rad/s
    # (whether depends on the first impact's round-off): not impacts
    change = events["ball2.omega_after"] - events["ball2.omega_before"]
    first = events[(events["time"] < 2 * quarter) & (change.abs() > 1e-6)]
    assert first["edge"].tolist() == ["ball1-ball2", "ball2-ball3"]
    assert np.max(np.abs(first["time"] - quarter)) <= 1e-9
    after = first.iloc[-1]
    omegas = [after[f"ball{i}.omega_after"] for i in (1, 2, 3)]
    assert np.max(np.abs(np.array(omegas) - [0.0, 0.0, omega0])) <= 1e-9
    assert "ball1.theta" in pd.read_csv(out).columns


# -- SSP --


def test_ssp_reads_components_connections_and_parameters(ssp):
    structure = read_ssp(ssp)
    assert structure.version == "2.0" and structure.stop_time == 10.0
    assert [c.name for c in structure.components] == ["plant", "controller"]
    plant, controller = structure.components
    assert plant.parameters == {"k": 4.0, "x_stop": 1.0}
    assert controller.parameters == {"Kp": 20.0, "Kd": 2.0}  # the system's binding
    assert ("plant.F", "controller.F") in structure.connections


def test_fmibridge_run_reads_an_ssp(ssp, fmu_dir, tmp_path):
    out = tmp_path / "ssp.csv"
    code = main(["run", str(ssp), "--stop-time", "0.5", "--step-size", "0.01",
                 "--no-progress", "--out", str(out)])  # fmt: skip
    assert code == 0
    frame = pd.read_csv(out, index_col="time")
    parts = {
        "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", "me"),
        "controller": open_fmu(fmu_dir / "PositionController.fmu", "me"),
    }
    flow = couple(
        parts,
        [("plant.x", "controller.x_meas"), ("plant.v", "controller.v_meas"),
         ("controller.F", "plant.F")],
    )  # fmt: skip
    try:
        system = HybridSystem([Mode("m", flow)], "m", flow.x0)
        expected = Halving(h=0.01).run(system, 0.5)
    finally:
        flow.close()
    assert list(frame.columns[:3]) == ["plant.x", "plant.v", "controller.z"]
    assert np.max(np.abs(frame.iloc[:, :3].to_numpy() - expected.x)) <= 1e-12


def test_an_adapter_adds_the_hybrid_part_to_an_ssp(adapters, ssp):
    text = (adapters / "controlled_stop_ssp.toml").read_text()
    text = re.sub(r'ssp = ".*"', f'ssp = "{ssp}"', text)
    (adapters / "controlled_stop_ssp.toml").write_text(text)
    ours = run(adapters / "controlled_stop_ssp.toml")
    theirs = run(adapters / "controlled_stop.toml")
    assert len(ours.events) == 7
    assert np.max(np.abs(ours.event_times - theirs.event_times)) <= 1e-9
    assert np.max(np.abs(ours.x - theirs.x)) <= 1e-9


def test_an_ssp_adapter_ends_at_its_t_end_else_at_the_ssd_stop_time(adapters, ssp):
    path = adapters / "controlled_stop_ssp.toml"
    text = re.sub(r'ssp = ".*"', f'ssp = "{ssp}"', path.read_text())
    path.write_text(text.replace("t_end = 10.0", "t_end = 3.0"))
    with load_adapter(path) as adapter:
        assert adapter.t_end == 3.0
    path.write_text(text.replace("t_end = 10.0", ""))
    with load_adapter(path) as adapter:
        assert adapter.t_end == 10.0  # the DefaultExperiment's stopTime


def test_an_ssp_adapter_starts_at_the_ssd_start_time(adapters, tmp_path, fmu_dir):
    """The run starts at the DefaultExperiment's startTime, as `ssp_system`'s."""
    ssd = tmp_path / "SystemStructure.ssd"
    ssd.write_text(SSD.read_text().replace('startTime="0.0"', 'startTime="0.5"'))
    ssp = pack_ssp(ssd, fmu_dir, tmp_path / "late.ssp")
    path = adapters / "controlled_stop_ssp.toml"
    path.write_text(re.sub(r'ssp = ".*"', f'ssp = "{ssp}"', path.read_text()))
    reference = ssp_system(ssp)
    reference.close()
    with load_adapter(path, t_end=1.0) as adapter:
        assert adapter.system.t0 == reference.t0 == 0.5
        result = adapter.run()
    assert result.status is Status.REACHED_END
    assert (result.t[0], result.t[-1]) == (0.5, 1.0)


def test_parameters_from_an_ssv_file_with_a_prefix(tmp_path, fmu_dir):
    ssv = """<ssv:ParameterSet version="2.0" name="p"
        xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
      <ssv:Parameters>
        <ssv:Parameter name="k"><ssv:Float64 value="9.0"/></ssv:Parameter>
        <ssv:Parameter name="unused"><ssv:Integer value="3"/></ssv:Parameter>
      </ssv:Parameters></ssv:ParameterSet>"""
    text = SSD.read_text().replace(
        "<ssd:ParameterBindings>\n      <ssd:ParameterBinding>",
        '<ssd:ParameterBindings>\n      <ssd:ParameterBinding '
        'source="resources/plant.ssv" prefix="plant."/>\n      <ssd:ParameterBinding>',
    )  # fmt: skip
    ssd = tmp_path / "SystemStructure.ssd"
    ssd.write_text(text)
    archive = pack_ssp(ssd, fmu_dir, tmp_path / "with_ssv.ssp")
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("resources/plant.ssv", ssv)
    system = ssp_system(archive)
    try:
        values = system.mode("model").flow.parameter_values
    finally:
        system.close()
    assert values["plant.k"] == 9.0  # the system's binding wins over the component's
    assert values["controller.Kp"] == 20.0


def edited(tmp_path, fmu_dir, old, new, name="bad.ssp"):
    ssd = tmp_path / "SystemStructure.ssd"
    text = SSD.read_text()
    assert old in text
    ssd.write_text(text.replace(old, new))
    return pack_ssp(ssd, fmu_dir, tmp_path / name)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('Connector name="x" kind="output"><ssc:Real unit="m"/>',
         'Connector name="y" kind="output"><ssc:Real unit="m"/>',
         "component 'plant': connector 'y' is not a variable"),
        ('name="x" kind="output"><ssc:Real unit="m"/>',
         'name="x" kind="output"><ssc:Real unit="mm"/>',
         "connector 'x' has unit 'mm' but the FMU's variable 'm'"),
        ('name="F" kind="input"><ssc:Real unit="N"/>',
         'name="F" kind="output"><ssc:Real unit="N"/>',
         "connector 'F' has kind 'output' but the FMU's variable has causality "
         "'input'"),
        ('startConnector="v"\n                      endElement="controller" '
         'endConnector="v_meas"',
         'startConnector="x"\n                      endElement="controller" '
         'endConnector="x_meas"',
         "input controller.x_meas is connected twice, from plant.x and from plant.x"),
        ('startElement="plant" startConnector="v"',
         'startElement="plant" startConnector="x"',
         "unit mismatch, plant.x is in 'm' and controller.v_meas in 'm/s'"),
        ('version="2.0" name="ControlledStop"', 'version="3.0" name="ControlledStop"',
         "SSP version '3.0'"),
        ("<ssd:Elements>",
         '<ssd:Elements>\n<ssd:SignalDictionaryReference name="d" dictionary="s"/>',
         "system 'ControlledStop': signal dictionary references are not supported"),
        ('endElement="controller" endConnector="F"/>',
         'endConnector="F"/>', "uses connector 'F' of system 'ControlledStop', "
         "which that system does not declare"),
    ],
)  # fmt: skip
def test_bad_ssp_is_refused_naming_component_and_connector(
    tmp_path, fmu_dir, old, new, message
):
    archive = edited(tmp_path, fmu_dir, old, new)
    with pytest.raises(SspError, match=re.escape(message)):
        ssp_system(archive)


def test_an_output_connected_to_an_output_is_refused(tmp_path, fmu_dir):
    archive = edited(
        tmp_path, fmu_dir,
        'startConnector="F"\n                      endElement="controller" '
        'endConnector="F"',
        'startConnector="gap"\n                      endElement="controller" '
        'endConnector="F"',
    )  # fmt: skip
    text = (
        (tmp_path / "SystemStructure.ssd")
        .read_text()
        .replace(
            '<ssd:Connector name="F" kind="input"><ssc:Real unit="N"/></ssd:Connector>',
            '<ssd:Connector name="gap" kind="output"><ssc:Real unit="m"/>'
            "</ssd:Connector>",
        )
    )
    (tmp_path / "SystemStructure.ssd").write_text(text)
    archive = pack_ssp(tmp_path / "SystemStructure.ssd", fmu_dir, archive)
    with pytest.raises(SspError, match="controller.F is an output, not an input"):
        ssp_system(archive)


def test_an_ssp_without_its_fmu_is_refused(tmp_path, ssp):
    broken = tmp_path / "broken.ssp"
    with zipfile.ZipFile(ssp) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            if not item.filename.endswith("PositionController.fmu"):
                target.writestr(item, source.read(item))
    with pytest.raises(
        SspError,
        match="component 'controller' references resources/PositionController.fmu, "
        "which is not in the archive",
    ):
        ssp_system(broken)
    with pytest.raises(SspError, match="not an SSP"):
        ssp_system(Path(shutil.copy(ROOT / "README.md", tmp_path / "x.ssp")))


# -- bad coupled adapters: one clear error each --


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('to = "controller.x_meas"', 'to = "ctrl.x_meas"',
         "connection plant.x -> ctrl.x_meas: no component 'ctrl'"),
        ('from = "plant.v"', 'from = "plant.x"',
         "unit mismatch, plant.x is in 'm' and controller.v_meas in 'm/s'"),
        ('to = "controller.v_meas"', 'to = "controller.x_meas"',
         "input controller.x_meas is connected twice"),
        ('to = "plant.F"', 'to = "plant.gap"', "plant.gap is an output, not an input"),
        ('"plant.v" = "-plant.e * plant.v"', '"plant.vv" = "-plant.e * plant.v"',
         "the reset writes 'plant.vv', which is not a state"),
        ('guard = "plant.gap"', 'guard = "plant.gapp"',
         "unknown name(s) ['plant.gapp']"),
        ('name = "controller"\n', 'name = "controller"\ncolour = "red"\n',
         "[components[1].colour] unknown key"),
        ("MassSpringStop.fmu", "MassSpringStopp.fmu",
         "[components[0].fmu]"),
        ('parameters = { m = 1.0', 'parameters = { mass = 1.0',
         "no variable 'mass'"),
        ("[method]", "[coupling]\nscheme = \"jacobi\"\nfoo = 1\n\n[method]",
         "[coupling.foo] unknown key; allowed keys are ['inputs', 'order', 'scheme']"),
    ],
)  # fmt: skip
def test_bad_coupled_adapters_are_refused_naming_the_variable(
    adapters, old, new, message
):
    path = adapters / "controlled_stop.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(AdapterError, match=re.escape(message)):
        load_adapter(path)
