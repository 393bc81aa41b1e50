"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.methods._mode import CompiledMode
from fmibridge.methods._walk import Walk

PROJECT_GTOL: float
PROJECT_MAX_ITER: int

class _Walk(Walk): ...

def attempt(
    method: Any, cm: CompiledMode, state: Any, t_end: float, log: Any
) -> Any: ...
