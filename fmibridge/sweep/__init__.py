"""Parameter sweeps and batch runs, executed on Dask (a front door; docs/layout.md
lists its modules). May import every layer below the front doors and
`validation`'s ground truth; never `cli`. Dask loads on first use."""

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
