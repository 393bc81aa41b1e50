"""Parameter sweeps and batch runs, executed on Dask (a front door).

- `runs`: one run as plain data (`Run`) and how a worker builds it;
- `spec`: a sweep (`Sweep`: a base run, a grid, a list) and its TOML spec file;
- `metrics`: the registry of summary metrics (`zeno_time`, `rho_hat`);
- `execution`: `map_runs` and `iter_runs`, any function over many keyword sets on Dask;
- `batch`: `run_sweep`, one summary row per run, trajectories on request;
- `cli`: ``fmibridge sweep SPEC.toml``.

May import every layer below the front doors (core, flows, methods, models,
formats) and `validation`'s ground truth; never `cli`. Dask loads on first use.
"""

from .batch import SweepResult, run_one, run_sweep
from .execution import Outcome, SweepInterrupted, iter_runs, local_client, map_runs
from .metrics import METRICS, rho_hat_metric, zeno_time
from .runs import MODELS, Run
from .spec import Sweep, SweepSpec, load_sweep

__all__ = [
    "METRICS",
    "MODELS",
    "Outcome",
    "Run",
    "Sweep",
    "SweepInterrupted",
    "SweepResult",
    "SweepSpec",
    "iter_runs",
    "load_sweep",
    "local_client",
    "map_runs",
    "rho_hat_metric",
    "run_one",
    "run_sweep",
    "zeno_time",
]
