"""State events of Model Exchange FMUs as real tools export them.

CoupledClutches (the Modelica Standard Library's drive train: three clutches that
lock and break loose) as Dymola 2025x and MWORKS.Sysplorer 2025b export it. Its
clutches' event indicators change sign where a clutch locks or breaks loose; the
FMU's event iteration then changes discrete states only, not the continuous
ones. Two causes hid these events:

- a step that ends within round-off of an output time was accepted there with
  its guards evaluated at the unrounded time; a time-dependent indicator that
  changes sign in that round-off (Sysplorer's sine input, zero at 1.25 s) then
  changed sign between one step's end and the next step's start, where no
  crossing test looks;
- an FMU event whose iteration left the continuous state unchanged was counted
  as silent and not logged, though FMI counts every indicator sign change.

The FMUs are third-party test data beside the repository
(``FMIBRIDGE_REAL_FMUS``, `.ci/run` points it at ``../shared/real-fmus``); the
tests skip, saying so, where it is unset.
"""

from __future__ import annotations

import os
from pathlib import Path

import fmpy
import numpy as np
import pytest

import fmibridge

FOLDER = Path(os.environ.get("FMIBRIDGE_REAL_FMUS", "/nonexistent"))
pytestmark = pytest.mark.skipif(
    not FOLDER.is_dir(),
    reason="FMIBRIDGE_REAL_FMUS is unset or not a folder: point it at the real "
    "exporters' FMUs (.ci/run sets it to ../shared/real-fmus)",
)

DYMOLA = "Dymola2025xR1_CoupledClutches_fmi2_Cvode"
SYSPLORER = "Sysplorer2025b_CoupledClutches_fmi2_me"
INPUTS = {DYMOLA: DYMOLA + "_in.csv", SYSPLORER: SYSPLORER + "_in.csv"}
# fmpy's CVode at this tolerance places the clutches' events to about 1e-6 s
# (at its default 1e-4, to 5e-4 s): the yardstick for event times
TIGHT_RTOL = 1e-9
EVENT_ATOL = 1e-5  # s: an event time within this of the tight fmpy run's


def _table(name: str) -> np.ndarray:
    return np.genfromtxt(FOLDER / INPUTS[name], delimiter=",", names=True)


def _fmpy_events(result: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The model's event times in an fmpy result (two rows at each event), less
    the rows of the input table where fmpy's input handling enters Event Mode
    with nothing to do (the FMU's event iteration changes nothing there)."""
    t = result["time"]
    events = t[1:][np.diff(t) == 0]
    values = table[table.dtype.names[1]]
    jumps = table["time"][1:][np.diff(values) != 0]
    at_rows = np.isin(events, table["time"]) & ~np.isin(events, jumps)
    return events[~at_rows & (events < t[-1])]  # the stop row repeats too


@pytest.fixture(scope="module", params=[DYMOLA, SYSPLORER])
def clutches(request):
    name = request.param
    path = FOLDER / f"{name}.fmu"
    tight = fmpy.simulate_fmu(
        path,
        input=_table(name),
        fmi_type="ModelExchange",
        relative_tolerance=TIGHT_RTOL,
    )
    result = fmibridge.simulate(path, input=_table(name), fmi_type="ModelExchange")
    return name, tight, result


def test_every_clutch_event_is_reported_where_a_tight_fmpy_run_places_it(clutches):
    """The events of fmpy at rtol 1e-9 (time events and the clutches' locking and
    breaking loose), each within 1e-5 s, none missing and none extra; at its
    default tolerance fmpy places some 5e-4 s off."""
    name, tight, result = clutches
    expected = _fmpy_events(tight, _table(name))
    got = result.events_frame()["time"].to_numpy()
    assert len(expected) >= 9, name  # the test data still has its events
    assert len(got) == len(expected), (name, got, expected)
    assert np.max(np.abs(got - expected)) < EVENT_ATOL, (name, got - expected)
    state_events = [e for e in result.events_frame()["edge"] if e != "time_event"]
    assert len(state_events) >= 7, name  # the clutches', not the time events only


def test_the_trajectory_follows_a_tight_fmpy_run(clutches):
    """The four inertias' speeds on fmibridge's grid, against fmpy at rtol 1e-9:
    within 2e-3 of each signal's range (a missed clutch event is 5 % off)."""
    name, tight, result = clutches
    for column in ("J1.w", "J2.w", "J3.w", "J4.w"):
        key = column if column in tight.dtype.names else column.replace(".", "_")
        reference = np.interp(result["time"], tight["time"], tight[key])
        spread = np.ptp(tight[key])
        error = np.max(np.abs(result[key] - reference)) / spread
        assert error < 2e-3, (name, column, error)


def test_sysplorer_clutches_end_as_near_its_exporters_reference_as_fmpy():
    """The exporter's own result at the stop time: fmibridge's default run within
    1e-2 of each speed's range (it was 6 % off; the reference itself is 0.8 %
    from the converged solution, fmpy at rtol 1e-9, on J4), and where it differs
    from fmpy's default run by more than 1e-3 of the range, nearer the reference."""
    path = FOLDER / f"{SYSPLORER}.fmu"
    reference = np.genfromtxt(
        FOLDER / f"{SYSPLORER}_ref.csv", delimiter=",", names=True
    )
    ours = fmibridge.simulate(path, input=_table(SYSPLORER))
    theirs = fmpy.simulate_fmu(path, input=_table(SYSPLORER))
    for key in ("J1_w", "J2_w", "J3_w", "J4_w"):
        spread = np.ptp(reference[key])
        error = abs(ours[key][-1] - reference[key][-1]) / spread
        fmpy_error = abs(theirs[key][-1] - reference[key][-1]) / spread
        assert error < 1e-2, (key, error)
        if abs(ours[key][-1] - theirs[key][-1]) / spread > 1e-3:
            assert error < fmpy_error, (key, error, fmpy_error)
