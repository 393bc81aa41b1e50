"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.methods._mode import CompiledMode
from fmibridge.methods._walk import Walk

RESOLUTION_ULPS: float
ROUND_OFF_BRACKET: float
LONGEST_SHORTFALL: float
PROBE: float

class _Walk(Walk): ...

def attempt(
    method: Any, cm: CompiledMode, state: Any, t_end: float, t0: float, log: Any
) -> Any: ...
