"""Where the continuous dynamics come from: one Flow interface (`base`), several
sources (native, compiled, FMU, coupled). Flows import core only, never methods.
"""

from .base import Flow, ForcedVectorField, VectorField
from .native import NativeFlow

__all__ = ["Flow", "ForcedVectorField", "NativeFlow", "VectorField"]
