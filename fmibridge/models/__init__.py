"""Built-in and paper models, each a HybridSystem (or a recipe for one).

- `ball`: the bouncing ball, with its exact impact and Zeno times;
- `oscillator`: the forced linear oscillator with a stop (Burden et al., Table I);
- `lagrangian`: Lagrangian hybrid systems with one unilateral contact (Or and Ames),
  their model functions compiled by numba on request (`_lagrangian`: the
  Euler-Lagrange field, one compiled Function);
- `or_ames`: the examples of Or and Ames (flat and sine-surface balls, knee pendulum);
- `pronk`: the pronking robot with two legs (Burden et al., Sec. V-C).

May import core, flows and methods (a model's contact is completion's data);
never formats or the front doors.
"""

from .ball import bouncing_ball, bouncing_ball_impacts, bouncing_ball_zeno_time
from .lagrangian import LagrangianSystem, to_hybrid
from .oscillator import EXAMPLE_1, EXAMPLE_2, OscillatorParams, forced_oscillator

__all__ = [
    "EXAMPLE_1",
    "EXAMPLE_2",
    "LagrangianSystem",
    "OscillatorParams",
    "bouncing_ball",
    "bouncing_ball_impacts",
    "bouncing_ball_zeno_time",
    "forced_oscillator",
    "to_hybrid",
]
