"""Batch runs and parameter sweeps, executed on Dask.

A sweep is a base model (a built-in example by name, an FMU or an adapter
file), settings shared by every run, and a grid (cartesian product) and/or a
list of runs over model parameters, start values, method settings and
`t_end`. Every run is independent: it is described by plain data (`Run`),
shipped to a worker, and builds its own system there (its own FMU instance),
so nothing live ever crosses a process boundary. The per-run summaries come
back as one DataFrame; trajectories, on request, as one long DataFrame or one
file per run.

Where runs execute (`scheduler`):

* ``"local"`` (default): a `dask.distributed.LocalCluster` of worker
  processes on 127.0.0.1, one per core, one thread each. It costs about 2 s
  to start (the dask multiprocessing scheduler starts in under 1 s), and is
  chosen because it is robust: a run that crashes its process (native FMU
  code) kills one worker, which the nanny restarts, and the run is recorded
  as failed, whereas a crash breaks the whole multiprocessing pool. It also
  streams results as they finish (progress, Ctrl-C keeps finished runs) and
  is the same code path as a cluster.
* an address (``"tcp://host:8786"``) or a `distributed.Client`: an existing
  dask.distributed cluster; its workers need fmibridge and the FMU files.
* ``"serial"``: in this process, one run after another (debugging, and the
  baseline of `sweep_speedup`).

A spec file (``fmibridge sweep SPEC.toml``)::

    model = "bouncing_ball"      # built-in, FMU (.fmu) or adapter file (.toml)
    t_end = 3.0
    metrics = ["zeno_time"]

    [parameters]                 # shared by every run
    h0 = 1.0

    [method]
    name = "halving"
    h = 1e-3

    [grid]                       # cartesian product of the lists
    parameters.e = [0.5, 0.7, 0.9]
    method.h = [1e-3, 1e-4]

    [[runs]]                     # optional list; each is crossed with the grid
    start.v = 0.0

    [output]
    summary = "sweep.csv"        # relative to the working directory
    trajectories = "sweep_runs"  # optional folder, one file per run
    format = "csv"               # or "parquet" (needs pyarrow)
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import itertools
import logging
import math
import os
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import FmibridgeError, FmibridgeWarning
from .result import Result
from .system import HybridSystem

GROUPS = ("parameters", "start", "method")  # what a varied key may set, besides t_end
SPEC_KEYS = {
    "model",
    "interface",
    "t_end",
    "metrics",
    "grid",
    "runs",
    "output",
    *GROUPS,
}
OUTPUT_KEYS = {"summary", "trajectories", "format"}
FORMATS = ("csv", "parquet")
INTEGER_COLUMNS = ("n_events", "n_steps", "n_rejected")  # NA, not NaN, for failed runs
# s: impact spacings used by `zeno_time`; 1e4 times Halving's t_tol (1e-10), so
# location errors perturb the ratio r by < 1e-4.
ZENO_MIN_INTERVAL = 1e-6
# The scheduler's HTTP routes (health, metrics; no dashboard) on a free loopback
# port, instead of 8787, which a second cluster on the machine finds taken.
LOOPBACK_HTTP = {"dashboard_address": "127.0.0.1:0"}
# A run that kills its worker (a crash in native FMU code) is retried once on a
# fresh worker, then recorded as failed: FMU crashes are deterministic, and dask's
# default of 3 retries costs a worker restart (~1 s) each.
ALLOWED_CRASHES = 1
ERROR = "ERROR"  # `status` of a run that raised instead of returning a Result
SUMMARY_COLUMNS = (
    "status",
    "n_events",
    "first_event_time",
    "last_event_time",
    "t_final",
    "n_steps",
    "n_rejected",
    "wall_time_s",
    "error",
)


# -- what one run is ----------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run of a sweep as plain data: rebuilt into a system in the worker.

    Parameters
    ----------
    model : str
        A built-in model name (see `MODELS`), an FMU path or an adapter file.
    t_end : float
        Final time, s.
    parameters, start : mapping
        Model parameters and start values by name (FMU variable names).
    method : mapping
        ``name`` (default ``"halving"``) and the method's options; ``zeno =
        "complete"`` wraps it in `Completion`.
    interface : str, optional
        ``"me"`` or ``"cs"`` for an FMU.
    """

    model: str
    t_end: float | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    start: Mapping[str, float] = field(default_factory=dict)
    method: Mapping[str, Any] = field(default_factory=dict)
    interface: str | None = None


def _bouncing_ball(parameters: Mapping[str, Any]) -> HybridSystem:
    """The built-in ball; parameters are the keyword arguments of `bouncing_ball`."""
    from .models import bouncing_ball

    return bouncing_ball(**parameters)


def _forced_oscillator(parameters: Mapping[str, Any]) -> HybridSystem:
    """Burden et al.'s oscillator: ``example`` (1 or 2, Table I) and field overrides."""
    from .models import forced_oscillator

    return forced_oscillator(_oscillator_params(parameters))


def _oscillator_params(parameters: Mapping[str, Any]):
    """Return Table I's example ``parameters['example']``, other fields replaced."""
    from .validation import EXAMPLE_1, EXAMPLE_2

    options = dict(parameters)
    example = {1: EXAMPLE_1, 2: EXAMPLE_2}.get(int(options.pop("example", 1)))
    if example is None:
        raise FmibridgeError(
            f"forced_oscillator: `example` must be 1 or 2, got "
            f"{parameters['example']!r}."
        )
    return dataclasses.replace(example, **options)


MODELS: dict[str, Callable[[Mapping[str, Any]], HybridSystem]] = {
    "bouncing_ball": _bouncing_ball,
    "forced_oscillator": _forced_oscillator,
}
DEFAULT_T_END = {
    "bouncing_ball": 3.0
}  # s; the oscillator's default is its Table I t_max


def _with_start(system: HybridSystem, start: Mapping[str, float]) -> HybridSystem:
    """Return `system` with the named initial state values replaced."""
    if not start:
        return system
    x0 = dict(zip(system.state_names, system.x0.tolist(), strict=True))
    unknown = sorted(set(start) - set(x0))
    if unknown:
        raise FmibridgeError(
            f"{system.name}: unknown start value(s) {unknown}; the "
            f"states are {list(x0)}."
        )
    return HybridSystem(
        list(system.modes.values()),
        system.initial_mode,
        {**x0, **start},
        t0=system.t0,
        parameters=system.parameters,
        constraint=system.constraint,
        name=system.name,
    )


def _method(settings: Mapping[str, Any]):
    """Build the method named in `settings` (default Halving), maybe with completion."""
    from .methods import method_named

    options = dict(settings)
    name = options.pop("name", "halving")
    zeno = options.pop("zeno", None)
    method = method_named(name, options)
    if zeno is None:
        return method
    if zeno != "complete":
        raise FmibridgeError(f"method `zeno` must be 'complete', got {zeno!r}.")
    from .methods.completion import Completion

    return Completion(method)


def _build(run: Run):
    """Return (system, method, t_end) for `run`, loading its FMU here, in the worker."""
    model = run.model
    if model in MODELS:
        system = _with_start(MODELS[model](run.parameters), run.start)
        t_end = run.t_end or DEFAULT_T_END.get(model)
        if t_end is None:
            t_end = _oscillator_params(run.parameters).t_max
        return system, _method(run.method), t_end
    if model.endswith(".toml"):
        return _build_adapter(run)
    if model.endswith(".fmu"):
        from .flows.fmu import fmu_system

        if run.t_end is None:
            raise FmibridgeError(f"{model}: an FMU sweep needs `t_end`.")
        system = fmu_system(
            model, run.interface, parameters=dict(run.parameters), start=dict(run.start)
        )
        return system, _method(run.method), run.t_end
    raise FmibridgeError(
        f"`model` must be one of {sorted(MODELS)}, an FMU (.fmu) or "
        f"an adapter file (.toml), got {model!r}."
    )


def _build_adapter(run: Run):
    """Load an adapter file with the run's parameters, start values and method."""
    from .adapters import load_adapter

    settings = dict(run.method)
    name, zeno = settings.pop("name", None), settings.pop("zeno", None)
    adapter = load_adapter(
        run.model,
        method=name,
        method_options=settings or None,
        t_end=run.t_end,
        interface=run.interface,
        zeno=zeno,
        parameters=run.parameters,
        start=run.start,
    )
    return adapter.system, adapter.method, adapter.t_end


# -- metrics: f(result, run) -> float, evaluated in the worker ---------------------


def zeno_time(result: Result, run: Run) -> float:
    """Estimate the Zeno time by Aitken's delta-squared on three impact times.

    For impacts accumulating geometrically, t_n - t_(n-1) = r (t_(n-1) -
    t_(n-2)), the limit is t_n + (t_n - t_(n-1)) r / (1 - r). The last three
    events whose spacings exceed ZENO_MIN_INTERVAL are used, so that the
    impact-location error does not swamp the ratio r. NaN with fewer than
    three such events or a ratio outside (0, 1). A run with Zeno completion
    reports it directly: the first time its mode is "constrained".

    References
    ----------
    Or and Ames: a Zeno execution's impact times converge to the Zeno time.
    """
    constrained = np.flatnonzero(result.mode == "constrained")
    if len(constrained):
        return float(result.t[constrained[0]])
    t = result.event_times
    short = np.flatnonzero(np.diff(t) <= ZENO_MIN_INTERVAL)
    t = t[: short[0] + 1] if len(short) else t
    if len(t) < 3:
        return math.nan
    d1, d2 = t[-2] - t[-3], t[-1] - t[-2]
    if not 0 < d2 < d1:
        return math.nan
    r = d2 / d1
    return float(t[-1] + d2 * r / (1.0 - r))


def rho_hat_metric(result: Result, run: Run) -> float:
    """Position error rho-hat (Burden et al., eq. 30) of a forced-oscillator run."""
    from .validation import exact_solution, rho_hat

    if run.model != "forced_oscillator":
        raise FmibridgeError(
            f"metric 'rho_hat' needs model 'forced_oscillator', got {run.model!r}."
        )
    params = _oscillator_params(run.parameters)
    t_max = float(result.t[-1])
    return float(
        rho_hat(result.t, result["x"], exact_solution(params, t_max), t_max=t_max)
    )


METRICS: dict[str, Callable[[Result, Run], float]] = {
    "zeno_time": zeno_time,
    "rho_hat": rho_hat_metric,
}


def _metric(name: str) -> Callable[[Result, Run], float]:
    """Return the metric called `name`: built-in, or ``"package.module:function"``."""
    if name in METRICS:
        return METRICS[name]
    module, _, function = name.partition(":")
    if not function:
        raise FmibridgeError(
            f"metric {name!r} is unknown; use one of {sorted(METRICS)} "
            f"or 'package.module:function'."
        )
    return getattr(importlib.import_module(module), function)


def simulate(
    run: Run, metrics: Sequence[str] = (), *, trajectory: bool = False
) -> dict:
    """Run one `Run` and return its summary row (and its samples if `trajectory`).

    The run's FMU instances are freed before returning. An early stop (for
    example max_events at a Zeno point) is a status, not an error.
    """
    system, method, t_end = _build(run)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", FmibridgeWarning
            )  # the status column says it
            result = method.run(system, t_end)
    finally:
        system.close()
    times = result.event_times
    row = {
        "status": result.status.name,
        "n_events": len(times),
        "first_event_time": float(times[0]) if len(times) else math.nan,
        "last_event_time": float(times[-1]) if len(times) else math.nan,
        "t_final": float(result.t[-1]),
        "n_steps": result.stats["n_steps"],
        "n_rejected": result.stats["n_rejected"],
    }
    for name in metrics:
        row[name] = float(_metric(name)(result, run))
    return {"row": row, "trajectory": result.to_pandas() if trajectory else None}


# -- execution on Dask ---------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one call of `map_runs` produced: a value, or the error it raised."""

    value: Any = None
    error: str | None = None
    wall_time_s: float = math.nan

    @property
    def is_ok(self) -> bool:
        return self.error is None


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during `map_runs`; `outcomes` holds the finished runs (None: not run)."""

    def __init__(self, outcomes: list[Outcome | None]) -> None:
        super().__init__("sweep interrupted")
        self.outcomes = outcomes


def _call(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Outcome:
    """Call fn(**kwargs) in a worker; an exception becomes the Outcome's error."""
    wall = time.perf_counter()
    try:
        value = fn(**kwargs)
    except Exception as exc:  # a failed run is data; the sweep goes on
        return Outcome(
            error=f"{type(exc).__name__}: {exc}", wall_time_s=time.perf_counter() - wall
        )
    return Outcome(value, wall_time_s=time.perf_counter() - wall)


def _bar(total: int, enabled: bool, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="run", leave=False)


def iter_runs(
    fn: Callable[..., Any],
    kwargs_list: Sequence[Mapping[str, Any]],
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    progress: bool = False,
    desc: str = "sweep",
) -> Iterator[tuple[int, Outcome]]:
    """Yield (index, Outcome) of fn(**kwargs) for each kwargs, as runs finish.

    Close the generator (or leave its loop) to cancel the runs not yet done;
    `map_runs` collects it. Parameters as in `map_runs`.
    """
    with _bar(len(kwargs_list), progress, desc) as bar:
        if scheduler == "serial":
            for i, kwargs in enumerate(kwargs_list):
                outcome = _call(fn, kwargs)
                bar.update()
                yield i, outcome
            return
        with _client(scheduler, workers) as client:
            yield from _on_client(client, fn, kwargs_list, bar)


def _on_client(client, fn, kwargs_list, bar) -> Iterator[tuple[int, Outcome]]:
    """Submit every call to `client` and yield them as they complete."""
    from dask.distributed import as_completed

    index = {}
    for i, kwargs in enumerate(kwargs_list):
        index[client.submit(_call, fn, kwargs, pure=False)] = i
    try:
        for future in as_completed(index):
            if future.status == "finished":
                outcome = future.result()
            else:  # the worker died (a crash in native code) or the task was lost
                outcome = Outcome(
                    error=f"{type(future.exception()).__name__}: {future.exception()}"
                )
            bar.update()
            yield index[future], outcome
    finally:
        client.cancel(list(index))


@contextlib.contextmanager
def _client(scheduler: Any, workers: int | None):
    """Yield a dask.distributed Client for `scheduler`, closing what was opened here."""
    from dask.distributed import Client

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler == "local":
        with local_client(workers) as client:
            yield client
        return
    if not isinstance(scheduler, str) or ":" not in scheduler:
        raise FmibridgeError(
            f"`scheduler` must be 'local', 'serial', a scheduler "
            f"address such as 'tcp://host:8786' or a Client, got "
            f"{scheduler!r}."
        )
    with Client(scheduler) as client:
        yield client


@contextlib.contextmanager
def local_client(workers: int | None = None):
    """Yield a Client of a LocalCluster: `workers` processes (default one per
    core) of one thread each, listening on 127.0.0.1 only, no dashboard, with
    fmibridge already imported in every worker."""
    import dask
    from dask.distributed import Client, LocalCluster

    with (
        dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_CRASHES}),
        LocalCluster(
            host="127.0.0.1",
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs=LOOPBACK_HTTP,
            silence_logs=logging.CRITICAL,  # failed runs are in the summary instead
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(importlib.import_module, "fmibridge.sweep")  # imports, once each
        yield client


def map_runs(
    fn: Callable[..., Any],
    kwargs_list: Sequence[Mapping[str, Any]],
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    progress: bool = False,
    desc: str = "runs",
) -> list[Outcome]:
    """Call fn(**kwargs) for every kwargs on Dask; return the Outcomes in order.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by reference to the workers);
        its arguments and return value must be picklable plain data.
    kwargs_list : sequence of mapping
        One mapping of keyword arguments per call.
    scheduler : {'local', 'serial'}, address or distributed.Client
        Where to run (see the module docstring); default one process per core.
    workers : int, optional
        Worker processes of the 'local' cluster; default `os.cpu_count()`.
    progress : bool
        Show a progress bar over runs.

    Returns
    -------
    list of Outcome
        A call that raised has `error` set; the others have `value`.

    Raises
    ------
    SweepInterrupted
        On Ctrl-C, after cancelling the pending calls; it carries the finished
        Outcomes (None where a call did not finish).

    Examples
    --------
    >>> [o.value for o in map_runs(pow, [{"base": 2, "exp": 3}], scheduler="serial")]
    [8]
    """
    outcomes: list[Outcome | None] = [None] * len(kwargs_list)
    runs = iter_runs(
        fn,
        kwargs_list,
        scheduler=scheduler,
        workers=workers,
        progress=progress,
        desc=desc,
    )
    try:
        with contextlib.closing(runs):
            for i, outcome in runs:
                outcomes[i] = outcome
    except KeyboardInterrupt:
        raise SweepInterrupted(outcomes) from None
    return outcomes  # type: ignore[return-value]


# -- sweeps: a base run, a grid and a list ------------------------------------------


@dataclass(frozen=True)
class Sweep:
    """A base `Run`, and the settings varied over it.

    Parameters
    ----------
    base : Run
        Settings shared by every run.
    grid : mapping
        ``{"group.name": [values]}`` with group ``parameters``, ``start`` or
        ``method``, or the key ``t_end``; the sweep takes their cartesian
        product.
    runs : sequence of mapping
        Explicit settings (same keys, one value each); each is crossed with the
        grid. Default: one run per grid point.
    metrics : sequence of str
        Metric columns: names in `METRICS` or ``"package.module:function"``
        taking (result, run).

    Examples
    --------
    >>> sweep = Sweep(Run("bouncing_ball"), grid={"parameters.e": [0.5, 0.9]})
    >>> [run.parameters for run in sweep.expand()]
    [{'e': 0.5}, {'e': 0.9}]
    """

    base: Run
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    runs: Sequence[Mapping[str, Any]] = ()
    metrics: Sequence[str] = ()

    def __post_init__(self) -> None:
        problems = [
            f"grid[{k!r}] must be a non-empty list"
            for k, v in self.grid.items()
            if isinstance(v, str | bytes) or not isinstance(v, Sequence) or not v
        ]
        keys = set(self.grid).union(*[set(r) for r in self.runs])
        problems += [
            f"{k!r} must be 't_end' or 'group.name' with group in {GROUPS}"
            for k in sorted(keys)
            if _split(k) is None
        ]
        if problems:
            raise FmibridgeError("Sweep: " + "; ".join(problems) + ".")

    def points(self) -> list[dict[str, Any]]:
        """Return each run's varied settings, ``{"group.name": value}``."""
        names = list(self.grid)
        product = [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*self.grid.values())
        ]
        return [
            {**dict(listed), **point}
            for listed in (self.runs or [{}])
            for point in product
        ]

    def expand(self) -> list[Run]:
        """Return one `Run` per point: the base with the point's settings applied."""
        return [_apply(self.base, point) for point in self.points()]


def _split(key: str) -> tuple[str, str] | None:
    """Return (group, name) of a varied key, or None if it is malformed."""
    if key == "t_end":
        return ("t_end", "")
    group, _, name = key.partition(".")
    return (group, name) if group in GROUPS and name else None


def _apply(base: Run, point: Mapping[str, Any]) -> Run:
    """Return `base` with the settings of one sweep point."""
    groups = {g: dict(getattr(base, g)) for g in GROUPS}
    t_end = base.t_end
    for key, value in point.items():
        group, name = _split(key)  # type: ignore[misc]  # checked by Sweep
        if group == "t_end":
            t_end = float(value)
        else:
            groups[group][name] = value
    return dataclasses.replace(base, t_end=t_end, **groups)


def _columns(points: list[dict[str, Any]]) -> dict[str, str]:
    """Name the summary column of each varied key: its short name unless two clash."""
    keys = list(dict.fromkeys(k for p in points for k in p))
    short = [k.rpartition(".")[2] for k in keys]
    return {
        k: s if short.count(s) == 1 and s not in SUMMARY_COLUMNS else k
        for k, s in zip(keys, short, strict=True)
    }


# -- running a sweep ----------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """Per-run summaries, and the trajectories if they were asked for.

    `summary` has one row per finished run (index `run`, the position in
    `Sweep.expand()`), the varied settings as columns, then `status`
    (a `Status` name, or ``"ERROR"``), `n_events`, `first_event_time`,
    `last_event_time`, `t_final`, `n_steps`, `n_rejected`, `wall_time_s`,
    `error` and one column per metric. `trajectories` is a long DataFrame
    (column `run`, then `time`, the states and `mode`) or None.
    """

    summary: pd.DataFrame
    trajectories: pd.DataFrame | None = None
    is_interrupted: bool = False


def run_sweep(
    sweep: Sweep,
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    trajectories: bool | str | Path = False,
    file_format: str = "csv",
    progress: bool = False,
) -> SweepResult:
    """Run every point of `sweep` on Dask and gather the summaries.

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

    Returns
    -------
    SweepResult
        On Ctrl-C, the finished runs with `is_interrupted` set.
    """
    folder = _trajectory_folder(trajectories, file_format)
    runs = sweep.expand()
    calls = [
        {"run": r, "metrics": tuple(sweep.metrics), "trajectory": bool(trajectories)}
        for r in runs
    ]
    rows: dict[int, dict[str, Any]] = {}
    frames: dict[int, pd.DataFrame] = {}
    outcomes = iter_runs(
        simulate,
        calls,
        scheduler=scheduler,
        workers=workers,
        progress=progress,
        desc="sweep",
    )
    is_interrupted = False
    try:
        with contextlib.closing(outcomes):
            for i, outcome in outcomes:
                rows[i], frame = _row(outcome, sweep.metrics)
                if frame is not None and folder is not None:
                    _write_frame(
                        frame, folder / f"run_{i:05d}.{file_format}", file_format
                    )
                elif frame is not None:
                    frames[i] = frame
    except KeyboardInterrupt:
        is_interrupted = True
    summary = _summary(sweep.points(), rows, sweep.metrics)
    summary.attrs["is_interrupted"] = is_interrupted
    return SweepResult(summary, _long(frames) if frames else None, is_interrupted)


def _row(outcome: Outcome, metrics: Sequence[str]):
    """Return (summary row, trajectory or None) of one Outcome."""
    if not outcome.is_ok:
        row = {"status": ERROR, "error": outcome.error}
        return {**row, "wall_time_s": outcome.wall_time_s}, None
    row = {**outcome.value["row"], "wall_time_s": outcome.wall_time_s, "error": ""}
    return row, outcome.value["trajectory"]


def _summary(
    points, rows: dict[int, dict[str, Any]], metrics: Sequence[str]
) -> pd.DataFrame:
    """Build the summary table of the finished runs, in sweep order."""
    names = _columns(points)
    done = sorted(rows)
    records = [{**{names[k]: v for k, v in points[i].items()}, **rows[i]} for i in done]
    columns = (
        list(dict.fromkeys(names.values())) + list(SUMMARY_COLUMNS) + list(metrics)
    )
    frame = pd.DataFrame.from_records(
        records, columns=columns, index=pd.Index(done, name="run")
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
    folder = Path(trajectories)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_frame(frame: pd.DataFrame, path: Path, file_format: str) -> None:
    if file_format == "parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path)


# -- spec files and the command line ------------------------------------------------


@dataclass(frozen=True)
class SweepSpec:
    """A sweep read from a TOML spec, with where its output goes."""

    sweep: Sweep
    summary: Path
    trajectories: Path | None = None
    file_format: str = "csv"


def load_sweep(path: str | Path) -> SweepSpec:
    """Read a sweep spec (TOML; see the module docstring).

    A model path is relative to the spec file; output paths are relative to
    the working directory. Every problem is reported in one FmibridgeError.
    """
    path = Path(path)
    if not path.is_file():
        raise FmibridgeError(f"{path}: no such sweep spec.")
    try:
        spec = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise FmibridgeError(f"{path}: not valid TOML: {exc}.") from None
    problems = [
        f"unknown key {k!r} (allowed: {sorted(SPEC_KEYS)})"
        for k in sorted(set(spec) - SPEC_KEYS)
    ]
    output = spec.get("output", {})
    problems += [
        f"unknown key output.{k} (allowed: {sorted(OUTPUT_KEYS)})"
        for k in sorted(set(output) - OUTPUT_KEYS)
    ]
    if "model" not in spec:
        problems.append("missing `model`: a built-in name, an FMU or an adapter file")
    if problems:
        raise FmibridgeError(f"{path}: " + "; ".join(problems) + ".")
    model = str(spec["model"])
    if model not in MODELS:
        model = str((path.parent / model).resolve())
    base = Run(
        model,
        spec.get("t_end"),
        spec.get("parameters", {}),
        spec.get("start", {}),
        spec.get("method", {}),
        spec.get("interface"),
    )
    try:
        sweep = Sweep(
            base,
            _flatten(spec.get("grid", {})),
            [_flatten(r) for r in spec.get("runs", [])],
            spec.get("metrics", []),
        )
    except FmibridgeError as exc:
        raise FmibridgeError(f"{path}: {exc}") from None
    trajectories = output.get("trajectories")
    return SweepSpec(
        sweep,
        Path(output.get("summary", f"{path.stem}.csv")),
        Path(trajectories) if trajectories else None,
        output.get("format", "csv"),
    )


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Turn TOML's nested keys ({'parameters': {'e': ...}}) into 'parameters.e'."""
    flat = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def cmd_sweep(args) -> int:
    """`fmibridge sweep SPEC.toml`: run a sweep and write its summary CSV.

    Exit code 0 if every run returned a Result, 1 if some raised, 130 on Ctrl-C
    (after writing the summary of the finished runs).
    """
    spec = load_sweep(args.spec)
    out = args.out or spec.summary
    trajectories = args.trajectories or spec.trajectories or False
    n_runs = len(spec.sweep.points())
    print(f"{args.spec}: {n_runs} runs on scheduler {args.scheduler!r}")
    result = run_sweep(
        spec.sweep,
        scheduler=args.scheduler,
        workers=args.workers,
        trajectories=trajectories,
        file_format=args.format or spec.file_format,
        progress=not args.no_progress,
    )
    summary = result.summary
    summary.to_csv(out)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(
            summary.drop(columns=["error"])
            .head(20)
            .to_string(float_format="{:.6g}".format)
        )
    failed = summary[summary["status"] == ERROR]
    for run, message in failed["error"].items():
        print(f"run {run} failed: {message}")
    state = "interrupted; " if result.is_interrupted else ""
    print(
        f"{state}{len(summary)}/{n_runs} runs finished ({len(failed)} failed); "
        f"wrote {out}" + (f" and {trajectories}/" if trajectories else "")
    )
    if result.is_interrupted:
        return 130
    return 1 if len(failed) else 0


def add_parser(sub) -> None:
    """Register `fmibridge sweep` on the CLI's subparsers."""
    sweep = sub.add_parser("sweep", help="run a parameter sweep (grid or list) on Dask")
    sweep.add_argument("spec", type=Path, help="sweep spec (.toml)")
    sweep.add_argument(
        "--scheduler",
        default="local",
        help="'local' (default: one process per core), 'serial', or a "
        "dask.distributed scheduler address (tcp://host:8786)",
    )
    sweep.add_argument("--workers", type=int, help="processes of the local cluster")
    sweep.add_argument("--out", type=Path, help="summary CSV (default: from the spec)")
    sweep.add_argument("--trajectories", type=Path, help="folder for one file per run")
    sweep.add_argument("--format", choices=FORMATS, help="trajectory file format")
    sweep.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar"
    )
    sweep.set_defaults(func=cmd_sweep)


# -- benchmark ------------------------------------------------------------------------


# s: just before the Zeno time of the lowest e (0.5: 1.354 s), so no run piles up
# impacts; 6500 steps of SPEEDUP_H = 2e-4 s make ~0.3 s of work per run.
SPEEDUP_T_END = 1.3
SPEEDUP_H = 5e-5  # s: ~0.5 s a run, so start-up and per-task costs do not dominate


def sweep_speedup(n_runs: int = 40, workers: int = 2) -> dict[str, float]:
    """Time `n_runs` native ball runs serially and on a local Dask cluster.

    Returns
    -------
    dict
        ``serial_s``, ``startup_s`` (starting the cluster), ``parallel_s``
        (including startup), ``speedup`` = serial_s / parallel_s, and
        ``speedup_excluding_startup``, with ``n_runs`` and ``workers``.
    """
    sweep = Sweep(
        Run("bouncing_ball", SPEEDUP_T_END, method={"h": SPEEDUP_H}),
        grid={"parameters.e": np.linspace(0.5, 0.95, n_runs).tolist()},
    )
    wall = time.perf_counter()
    run_sweep(sweep, scheduler="serial")
    serial = time.perf_counter() - wall
    wall = time.perf_counter()
    with local_client(workers) as client:
        startup = time.perf_counter() - wall
        run_sweep(sweep, scheduler=client)
        parallel = time.perf_counter() - wall
    return {
        "n_runs": n_runs,
        "workers": workers,
        "serial_s": serial,
        "startup_s": startup,
        "parallel_s": parallel,
        "speedup": serial / parallel,
        "speedup_excluding_startup": serial / (parallel - startup),
    }
