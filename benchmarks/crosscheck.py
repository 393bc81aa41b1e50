"""Cross-check: every FMU in a folder, each interface, fmibridge against fmpy and
the exporter's own reference result.

Each FMU runs with `fmpy.simulate_fmu` and `fmibridge.simulate` with the same
keywords (fmpy's set to fmibridge's values where fmibridge takes no other,
`FMPY_AS_FMIBRIDGE`; the exporter's input table where one lies beside it,
``<stem>_in.csv``, or one of the same model at another FMI version); both
results are read on a common grid and compared on the variables they share,
each deviation relative to the signal's range, and against the reference
(``<stem>_ref.csv``) where the exporter ships one, else (Model Exchange) a
converged run, fmpy's CVode at rtol 1e-9. One line a case
(`format_outcomes`) and a summary: how many match, differ or are refused, and
the median and worst time ratio (warm runs, the least of `repeats`).
"""

from __future__ import annotations

import math
import os
import re
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .suite import BenchOptions, Row

GRID_POINTS = 501  # the common grid of a comparison (less the times at events)
MATCH_RTOL = 1e-3  # a result within this of fmpy's (of each signal's range) matches
CONVERGED_RTOL = 1e-9  # fmpy's CVode here: the reference of an ME FMU without one
INTERFACES = {"ModelExchange": "me", "CoSimulation": "cs"}
# fmpy's keywords at fmibridge's values: an FMI 3 Co-Simulation FMU with Event Mode
# runs its events there and returns early at them (fmibridge always does; fmpy's
# default leaves them inside doStep, which changes Dymola's CoupledClutches by 3e-3)
FMPY_AS_FMIBRIDGE = {"use_event_mode": True, "early_return_allowed": True}
# the folder of exported FMUs the bench section checks (as the tests find it)
FOLDER_VARIABLE = "FMIBRIDGE_REAL_FMUS"


@dataclass(frozen=True)
class Case:
    """One FMU and interface, with the exporter's input table and reference."""

    fmu: Path
    interface: str  # 'ModelExchange' or 'CoSimulation'
    inputs: Path | None
    reference: Path | None

    @property
    def name(self) -> str:
        return f"{self.fmu.stem} {INTERFACES[self.interface]}"


@dataclass(frozen=True)
class Outcome:
    """How fmibridge and fmpy ran one case (deviations: of each signal's range)."""

    case: str
    # 'match', 'nearer' (differs, nearer the reference than fmpy), 'differs',
    # 'refused' (by fmibridge), 'fmpy fails'
    verdict: str
    fmibridge_s: float
    fmpy_s: float
    fmibridge_events: int
    fmpy_events: int
    deviation: float  # fmibridge against fmpy
    fmibridge_to_reference: float  # the exporter's (NaN: none shipped)
    fmpy_to_reference: float
    fmibridge_to_converged: float  # fmpy at rtol 1e-9 (Model Exchange; else NaN)
    fmpy_to_converged: float
    detail: str = ""

    @property
    def time_ratio(self) -> float:
        return self.fmibridge_s / self.fmpy_s if self.fmpy_s > 0 else math.nan


def cases(folder: Path) -> list[Case]:
    """Every FMU in `folder` and each interface it offers, with the tables found
    beside it (`_companion`)."""
    from fmpy import read_model_description

    found = []
    for fmu in sorted(Path(folder).glob("*.fmu")):
        description = read_model_description(fmu, validate=False)
        offered = [
            name
            for name, part in (
                ("ModelExchange", description.modelExchange),
                ("CoSimulation", description.coSimulation),
            )
            if part is not None
        ]
        inputs, reference = _companion(fmu, "_in"), _companion(fmu, "_ref")
        found += [Case(fmu, interface, inputs, reference) for interface in offered]
    return found


def _companion(fmu: Path, suffix: str) -> Path | None:
    """``<stem><suffix>.csv`` beside the FMU, else that of the same model at
    another FMI version or interface (exporters ship one table per model)."""
    own = fmu.with_name(f"{fmu.stem}{suffix}.csv")
    if own.is_file():
        return own
    pattern = re.sub(r"fmi\d", "fmi*", fmu.stem)
    pattern = re.sub(r"_(me|cs)$", "_*", pattern)
    others = sorted(fmu.parent.glob(f"{pattern}{suffix}.csv"))
    return others[0] if others else None


def check(case: Case, repeats: int = 1) -> Outcome:
    """Run `case` with fmpy and fmibridge and compare them (see the module)."""

    from fmibridge.simulation import simulate

    table = None if case.inputs is None else _read(case.inputs)
    keywords: dict[str, Any] = {"fmi_type": case.interface, "input": table}
    try:
        fmpy_s, theirs = _fmpy_run(case, keywords, repeats)
    except Exception as exc:  # noqa: BLE001 - any failure of the peer is reported
        return _failed(case, "fmpy fails", exc)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours_s, ours = _timed(
                lambda: simulate(case.fmu, validate=False, **keywords),
                repeats,
            )
    except Exception as exc:  # noqa: BLE001 - a refusal is what this reports
        return _failed(case, "refused", exc, fmpy_s)
    grid = _grid_off_events(theirs, ours.event_times)
    names = [n for n in theirs.dtype.names[1:] if _is_number(theirs[n])]
    names = [n for n in names if n in ours.to_pandas().columns]
    deviation = _deviation(ours, theirs, names, grid)
    to_ref = _distances(ours, theirs, _exporters(case), names, grid)
    to_converged = _distances(ours, theirs, _converged(case, keywords), names, grid)
    verdict = "match" if deviation <= MATCH_RTOL else "differs"
    judge = to_converged if not math.isnan(to_converged[0]) else to_ref
    if verdict == "differs" and judge[0] < judge[1]:
        verdict = "nearer"  # to the converged run (else the reference) than fmpy
    return Outcome(
        case.name,
        verdict,
        ours_s,
        fmpy_s,
        len(ours.events),
        _fmpy_events(theirs),
        deviation,
        *to_ref,
        *to_converged,
        detail=str(ours.status.name),
    )


def crosscheck(folder: Path, repeats: int = 1) -> list[Outcome]:
    """Check every case of `folder` (`cases`, `check`)."""
    return [check(case, repeats) for case in cases(folder)]


def format_outcomes(outcomes: list[Outcome]) -> str:
    """One line a case, then the summary."""
    frame = pd.DataFrame([{**asdict(o), "ratio": o.time_ratio} for o in outcomes])
    lines = [frame.to_string(index=False, float_format="{:.3g}".format)]
    counts = frame["verdict"].value_counts().to_dict()
    ratios = frame["ratio"].dropna()
    lines.append(
        f"{len(frame)} cases: "
        + ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
        + (
            f"; time fmibridge / fmpy: median {ratios.median():.2f}, worst "
            f"{ratios.max():.2f}"
            if len(ratios)
            else ""
        )
    )
    return "\n".join(lines)


def _fmpy_run(case: Case, keywords: dict[str, Any], repeats: int):
    """fmpy's timed run, as fmibridge runs the FMU (`FMPY_AS_FMIBRIDGE`), else,
    where fmpy fails so (Sysplorer's FMI 3 CS in Event Mode), its default."""
    import fmpy

    def run(**flags):
        return fmpy.simulate_fmu(case.fmu, validate=False, **keywords, **flags)

    try:
        return _timed(lambda: run(**FMPY_AS_FMIBRIDGE), repeats)
    except Exception:  # noqa: BLE001 - fmpy's own failure in Event Mode
        return _timed(run, repeats)


def _timed(run, repeats: int):
    """The least wall time of `repeats` runs after a warm-up (0: the warm-up's
    own, a cold run), and the result."""
    start = time.perf_counter()
    result = run()
    best = time.perf_counter() - start if repeats == 0 else math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def _failed(case: Case, verdict: str, exc: Exception, fmpy_s=math.nan) -> Outcome:
    text = " ".join(str(exc).split())[:200]
    nan = math.nan
    return Outcome(case.name, verdict, nan, fmpy_s, 0, 0, nan, nan, nan, nan, nan, text)


def _grid_off_events(theirs, event_times: np.ndarray) -> np.ndarray:
    """GRID_POINTS times over the run less those within a grid spacing of an
    event of either run: there a signal that jumps (a bounce's speed) differs
    by its jump under any shift of the event time, however small."""
    t = theirs["time"]
    grid = np.linspace(t[0], t[-1], GRID_POINTS)
    events = np.concatenate([t[1:][np.diff(t) == 0], event_times])
    if not len(events):
        return grid
    spacing = grid[1] - grid[0]
    nearest = np.min(np.abs(grid[:, None] - events[None, :]), axis=1)
    return grid[nearest > spacing]


def _exporters(case: Case) -> np.ndarray | None:
    """The exporter's reference result, where it ships one."""
    return None if case.reference is None else _read(case.reference)


def _converged(case: Case, keywords: dict[str, Any]) -> np.ndarray | None:
    """A Model Exchange FMU's converged solution: fmpy's CVode at
    CONVERGED_RTOL (an exporter's reference may be coarse: Sysplorer's ball is
    explicit Euler at its output step, 0.2 m off at 2 s)."""
    if case.interface != "ModelExchange":
        return None
    import fmpy

    return fmpy.simulate_fmu(
        case.fmu, validate=False, relative_tolerance=CONVERGED_RTOL, **keywords
    )


def _distances(ours, theirs, reference, names, grid) -> tuple[float, float]:
    """Each run's deviation from `reference` (NaN where there is none)."""
    if reference is None:
        return math.nan, math.nan
    shared = [n for n in names if n in reference.dtype.names]
    return _deviation(ours, reference, shared, grid), _deviation(
        theirs, reference, shared, grid
    )


def _read(path: Path) -> np.ndarray:
    return np.genfromtxt(path, delimiter=",", names=True, deletechars="")


def _is_number(values) -> bool:
    return np.asarray(values).dtype.kind in "fiu"


def _on(result, name: str, grid: np.ndarray) -> np.ndarray:
    """`name` on the grid, linear between samples (the grid keeps off events)."""
    t = np.asarray(result["time"], dtype=float)
    return np.interp(grid, t, np.asarray(result[name], dtype=float))


def _deviation(ours, theirs, names: list[str], grid: np.ndarray) -> float:
    """The largest difference of the signals `names`, each of its range in
    `theirs` (1 for a constant signal); 0 where none is shared."""
    worst = 0.0
    for name in names:
        b = _on(theirs, name, grid)
        spread = float(np.ptp(b)) or 1.0
        worst = max(worst, float(np.max(np.abs(_on(ours, name, grid) - b))) / spread)
    return worst


def _fmpy_events(result) -> int:
    """Events in an fmpy result: two rows at each (Model Exchange), less the
    stop time's repeated row."""
    t = result["time"]
    return int(np.sum(np.diff(t[:-1]) == 0)) if len(t) > 2 else 0


def crosscheck_rows(options: BenchOptions) -> list[Row]:
    """The bench section: one row a case of the folder FMIBRIDGE_REAL_FMUS
    names, fmibridge's and fmpy's default runs timed side by side; errors are
    the deviation from the exporter's reference (else fmibridge's from fmpy)."""
    folder = os.environ.get(FOLDER_VARIABLE, "")
    if not Path(folder).is_dir():
        note = f"skipped: set {FOLDER_VARIABLE} to a folder of exported FMUs"
        return [Row("crosscheck", "-", math.nan, "fmpy", math.nan, math.nan,
                    math.nan, "", "", note)]  # fmt: skip
    rows = []
    for outcome in crosscheck(Path(folder), options.repeats):
        errors, against = _errors(outcome)
        rows.append(
            Row(
                outcome.case,
                f"deviation / range from {against}",
                outcome.fmibridge_s,
                "fmpy",
                outcome.fmpy_s,
                *errors,
                "simulate(fmu, input=table), defaults",
                "simulate_fmu(fmu, input=table), defaults",
                f"{outcome.verdict} ({outcome.deviation:.2g} from fmpy); events "
                f"{outcome.fmibridge_events} vs {outcome.fmpy_events}"
                + (f"; {outcome.detail}" if outcome.verdict != "match" else ""),
            )
        )
    return rows


def _errors(outcome: Outcome) -> tuple[tuple[float, float], str]:
    """Both runs' errors for the table: from the converged run (Model Exchange),
    else the exporter's reference, else fmibridge's deviation from fmpy."""
    if not math.isnan(outcome.fmpy_to_converged):
        pair = (outcome.fmibridge_to_converged, outcome.fmpy_to_converged)
        return pair, "fmpy at rtol 1e-9"
    if not math.isnan(outcome.fmpy_to_reference):
        return (outcome.fmibridge_to_reference, outcome.fmpy_to_reference), "reference"
    return (outcome.deviation, 0.0), "fmpy"
