"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.methods._mode import CompiledMode

class Walk:
    t: float
    def __init__(self, cm: CompiledMode) -> None: ...

def drive(
    method: Any,
    system: Any,
    state: Any,
    t_end: float,
    log: Any,
    update: Any,
    watch: Any,
    tolerance: tuple[float, float] | None,
    hooked: frozenset[str],
    kind: type[Walk] | None,
) -> tuple[Any, str]: ...
def attempt(
    kind: type[Walk],
    method: Any,
    cm: CompiledMode,
    state: Any,
    t_end: float,
    t0: float,
    log: Any,
) -> Any: ...
