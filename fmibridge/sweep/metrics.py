"""Sweep metrics: f(result, run) -> float, evaluated in the worker beside the run."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable

import numpy as np

from ..core.errors import FmibridgeError
from ..core.result import Result
from .runs import Run, oscillator_params

# s: the shortest impact spacing `zeno_time` uses; 1e4 times Halving's t_tol, so
# location errors perturb the ratio r by < 1e-4.
ZENO_MIN_INTERVAL = 1e-6


def zeno_time(result: Result, run: Run) -> float:
    """Estimate the Zeno time by Aitken's delta-squared on three impact times.

    For geometric impacts the limit is t_n + (t_n - t_(n-1)) r / (1 - r); the last
    three events spaced more than ZENO_MIN_INTERVAL apart give r. NaN with fewer
    of them or r outside (0, 1). A run with Zeno completion reports the first
    time its mode is "constrained".

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
    from ..validation import exact_solution, rho_hat

    if run.model != "forced_oscillator":
        raise FmibridgeError(
            f"metric 'rho_hat' needs model 'forced_oscillator', got {run.model!r}."
        )
    params = oscillator_params(run.parameters)
    t_max = float(result.t[-1])
    return float(
        rho_hat(result.t, result["x"], exact_solution(params, t_max), t_max=t_max)
    )


METRICS: dict[str, Callable[[Result, Run], float]] = {
    "zeno_time": zeno_time,
    "rho_hat": rho_hat_metric,
}


def metric_named(name: str) -> Callable[[Result, Run], float]:
    """Return the metric called `name`: built-in, or ``"package.module:function"``
    (imported here; only Python and `--metric` name one, never a spec file)."""
    if name in METRICS:
        return METRICS[name]
    module, _, function = name.partition(":")
    if not function:
        raise FmibridgeError(
            f"metric {name!r} is unknown; use one of {sorted(METRICS)} "
            f"or 'package.module:function'."
        )
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as exc:
        raise FmibridgeError(f"metric {name!r} cannot be loaded: {exc}.") from None
