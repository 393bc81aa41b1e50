"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from fmibridge.methods._mode import CompiledMode

class Walk:
    t: float
    def __init__(self, cm: CompiledMode) -> None: ...
