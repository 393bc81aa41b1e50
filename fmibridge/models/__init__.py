"""Built-in and paper models, each a HybridSystem (or a recipe for one).

`ball` (exact impact and Zeno times), `oscillator` (Burden et al., Table I),
`lagrangian` (Or and Ames's Lagrangian hybrid systems), `or_ames` (their
examples), `pronk` (Burden et al., Sec. V-C) and `cradle` (Newton's cradle of
FMUs). May import core, flows and methods (a model's contact is completion's
data); never formats or the front doors.
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
