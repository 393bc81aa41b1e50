"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

MAX_WIDTH: int
ROOT_XTOL: Any

def first_reach(polys: Any, upper: float) -> Any: ...
