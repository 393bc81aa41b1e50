"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.methods._mode import CompiledMode

FIRED: int
SILENT: int

def fire_edge(
    on_approach: bool,
    t_tol: float,
    cm: CompiledMode,
    log: Any,
    t: float,
    x: Any,
    i: int,
    others: tuple[Any, ...],
) -> Any: ...
