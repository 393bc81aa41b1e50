"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from dataclasses import dataclass
from typing import Any

SURFACE_RTOL: Any
SIDES: Any

@dataclass(frozen=True)
class End:
    sigma: float
    f: float
    data: object = ...

def illinois(fun: Any, lo: Any, hi: Any, *, width: float, max_iter: int) -> Any: ...
def bracketed(lo_f: float, hi_f: float) -> Any: ...
def fires(direction: Any, g0: float, g1: float) -> Any: ...
