"""The defaults of a plain FMU run: chosen by the model, as FMPy's users expect.

An exporter's DefaultExperiment stepSize may be far below what a run needs
(MapleSim writes 1e-7 s): FMPy takes it as the output interval doubled until the
run has at most 1000 of them, and integrates Model Exchange FMUs with an
error-controlled solver. fmibridge's plain `simulate` does the same (adaptive
Dormand-Prince steps between events in Model Exchange, FMPy's communication step
in Co-Simulation); guards, or any stepping keyword, keep the papers' fixed steps.
"""

from __future__ import annotations

import os
import warnings

import fmpy
import numpy as np
import pytest
from test_fmu_flows import copy_fmu

import fmibridge
from fmibridge.models import bouncing_ball_impacts
from fmibridge.simulation import fmpy_communication_step

TINY_STEP = 1e-7  # s: a MapleSim export's DefaultExperiment stepSize


@pytest.fixture
def tiny_step_fmu(fmu_dir, tmp_path):
    """BouncingBallEvents (both interfaces) with stepSize 1e-7 s."""

    def rewrite(name, data):
        if name == "modelDescription.xml":
            data = data.replace(b'stepSize="0.001"', b'stepSize="1e-07"')
        return name, data

    path = tmp_path / "TinyStep.fmu"
    copy_fmu(fmu_dir / "BouncingBallEvents.fmu", path, rewrite)
    return path


def test_a_plain_co_simulation_fmu_takes_fmpys_communication_step(tiny_step_fmu):
    """1e-7 s doubled to 3.2768e-3 s (916 steps to 3 s, not 3e7); the rows of
    the grid are FMPy's, and so are the values on them."""
    result = fmibridge.simulate(tiny_step_fmu, fmi_type="CoSimulation")
    theirs = fmpy.simulate_fmu(tiny_step_fmu, fmi_type="CoSimulation")
    h = TINY_STEP * 2**15
    assert fmpy_communication_step(TINY_STEP, 3.0) == h
    assert result.stats["n_steps"] == np.ceil(3.0 / h)
    on_grid = np.append(np.diff(result.t) > 0, True)  # the grid's rows, not events'
    np.testing.assert_allclose(result.t[on_grid], theirs["time"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result["h"][on_grid], theirs["h"], atol=1e-9)


def test_a_plain_model_exchange_fmu_runs_adaptive_steps(tiny_step_fmu):
    """Error-controlled steps at the DefaultExperiment's tolerance instead of
    fixed steps of 1e-7 s: a few hundred steps, and the impacts still located to
    1e-9 s of the exact ones."""
    result = fmibridge.simulate(tiny_step_fmu, fmi_type="ModelExchange")
    assert "tolerance" in result.provenance
    assert result.stats["n_steps"] < 3_000
    impacts = result.event_times
    exact = bouncing_ball_impacts(len(impacts))
    assert len(impacts) >= 6
    assert np.max(np.abs(impacts - exact)) < 1e-9


def test_a_step_size_keeps_the_papers_fixed_steps(fmu_dir):
    """`step_size` (or guards, or a method) keeps Halving's fixed RK4 steps."""
    result = fmibridge.simulate(fmu_dir / "BouncingBallEvents.fmu", step_size=1e-3)
    assert "'integrator': 'rk4'" in result.provenance["parameters"]
    assert "tolerance" not in result.provenance
    assert result.stats["n_steps"] >= 3_000


REFERENCE_FMUS = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")


@pytest.mark.skipif(
    not os.path.isdir(REFERENCE_FMUS),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset: the Reference FMUs' Roberts",
)
def test_a_stiff_model_exchange_fmu_runs_cvode():
    """Roberts' chemistry over 1e8 s: its Jacobian's rate times the span (3e8)
    marks it stiff, so the default is CVODE's BDF (Dormand-Prince went
    non-finite at 1e5 s); it ends where fmpy's CVode at rtol 1e-6 ends."""
    path = os.path.join(REFERENCE_FMUS, "fmi3", "Roberts.fmu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the FMU's Jacobian disagrees; said there
        result = fmibridge.simulate(path, fmi_type="ModelExchange")
    assert "'integrator': 'cvode'" in result.provenance["parameters"]
    assert result.status.name == "REACHED_END"
    theirs = fmpy.simulate_fmu(path, fmi_type="ModelExchange", relative_tolerance=1e-6)
    for name in ("y1", "y3"):
        assert result[name][-1] == pytest.approx(theirs[name][-1], rel=1e-3), name


def test_the_stiffness_probe_leaves_a_ball_to_dormand_prince(fmu_dir):
    from fmibridge.flows.fmu import fmu_system
    from fmibridge.simulation import is_stiff

    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me")
    try:
        assert not is_stiff(system, 3.0)
    finally:
        system.close()
