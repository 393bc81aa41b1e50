"""Validation: exact oscillator with stop, PS baseline, error metrics, the study.

The ground truth (`exact`, `paoli_schatzman`, `metrics`) uses numpy and scipy,
not the methods it checks; `study` and `cli` run the methods against it
(``fmibridge validate``). A front door: may import every layer below, and
`sweep.execution` to run a study on Dask; never the package root's `cli`.

References
----------
Burden et al., "Metrization and simulation of controlled hybrid systems",
Sec. V-B (Table I, eqs. 28-30).
"""

from ..models.oscillator import EXAMPLE_1, EXAMPLE_2, OscillatorParams, gap, reset, rhs
from .exact import AnalyticTrajectory, Impact, Phase, exact_solution
from .metrics import quotient_distance_bound, rho_eps_bound, rho_hat
from .paoli_schatzman import PSResult, paoli_schatzman

__all__ = [
    "EXAMPLE_1",
    "EXAMPLE_2",
    "AnalyticTrajectory",
    "Impact",
    "OscillatorParams",
    "PSResult",
    "Phase",
    "exact_solution",
    "gap",
    "paoli_schatzman",
    "quotient_distance_bound",
    "reset",
    "rho_eps_bound",
    "rho_hat",
    "rhs",
]
