"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

class Function:
    n_in: int
    n_out: int
    what: str
    def __init__(self, n_in: int, n_out: int, what: str) -> None: ...
    def __call__(self, t: float, x: Any) -> Any: ...

class PythonVector(Function):
    def __init__(self, fn: Any, n_in: int, n_out: int, what: str) -> None: ...

class PythonScalars(Function):
    def __init__(self, fns: Any, n_in: int, what: str) -> None: ...

class CAddress(Function):
    def __init__(
        self, address: int, n_in: int, n_out: int, what: str, keep: Any = ...
    ) -> None: ...

class Gathered(Function):
    parts: tuple[Any, ...]
    def __init__(
        self, parts: Any, part_of: Any, entry_of: Any, n_in: int, what: str
    ) -> None: ...
