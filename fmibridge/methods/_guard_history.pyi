"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

POINTS: int

class GuardHistory:
    m: int
    n: int
    beyond_t: float
    def __init__(self, m: int) -> None: ...
