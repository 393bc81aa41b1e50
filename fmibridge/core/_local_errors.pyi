"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

SCALE_FLOOR: float
SAFETY: float
UNSTABLE_STEPS: int
UNSTABLE_GROWTH: float

class LocalErrors:
    n: int
    error_order: int
    n_estimated: int
    def __init__(self, x0: Any, error_order: int, threshold: float = ...) -> None: ...
    def instability(self) -> dict[str, float]: ...
    def add_step(self, t1: float, h: float, x1: Any, err: Any) -> Any: ...
    def report(self, threshold: float) -> Any: ...
    def strip_report(self, threshold: float) -> Any: ...
