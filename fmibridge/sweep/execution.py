"""Execution on Dask: call a function for many keyword sets, as runs finish.

`scheduler` is ``"local"`` (a `dask.distributed.LocalCluster` of one process
per core on 127.0.0.1, whose nannies restart a lost worker), an address or a
`distributed.Client` of an existing cluster (its workers need fmibridge and the
FMU files), or ``"serial"`` (in this process, one run after another).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import supervision
from ..core.errors import FmibridgeError
from ..core.numbers import at_least_one

# The scheduler's HTTP routes (no dashboard) on a free loopback port, not 8787,
# which a second cluster on the machine finds taken.
LOOPBACK_HTTP = {"dashboard_address": "127.0.0.1:0"}
# A run that kills its worker is retried once on a fresh worker, then failed: FMU
# crashes are deterministic, and each retry costs a worker restart.
ALLOWED_CRASHES = 1
SCHEDULER_TIMEOUT_S = 10.0  # s a scheduler address may take to answer


@dataclass(frozen=True)
class Outcome:
    """What one call of `map_runs` produced: a value, or the error it raised."""

    value: Any = None
    error: str | None = None
    wall_time_s: float = math.nan

    @property
    def is_ok(self) -> bool:
        """True if the call returned (no error)."""
        return self.error is None


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during `map_runs`; `outcomes` holds the finished runs (None: not run)."""

    def __init__(self, outcomes: list[Outcome | None]) -> None:
        super().__init__("sweep interrupted")
        self.outcomes = outcomes


def _call(fn: Callable[..., Any], kwargs: Mapping[str, Any]) -> Outcome:
    """Call ``fn(**kwargs)`` in a worker; an exception becomes the Outcome's error."""
    wall = time.perf_counter()
    try:
        value, error = fn(**kwargs), None
    except Exception as exc:  # a failed run is data; the sweep goes on
        value, error = None, f"{type(exc).__name__}: {exc}"
    return Outcome(value, error, time.perf_counter() - wall)


def iter_runs(
    fn: Callable[..., Any],
    kwargs_list: Sequence[Mapping[str, Any]],
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    progress: bool = False,
    desc: str = "sweep",
) -> Generator[tuple[int, Outcome]]:
    """Yield (index, Outcome) of ``fn(**kwargs)`` for each kwargs, as runs finish.

    Closing the generator cancels the runs not yet done. Parameters as in
    `map_runs`.
    """
    from tqdm import tqdm

    shown = progress and sys.stderr.isatty()  # no bar frames in logs
    with tqdm(
        total=len(kwargs_list), disable=not shown, desc=desc, unit="run", leave=False
    ) as bar:
        if scheduler == "serial":
            for i, kwargs in enumerate(kwargs_list):
                outcome = _call(fn, kwargs)
                bar.update()
                yield i, outcome
            return
        with _client(scheduler, workers) as client:
            yield from _on_client(client, fn, kwargs_list, bar)


def _on_client(client, fn, kwargs_list, bar) -> Generator[tuple[int, Outcome]]:
    """Submit every call to `client` and yield them as they complete."""
    from dask.distributed import as_completed

    index = {
        client.submit(_call, fn, kwargs, pure=False): i
        for i, kwargs in enumerate(kwargs_list)
    }
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
            f"`scheduler` must be 'local', 'serial', a scheduler address such as "
            f"'tcp://host:8786' or a Client, got {scheduler!r}."
        )
    try:
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise FmibridgeError(
            f"scheduler {scheduler!r} did not answer within {SCHEDULER_TIMEOUT_S:g} "
            f"s ({type(exc).__name__}); start it, or use --scheduler local."
        ) from None
    with client:
        yield client


@contextlib.contextmanager
def local_client(workers: int | None = None):
    """Yield a Client of a LocalCluster of `workers` processes (default one per
    core) of one thread each, on 127.0.0.1, with fmibridge imported in each."""
    import dask
    from dask.distributed import Client, LocalCluster

    count = (os.cpu_count() or 1) if workers is None else workers
    workers = at_least_one("workers", count)
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_CRASHES}),
        LocalCluster(
            host="127.0.0.1",
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs=LOOPBACK_HTTP,
            silence_logs=logging.CRITICAL,  # failed runs are in the summary instead
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(importlib.import_module, "fmibridge.sweep")  # imports, once each
        try:
            yield client
        finally:  # the workers' supervised processes end, their folders go
            with contextlib.suppress(Exception):
                client.run(supervision.close_all)


def map_runs(
    fn: Callable[..., Any],
    kwargs_list: Sequence[Mapping[str, Any]],
    *,
    scheduler: Any = "local",
    workers: int | None = None,
    progress: bool = False,
    desc: str = "runs",
) -> list[Outcome]:
    """Call ``fn(**kwargs)`` for every kwargs on Dask; return the Outcomes in order.

    Parameters
    ----------
    fn : callable
        A module-level function; its arguments and value must be picklable.
    kwargs_list : sequence of mapping
        One mapping of keyword arguments per call.
    scheduler : {'local', 'serial'}, address or distributed.Client
        Where to run (see the module docstring).
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
        On Ctrl-C, after cancelling the pending calls, with the finished Outcomes.
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
