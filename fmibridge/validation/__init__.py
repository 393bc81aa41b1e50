"""Validation ground truth: exact oscillator with stop, PS baseline, error metrics.

Written independently of the numerical methods it checks (pure numpy/scipy).

References
----------
Burden et al., "Metrization and simulation of controlled hybrid systems",
Sec. V-B (Table I, eqs. 28-30).
"""

from .exact import AnalyticTrajectory, Impact, Phase, exact_solution
from .oscillator import EXAMPLE_1, EXAMPLE_2, OscillatorParams, gap, reset, rhs

__all__ = [
    "EXAMPLE_1",
    "EXAMPLE_2",
    "AnalyticTrajectory",
    "Impact",
    "OscillatorParams",
    "Phase",
    "exact_solution",
    "gap",
    "reset",
    "rhs",
]
