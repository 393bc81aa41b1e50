"""Validation ground truth: exact oscillator with stop, PS baseline, error metrics.

Written independently of the numerical methods it checks (pure numpy/scipy).

References
----------
Burden et al., "Metrization and simulation of controlled hybrid systems",
Sec. V-B (Table I, eqs. 28-30).
"""

from .exact import AnalyticTrajectory, Impact, Phase, exact_solution
from .metrics import quotient_distance_bound, rho_eps_bound, rho_hat
from .oscillator import EXAMPLE_1, EXAMPLE_2, OscillatorParams, gap, reset, rhs
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
