"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.methods._mode import CompiledMode

FIRED: int
SILENT: int

def fire_edge(
    method: Any, cm: CompiledMode, log: Any, state: Any, i: int, others: tuple[Any, ...]
) -> Any: ...
