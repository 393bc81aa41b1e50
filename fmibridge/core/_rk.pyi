"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

from fmibridge.core._functions import Function

class Tableau:
    stages: int
    error_order: int
    degree: int
    stability_boundary: float
    def __init__(
        self,
        a: Any,
        b: Any,
        c: Any,
        e: Any = ...,
        error_order: int = ...,
        p: Any = ...,
        stability_boundary: float = ...,
    ) -> None: ...
    def work_size(self, n: int) -> Any: ...
    def advance(
        self, f: Function, t: float, x: Any, h: float, slope: Any = ...
    ) -> Any: ...
    def estimated(self, f: Function, t: float, x: Any, h: float) -> Any: ...
