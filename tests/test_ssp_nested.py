"""An SSP with two levels of nesting, as tools export them, packed by `pack_ssp`.

fmus/systems/NestedControlledStop.ssd is ControlledStop.ssd with the plant two
systems deep (root > drive > stage > plant), its signals passed through system
connectors at each level and its parameters bound at every level. Flattened
it must run exactly as the same system flattened by hand (ControlledStop.ssd)
and as the two FMUs coupled in Python.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from fmibridge import Halving, HybridSystem, Mode
from fmibridge.cli import main
from fmibridge.flows.cosim_master import CoupledCoSimulation
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import open_fmu
from fmibridge.formats.ssp import SspError, pack_ssp, read_ssp, ssp_system

SYSTEMS = Path(__file__).resolve().parents[1] / "fmus" / "systems"
PLANT = "drive_stage_plant"
H, T_END = 0.01, 3.0


@pytest.fixture(scope="module")
def nested(fmu_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("nested") / "NestedControlledStop.ssp"
    return pack_ssp(SYSTEMS / "NestedControlledStop.ssd", fmu_dir, out)


@pytest.fixture(scope="module")
def flat(fmu_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("flat") / "ControlledStop.ssp"
    return pack_ssp(SYSTEMS / "ControlledStop.ssd", fmu_dir, out)


def run(system):
    try:
        return Halving(h=H).run(system, t_end=T_END)
    finally:
        system.close()


def by_name(result, rename=lambda name: name):
    """Every column of a Result (states and recorded variables) by name."""
    columns = {n: result.x[:, k] for k, n in enumerate(result.state_names)}
    columns.update(result.outputs)
    return {rename(n): np.asarray(v) for n, v in columns.items()}


def test_nested_systems_flatten_with_bindings_of_every_level(nested):
    structure = read_ssp(nested)
    assert structure.systems == ("root", "root.drive", "root.drive.stage")
    controller, plant = structure.components
    assert (plant.name, plant.system) == (PLANT, "root.drive.stage")
    # k: 1 in the component, 2 in stage, 4 at the root: the outermost wins
    assert plant.parameters == {"k": 4.0, "x_stop": 1.0}
    assert controller.parameters == {"Kd": 2.0, "Kp": 20.0}
    assert set(structure.connections) == {
        (f"{PLANT}.x", "controller.x_meas"),
        (f"{PLANT}.v", "controller.v_meas"),
        ("controller.F", f"{PLANT}.F"),
    }


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_nested_ssp_runs_as_flattened_by_hand_and_coupled_in_python(
    nested, flat, fmu_dir, interface
):
    ours = run(ssp_system(nested, interface=interface))
    by_hand = run(ssp_system(flat, interface=interface))
    plant = open_fmu(
        fmu_dir / "MassSpringStop.fmu", interface, parameters={"k": 4.0, "x_stop": 1.0}
    )
    controller = open_fmu(
        fmu_dir / "PositionController.fmu",
        interface,
        parameters={"Kp": 20.0, "Kd": 2.0},
    )
    flow = couple(
        {"controller": controller, PLANT: plant},
        [
            (f"{PLANT}.x", "controller.x_meas"),
            (f"{PLANT}.v", "controller.v_meas"),
            ("controller.F", f"{PLANT}.F"),
        ],
    )
    assert isinstance(flow, CoupledCoSimulation) == (interface == "cs")
    in_python = run(HybridSystem([Mode("model", flow)], "model", flow.x0))
    columns = by_name(ours)
    # every connector is recorded (the states once, as states)
    assert set(columns) == {
        "controller.z",
        f"{PLANT}.x",
        f"{PLANT}.v",
        f"{PLANT}.F",
        f"{PLANT}.gap",
        "controller.x_meas",
        "controller.v_meas",
        "controller.F",
    }
    assert len(ours.t) == T_END / H + 1 and abs(columns[f"{PLANT}.x"]).max() > 0.5
    hand = by_name(by_hand, lambda n: n.replace("plant.", f"{PLANT}."))
    python = by_name(in_python)
    for name in (f"{PLANT}.x", f"{PLANT}.v", "controller.z"):
        np.testing.assert_allclose(columns[name], hand[name], rtol=0, atol=1e-12)
        np.testing.assert_allclose(columns[name], python[name], rtol=0, atol=1e-12)
    for name in ("controller.F", "controller.x_meas"):  # recorded in both SSPs
        np.testing.assert_allclose(columns[name], hand[name], rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        columns[f"{PLANT}.F"], columns["controller.F"], rtol=0, atol=0
    )


def test_cli_runs_a_nested_ssp_with_output_and_info_lists_it(nested, tmp_path, capsys):
    out = tmp_path / "nested.csv"
    argv = ["run", str(nested), "--stop-time", "0.5", "--step-size", "0.01"]
    argv += ["--output", f"{PLANT}.a", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header == ["time", "controller.z", f"{PLANT}.x", f"{PLANT}.v"] + [
        f"{PLANT}.a",
        "mode",
    ]
    capsys.readouterr()
    assert main(["info", str(nested)]) == 0
    text = capsys.readouterr().out
    assert "system root.drive.stage: 1 component(s)" in text
    assert f"{PLANT}: resources/MassSpringStop.fmu (FMI 2.0" in text
    assert "CoSimulation: canGetAndSetFMUstate" in text
    assert f"controller.F -> {PLANT}.F" in text


def test_an_unknown_output_names_the_component(nested):
    with pytest.raises(SspError, match=r"output 'drive\.x': no component 'drive'"):
        ssp_system(nested, outputs=["drive.x"])


def edited(nested_ssd_text, fmu_dir, tmp_path, old, new):
    assert old in nested_ssd_text
    ssd = tmp_path / "SystemStructure.ssd"
    ssd.write_text(nested_ssd_text.replace(old, new, 1))
    return pack_ssp(ssd, fmu_dir, tmp_path / "edited.ssp")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'source="resources/MassSpringStop.fmu"',
            'source="resources/MassSpringStop.fmu" implementation="ModelExchange"',
            "interface 'cs' (CoSimulation): component 'drive_stage_plant' has "
            "implementation 'ModelExchange' in the SSD",
        ),
        (  # the first x connector is system drive's
            '<ssd:Connector name="x" kind="output"><ssc:Real unit="m"/>',
            '<ssd:Connector name="x" kind="output"><ssc:Real unit="mm"/>',
            "unit mismatch along one signal, drive_stage_plant.x is in 'm' and "
            "system root.drive.x in 'mm' ('m' is undefined, 'mm' is undefined)",
        ),
        (
            'startElement="stage" startConnector="v" endConnector="v"/>',
            'startElement="stage" startConnector="v" endConnector="x"/>',
            "drive_stage_plant.v and drive_stage_plant.x are joined into one signal",
        ),
        (
            'startElement="stage" startConnector="x" endConnector="x"/>',
            'startElement="stage" startConnector="y" endConnector="x"/>',
            "uses connector 'y' of system 'root.drive.stage', which that system does "
            "not declare",
        ),
    ],
)
def test_bad_nested_ssp_is_refused_naming_what(fmu_dir, tmp_path, old, new, message):
    text = (SYSTEMS / "NestedControlledStop.ssd").read_text()
    archive = edited(text, fmu_dir, tmp_path, old, new)
    with pytest.raises(SspError, match=re.escape(message)):
        ssp_system(archive, interface="cs")


TORQUE = '<ssc:Unit name="{}"><ssc:BaseUnit kg="1" m="{}" s="-2"/></ssc:Unit>'


def torque_spelled_twice(fmu_dir, tmp_path, m_of_second: int):
    """The nested SSD with the force signal's system connectors in 'Nm' (drive)
    and 'N.m' (stage), its components' connectors without a unit, and the SSD's
    Units defining 'Nm' as kg.m2.s-2 and 'N.m' with m to the `m_of_second`."""
    text = (SYSTEMS / "NestedControlledStop.ssd").read_text()
    force_in = '<ssd:Connector name="F" kind="input"><ssc:Real unit="N"/>'
    for unit in ("Nm", "N.m", None):  # drive's, stage's, then the plant's own
        spelled = f'<ssc:Real unit="{unit}"/>' if unit else "<ssc:Real/>"
        text = text.replace(
            force_in, force_in.replace('<ssc:Real unit="N"/>', spelled), 1
        )
    text = text.replace(
        '<ssd:Connector name="F" kind="output"><ssc:Real unit="N"/>',
        '<ssd:Connector name="F" kind="output"><ssc:Real/>',
    )
    units = TORQUE.format("Nm", 2) + TORQUE.format("N.m", m_of_second)
    head, tag, tail = text.rpartition("</ssd:System>")
    text = f"{head}{tag}\n  <ssd:Units>{units}</ssd:Units>{tail}"
    ssd = tmp_path / "SystemStructure.ssd"
    ssd.write_text(text)
    return pack_ssp(ssd, fmu_dir, tmp_path / "torque.ssp")


def test_units_spelled_differently_but_defined_alike_are_one_unit(
    nested, fmu_dir, tmp_path
):
    """'Nm' and 'N.m' along one signal, both kg.m2.s-2 in the SSD's Units: the
    SSP runs, and as the SSP that spells every unit alike."""
    archive = torque_spelled_twice(fmu_dir, tmp_path, m_of_second=2)
    assert read_ssp(archive).units["N.m"] == read_ssp(archive).units["Nm"]
    ours = by_name(run(ssp_system(archive, interface="cs")))
    same = by_name(run(ssp_system(nested, interface="cs")))
    assert abs(same[f"{PLANT}.x"]).max() > 0.5
    for name in (f"{PLANT}.x", "controller.F"):
        np.testing.assert_array_equal(ours[name], same[name])


def test_units_defined_differently_are_refused_naming_both(fmu_dir, tmp_path):
    archive = torque_spelled_twice(fmu_dir, tmp_path, m_of_second=1)
    with pytest.raises(SspError, match="unit mismatch along one signal") as error:
        ssp_system(archive)
    message = str(error.value)
    for part in (
        "system root.drive.F is in 'Nm'",
        "system root.drive.stage.F in 'N.m'",
        "'Nm' is kg.m2.s-2, 'N.m' is kg.m.s-2",
    ):
        assert part in message


def test_an_unknown_interface_for_an_ssp_is_an_ssp_error_naming_the_file(flat):
    """`interface` is read in any case; an unknown one is the SSP's error
    (SspError, as every problem of an SSP run), naming the file and the
    spelling meant."""
    with pytest.raises(SspError, match=r"ControlledStop\.ssp: .*got 'cosim'"):
        ssp_system(flat, interface="cosim")
    assert ssp_system(flat, interface="CS").name == ssp_system(flat).name
