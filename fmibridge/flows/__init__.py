"""Where the continuous dynamics come from: one Flow interface, several sources.

`base` (Flow, VectorField, ForcedVectorField), `native` (Python callables),
`compiled` (numba), `fmi` and `fmu` (FMUs), `_programs` (adapter
expressions), `mode_inputs`, and coupled systems: `components`, `coupling`,
`loops`, `coupled` and `cosim_master`. May import core only; flows never
import methods.
"""

from .base import Flow, ForcedVectorField, VectorField
from .native import NativeFlow

__all__ = ["Flow", "ForcedVectorField", "NativeFlow", "VectorField"]
