"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from dataclasses import dataclass
from typing import Any

SIDES: Any

@dataclass(frozen=True)
class End:
    sigma: float
    f: float
    data: object = None

def illinois(fun: Any, lo: Any, hi: Any, *, width: float, max_iter: int) -> Any: ...
def bracketed(lo_f: float, hi_f: float) -> Any: ...
