"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

def next_after(times: Any, t: float, tol: float) -> float: ...
