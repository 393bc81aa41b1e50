"""Convergence study of Burden et al., Sec. V-B: relaxation vs PS on Table I.

The relaxation method (midpoint, RK4) and the PS method (eq. 29) run on both
examples over a grid of h and eps, scored by rho-hat (eq. 30) against the exact
execution; `plot_study` draws Fig. 14d-f.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..models.oscillator import EXAMPLE_1, EXAMPLE_2, OscillatorParams
from .exact import AnalyticTrajectory, exact_solution
from .metrics import rho_hat
from .paoli_schatzman import paoli_schatzman

__all__ = ["GRIDS", "Case", "Grid", "fit_slope", "plot_study", "run_case", "run_study"]

EXAMPLES: dict[str, OscillatorParams] = {"example_1": EXAMPLE_1, "example_2": EXAMPLE_2}
MAX_EVENTS = 1_000_000  # bounds a run; far above what any grid point needs
# A PS step counts as an impact when its projection is active: z_{k+1} + c z_{k-1}
# equals (1 + c) x_max up to this relative round-off.
PS_ACTIVE_RTOL = 1e-12


@dataclass(frozen=True)
class Case:
    """One run of the study: a method on an example at (h, eps)."""

    example: str
    method: str  # "relaxation" or "ps"
    integrator: str  # "midpoint", "rk4"; "central" for PS
    h: float
    eps: float = math.nan  # NaN for PS


@dataclass(frozen=True)
class Grid:
    """A study grid: step sizes, eps as fractions of h, integrators, PS steps."""

    hs: tuple[float, ...]
    eps_ratios: tuple[float, ...]
    integrators: tuple[str, ...]
    ps_hs: tuple[float, ...]
    examples: tuple[str, ...] = ("example_1", "example_2")

    def cases(self) -> list[Case]:
        """Return every Case of the grid, examples outermost."""
        cases = []
        for example in self.examples:
            cases += [
                Case(example, "relaxation", integrator, h, ratio * h)
                for integrator, ratio, h in itertools.product(
                    self.integrators, self.eps_ratios, self.hs
                )
            ]
            cases += [Case(example, "ps", "central", h) for h in self.ps_hs]
        return cases


# The paper plots eps = 2e-2 h and eps = 2e-5 h (Fig. 14 legend);
# its h runs over 5 logspace(-1, -4, 50) (reference code), every third one plotted.
_PAPER_HS = tuple(float(h) for h in 5.0 * np.logspace(-1, -4, 50)[4::3])
GRIDS: dict[str, Grid] = {
    "tiny": Grid((4e-2, 2e-2), (2e-2,), ("midpoint",), (4e-2, 2e-2)),
    "quick": Grid(
        (4e-2, 2e-2, 1e-2), (2e-2, 2e-5), ("midpoint", "rk4"), (1e-2, 1e-3, 5e-4)
    ),
    "full": Grid(_PAPER_HS, (2e-2, 2e-5), ("midpoint", "rk4"), _PAPER_HS),
}
"""Named grids: `tiny` (tests, seconds), `quick` (< 1 min), `full` (the paper's)."""


def _relaxation_run(params: OscillatorParams, case: Case):
    from ..methods.relaxation import Relaxation
    from ..models.oscillator import forced_oscillator

    method = Relaxation(
        h=case.h, eps=case.eps, integrator=case.integrator, max_events=MAX_EVENTS
    )
    result = method.run(forced_oscillator(params), params.t_max)
    n_events = result.stats["n_events"] + result.stats.get("n_silent_events", 0)
    return result.t, result["x"], n_events


def _ps_run(params: OscillatorParams, case: Case):
    ps = paoli_schatzman(params, case.h)
    cap = (1.0 + params.c) * params.x_max
    active = np.abs(ps.x[2:] + params.c * ps.x[:-2] - cap) <= PS_ACTIVE_RTOL * abs(cap)
    return ps.t, ps.x, int(np.count_nonzero(active))


def run_case(case: Case, exact: AnalyticTrajectory | None = None) -> dict[str, object]:
    """Run one Case and return its table row.

    Parameters
    ----------
    case : Case
    exact : AnalyticTrajectory, optional
        The exact execution of the case's example (computed if not given).

    Returns
    -------
    dict
        The Case's fields, `rho_hat` (eq. 30 on [0, t_max]), `wall_s`
        (simulation only) and `events` (transitions, also those whose reset
        left the state unchanged; for PS, steps with an active projection).
    """
    params = EXAMPLES[case.example]
    exact = exact_solution(params) if exact is None else exact
    run = _ps_run if case.method == "ps" else _relaxation_run
    wall = time.perf_counter()
    t, x, n_events = run(params, case)
    wall = time.perf_counter() - wall
    error = rho_hat(t, x, exact, t_max=params.t_max)
    return {**asdict(case), "rho_hat": error, "wall_s": wall, "events": n_events}


def run_study(
    cases: Iterable[Case], *, progress: bool = False, scheduler: object = None
) -> pd.DataFrame:
    """Run every Case through `fmibridge.sweep.map_runs` and return the table
    (one row per case); a case that raises gets rho_hat NaN and its message in
    `error`. `scheduler` as in `map_runs`; None runs the cases here, in turn.
    """
    from ..sweep.execution import map_runs

    cases = list(cases)
    exacts = {
        name: exact_solution(EXAMPLES[name]) for name in {c.example for c in cases}
    }
    outcomes = map_runs(
        run_case,
        [{"case": case, "exact": exacts[case.example]} for case in cases],
        scheduler="serial" if scheduler is None else scheduler,
        progress=progress,
        desc="validate",
    )
    rows = [
        o.value if o.is_ok else {**asdict(case), "rho_hat": math.nan, "error": o.error}
        for case, o in zip(cases, outcomes, strict=True)
    ]
    return pd.DataFrame(rows)


def fit_slope(x: Iterable[float], y: Iterable[float]) -> float:
    """Return the least-squares slope of log(y) against log(x)."""
    return float(np.polyfit(np.log(list(x)), np.log(list(y)), 1)[0])


def _label(row: pd.Series) -> str:
    if row["method"] == "ps":
        return "PS (eq. 29)"
    return f"relaxation {row['integrator']}, eps = {row['eps'] / row['h']:.0e} h"


def plot_study(frame: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Draw Fig. 14d-f per example (rho-hat vs h and vs wall time); return the PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = {  # x column: its label and the panel's title
        "h": ("step size h / s", "error vs step size (Fig. 14d-e)"),
        "wall_s": ("wall time / s", "error vs computation time (Fig. 14f)"),
    }
    paths = []
    for example, rows in frame.groupby("example", sort=True):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        labels = rows.apply(_label, axis=1)
        for ax, (column, (xlabel, title)) in zip(axes, panels.items(), strict=True):
            for label, group in rows.groupby(labels, sort=True):
                group = group.sort_values("h")
                style = "s--" if group["method"].iloc[0] == "ps" else "o-"
                ax.loglog(group[column], group["rho_hat"], style, label=label)
            ax.set(
                xlabel=xlabel, ylabel="rho-hat (eq. 30)", title=f"{example}: {title}"
            )
            ax.grid(True, which="major", alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / f"{example}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths
