"""The cross-check of exported FMUs (`benchmarks.crosscheck`): every
FMU of the real exporters' folder, each interface, fmibridge against fmpy, the
exporter's reference and (Model Exchange) the converged run, fmpy's CVode at
rtol 1e-9. The folder is third-party test data (``FMIBRIDGE_REAL_FMUS``, set by
`.ci/run`); the tests skip, saying so, where it is unset."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.crosscheck import (
    MATCH_RTOL,
    cases,
    crosscheck,
    format_outcomes,
)

FOLDER = Path(os.environ.get("FMIBRIDGE_REAL_FMUS", "/nonexistent"))
pytestmark = pytest.mark.skipif(
    not FOLDER.is_dir(),
    reason="FMIBRIDGE_REAL_FMUS is unset or not a folder: point it at the real "
    "exporters' FMUs (.ci/run sets it to ../shared/real-fmus)",
)
CONVERGED_ATOL = 1e-5  # of a signal's range: fmibridge against the converged run


@pytest.fixture(scope="module")
def outcomes():
    return crosscheck(FOLDER, repeats=0)


def test_every_fmu_and_interface_is_a_case_with_its_tables():
    found = {case.name: case for case in cases(FOLDER)}
    assert "Dymola2025xR1_CoupledClutches_fmi3_Cvode cs" in found
    assert found["Dymola2025xR1_CoupledClutches_fmi1_Cvode cs"].inputs is not None
    assert found["Sysplorer2025b_CoupledClutches_fmi2_me me"].reference is not None
    assert found["Sysplorer2025b_BouncingBall_fmi1_me me"].inputs is None


def test_no_fmu_that_fmpy_runs_is_refused(outcomes):
    assert len(outcomes) >= 11
    failed = [o for o in outcomes if o.verdict in ("refused", "fmpy fails")]
    assert not failed, [(o.case, o.detail) for o in failed]


def test_model_exchange_is_the_converged_solution_and_at_least_fmpys(outcomes):
    """Within 1e-5 of the converged run where fmpy's default is up to 1.4e-3
    off; where the two differ by more than 1e-3, fmibridge is the nearer."""
    me = [o for o in outcomes if o.case.endswith(" me")]
    assert len(me) >= 6
    for outcome in me:
        assert outcome.fmibridge_to_converged < CONVERGED_ATOL, outcome
        assert outcome.fmibridge_events >= 1 or outcome.fmpy_events == 0, outcome
        if outcome.deviation > MATCH_RTOL:
            assert outcome.verdict == "nearer", outcome


def test_the_summary_counts_every_case(outcomes):
    text = format_outcomes(outcomes)
    assert f"{len(outcomes)} cases:" in text
    assert "time fmibridge / fmpy: median" in text


def test_co_simulation_matches_fmpy_as_it_steps_the_fmu(outcomes):
    """Every Co-Simulation case within 1e-3 of fmpy's run with the same keywords
    (the Dymola clutches' input jump at 0.9 s was 1-3 % off: it reached the FMU
    a step late)."""
    cs = [o for o in outcomes if o.case.endswith(" cs")]
    assert len(cs) >= 4
    for outcome in cs:
        assert outcome.verdict == "match", outcome
