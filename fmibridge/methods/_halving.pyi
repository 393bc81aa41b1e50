"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from fmibridge.methods._walk import Walk

RESOLUTION_ULPS: float
ROUND_OFF_BRACKET: float
LONGEST_SHORTFALL: float
PROBE: float

class _Walk(Walk): ...
