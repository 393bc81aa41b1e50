"""The sweep's speed-up: native ball runs serially and on a local Dask cluster."""

from __future__ import annotations

import time

import numpy as np

from fmibridge.sweep import Run, Sweep, local_client, run_sweep

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
