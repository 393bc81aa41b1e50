"""Coupled systems with FMUs we did not write: the FMI standard's Reference FMUs.

Feedthrough (no states, outputs that depend directly on inputs, declared in its
ModelStructure) and Stair (no states, a time event every second) join our
plant and controller. Skipped where FMIBRIDGE_REFERENCE_FMUS is unset, as in
test_reference_fmus.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from fmibridge import Halving, HybridSystem, Mode
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import fmu_system, open_fmu
from fmibridge.flows.loops import AlgebraicLoopError

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
pytestmark = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder: point it at the "
    "Reference FMUs (.ci/run sets it to ../shared/reference-fmus)",
)
PASS = "Float64_continuous"  # Feedthrough's real input and output: y = u


def reference(version, model):
    return Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"


def plant_loop(fmu_dir, through_feedthrough=None):
    """Plant and controller (ME), the force passed through Feedthrough if given."""
    parts = {
        "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", "me"),
        "controller": open_fmu(fmu_dir / "PositionController.fmu", "me"),
    }
    connections = [("plant.x", "controller.x_meas"), ("plant.v", "controller.v_meas")]
    if through_feedthrough is None:
        connections.append(("controller.F", "plant.F"))
    else:
        parts["pass"] = open_fmu(through_feedthrough, "me")
        connections += [
            ("controller.F", f"pass.{PASS}_input"),
            (f"pass.{PASS}_output", "plant.F"),
        ]
    flow = couple(parts, connections)
    return HybridSystem([Mode("run", flow)], "run", flow.x0)


@pytest.mark.parametrize("version", [2, 3])
def test_a_stateless_feedthrough_fmu_in_the_loop_changes_nothing(fmu_dir, version):
    direct = plant_loop(fmu_dir)
    passed = plant_loop(fmu_dir, reference(version, "Feedthrough"))
    try:
        assert passed.state_names == direct.state_names  # Feedthrough has no states
        ours = Halving(h=1e-2).run(passed, 2.0)
        theirs = Halving(h=1e-2).run(direct, 2.0)
    finally:
        direct.close()
        passed.close()
    assert np.array_equal(ours.x, theirs.x)


@pytest.mark.parametrize("version", [2, 3])
def test_feedthrough_fed_back_to_itself_is_a_loop_without_solution(version):
    """y = u and u = y: every u solves it, so the loop is refused by name."""
    ft = open_fmu(reference(version, "Feedthrough"), "me")
    with pytest.raises(
        AlgebraicLoopError,
        match=rf"loop ft.{PASS}_output -> ft.{PASS}_input -> ft.{PASS}_output "
        r"has no unique solution",
    ):
        couple({"ft": ft}, [(f"ft.{PASS}_output", f"ft.{PASS}_input")])


@pytest.mark.parametrize("version", [2, 3])
def test_time_events_of_a_component_fire_in_the_coupled_system(fmu_dir, version):
    """Stair counts its time events (one a second) beside the cradle's balls."""
    path = reference(version, "Stair")
    alone = fmu_system(path, "me")
    flow = couple(
        {"stair": open_fmu(path, "me"),
         "ball": open_fmu(fmu_dir / "CradleBall.fmu", "me",
                          start={"theta": 0.2})},
        [],
    )  # fmt: skip
    coupled = HybridSystem([Mode("run", flow)], "run", flow.x0)
    try:
        a = Halving(h=0.1).run(alone, 3.5)
        b = Halving(h=0.1).run(coupled, 3.5)
        stair = flow.components[0].flow
        counter = stair.archive.variables["counter"]
        held = stair.instance.get_values(counter.type, [counter.vr], 1)[0]
    finally:
        alone.close()
        coupled.close()
    times = [e.t for e in b.events if e.edge == "time_event"]
    assert times == pytest.approx([e.t for e in a.events], abs=1e-12)
    assert times == pytest.approx([1.0, 2.0, 3.0], abs=1e-9)
    assert held == 4  # Stair starts at 1 and counts each event
