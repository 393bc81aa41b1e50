"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from fmibridge.methods._walk import Walk

PROJECT_GTOL: float
PROJECT_MAX_ITER: int

class _Walk(Walk): ...
