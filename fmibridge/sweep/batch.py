"""Running a sweep: every run on Dask, one summary row each, trajectories on request.

Each run runs in a supervised process of its worker (`core.supervision`): an FMU
that crashes, exits or hangs past the run's `timeout` ends that run only, whose
row says what happened, with the samples it had reached.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..core import supervision
from ..core.errors import FmibridgeError, FmibridgeWarning, Terminated
from ..core.limits import TIMEOUT_GRACE_S
from ..core.outputs import check_output_folder, write_atomically
from ..core.recorder import recording
from ..core.records import Status
from ..core.result import Result
from ..core.time_limit import time_limit
from .execution import iter_runs
from .metrics import metric_named
from .runs import Run, build
from .spec import Sweep

FORMATS = ("csv", "parquet")
INTEGER_COLUMNS = ("n_events", "n_steps", "n_rejected")  # NA, not NaN, for failed runs
ERROR = "ERROR"  # `status` of a run that raised, or whose process died
NOT_RUN = "NOT_RUN"  # `status` of a run that Ctrl-C or SIGTERM kept from finishing
SUMMARY_COLUMNS = tuple(
    "status n_events first_event_time last_event_time t_final n_steps n_rejected "
    "wall_time_s error".split()
)


def run_one(
    run: Run,
    metrics: Sequence[str] = (),
    *,
    trajectory: bool = False,
    timeout: float | None = None,
) -> dict:
    """Run one `Run`; return its summary row (and its samples if `trajectory`).

    An early stop (max_events, `timeout` s of wall time) is a status, not an error.
    """
    system, method, t_end = build(run)
    try:
        with warnings.catch_warnings(), time_limit(timeout):
            warnings.simplefilter("ignore", FmibridgeWarning)  # the status says it
            result = method.run(system, t_end)
    finally:
        system.close()
    row = _stats(result)
    for name in metrics:
        row[name] = float(metric_named(name)(result, run))
    return {"row": row, "trajectory": result.to_pandas() if trajectory else None}


def run_supervised(
    run: Run,
    metrics: Sequence[str] = (),
    *,
    trajectory: bool = False,
    timeout: float | None = None,
) -> dict:
    """`run_one` in this thread's supervised process; a run whose process died
    or hung past `timeout` gets a row saying so, with the samples it reached."""
    call = dict(run=run, metrics=tuple(metrics), trajectory=trajectory, timeout=timeout)
    with recording() as record:
        try:
            return supervision.shared().call(
                run_one, call, timeout=timeout, grace=TIMEOUT_GRACE_S, what=run.model
            )
        except supervision.ProcessDied as exc:
            late = isinstance(exc, supervision.TimeLimitExceeded)
            partial = record.result(Status.TIME_LIMIT if late else Status.FAILED, {})
            error = str(exc)
    row = {} if partial is None else _stats(partial)
    row.update(status=Status.TIME_LIMIT.name if late else ERROR, error=error)
    frame = partial.to_pandas() if trajectory and partial is not None else None
    return {"row": row, "trajectory": frame}


def _stats(result: Result) -> dict[str, Any]:
    """The summary columns of a run's Result."""
    times = result.event_times
    return {
        "status": result.status.name,
        "n_events": len(times),
        "first_event_time": float(times[0]) if len(times) else math.nan,
        "last_event_time": float(times[-1]) if len(times) else math.nan,
        "t_final": float(result.t[-1]),
        "n_steps": result.stats["n_steps"],
        "n_rejected": result.stats["n_rejected"],
    }


@dataclass(frozen=True)
class SweepResult:
    """Per-run summaries, and the trajectories if they were asked for.

    `summary` has one row per run (index `run`, the position in
    `Sweep.expand()`): the varied settings, then SUMMARY_COLUMNS (`status` a
    `Status` name, ``"ERROR"``, or ``"NOT_RUN"`` for a run an interrupted sweep
    did not finish) and one column per metric. `trajectories` is a long
    DataFrame (column `run`, then `time`, the states and `mode`) or None.
    """

    summary: pd.DataFrame
    trajectories: pd.DataFrame | None = None
    is_interrupted: bool = False  # by Ctrl-C or SIGTERM
    is_terminated: bool = False  # by SIGTERM


def run_sweep(
    sweep: Sweep,
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    trajectories: bool | str | Path = False,
    file_format: str = "csv",
    progress: bool = False,
    timeout: float | None = None,
) -> SweepResult:
    """Run every point of `sweep` on Dask, each in a supervised process, and
    gather the summaries.

    Parameters
    ----------
    sweep : Sweep
    scheduler, workers, progress
        As in `map_runs`.
    trajectories : bool or path
        True: return every run's samples as one long DataFrame. A folder: write
        ``run_00007.csv`` (or ``.parquet``) there per run as it finishes.
    file_format : {'csv', 'parquet'}
        Format of the trajectory files; parquet needs pyarrow.
    timeout : float, optional
        Seconds of wall time per run: the run stops there with status
        TIME_LIMIT (and is killed soon after if an FMU's code hangs).

    Returns
    -------
    SweepResult
        On Ctrl-C (or SIGTERM), `is_interrupted` set and the runs not finished
        with status NOT_RUN.
    """
    folder = _trajectory_folder(trajectories, file_format)
    options = {"metrics": tuple(sweep.metrics), "trajectory": bool(trajectories)}
    calls = [{"run": r, **options, "timeout": timeout} for r in sweep.expand()]
    rows: dict[int, dict[str, Any]] = {}
    frames: dict[int, pd.DataFrame] = {}
    outcomes = iter_runs(
        run_supervised, calls, scheduler=scheduler, workers=workers, progress=progress
    )
    interrupt = None
    try:
        with contextlib.closing(outcomes):
            for i, outcome in outcomes:
                value = outcome.value if outcome.is_ok else {"row": {"status": ERROR}}
                row = {"error": outcome.error or "", **value["row"]}
                rows[i] = row | {"wall_time_s": outcome.wall_time_s}
                frame = value.get("trajectory")
                if frame is not None and folder is not None:
                    path = folder / f"run_{i:05d}.{file_format}"
                    write_atomically(path, getattr(frame, f"to_{file_format}"))
                elif frame is not None:
                    frames[i] = frame
    except KeyboardInterrupt as exc:
        interrupt = exc
    return SweepResult(
        _summary(sweep.points(), rows, sweep.metrics),
        _long(frames) if frames else None,
        interrupt is not None,
        isinstance(interrupt, Terminated),
    )


def _summary(
    points, rows: dict[int, dict[str, Any]], metrics: Sequence[str]
) -> pd.DataFrame:
    """Build the summary table, in sweep order; runs not finished are NOT_RUN."""
    names = _columns(points)
    records = [
        {**{names[k]: v for k, v in point.items()}, **rows.get(i, {"status": NOT_RUN})}
        for i, point in enumerate(points)
    ]
    columns = [*dict.fromkeys(names.values()), *SUMMARY_COLUMNS, *metrics]
    frame = pd.DataFrame.from_records(
        records, columns=columns, index=pd.Index(range(len(points)), name="run")
    )
    frame["error"] = frame["error"].fillna("")
    return frame.astype({c: "Int64" for c in INTEGER_COLUMNS})


def _long(frames: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """Stack per-run trajectories into one long frame with a `run` column."""
    return pd.concat(
        [f.reset_index().assign(run=i) for i, f in sorted(frames.items())],
        ignore_index=True,
    ).set_index(["run", "time"])


def _trajectory_folder(trajectories, file_format: str) -> Path | None:
    """Check the trajectory options; return the folder to write to, if any."""
    if file_format not in FORMATS:
        raise FmibridgeError(
            f"trajectory `format` must be one of {FORMATS}, got {file_format!r}."
        )
    if isinstance(trajectories, bool):
        return None
    if file_format == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise FmibridgeError(
            "trajectory format 'parquet' needs pyarrow "
            "(`pip install pyarrow`); or use format 'csv'."
        )
    folder = check_output_folder(trajectories, force=True, what="trajectories")
    folder.mkdir(exist_ok=True)
    return folder


def _columns(points: list[dict[str, Any]]) -> dict[str, str]:
    """Name the summary column of each varied key: its short name unless two clash."""
    keys = list(dict.fromkeys(k for p in points for k in p))
    short = [k.rpartition(".")[2] for k in keys]
    return {
        k: s if short.count(s) == 1 and s not in SUMMARY_COLUMNS else k
        for k, s in zip(keys, short, strict=True)
    }
