"""Where the continuous dynamics come from: native callables or FMUs."""

from .base import Flow, ForcedVectorField, VectorField
from .native import NativeFlow

__all__ = ["Flow", "ForcedVectorField", "NativeFlow", "VectorField"]
