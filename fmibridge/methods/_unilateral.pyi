"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from typing import Any

import numpy as np

from fmibridge.core._functions import Function

FULL: int
REACHED: int
DUE: int
STUCK: int
NON_FINITE: int
BAND_C: float
FD_STEP: float

class Rows:
    m: int
    n: int
    nnz: int
    def __init__(
        self, starts: Any, columns: Any, n: int, mask: Any = ..., refuse: Any = ...
    ) -> None: ...
    @staticmethod
    def dense(m: int, n: int) -> Any: ...

class CentralDifferences(Function):
    def __init__(self, g: Function, rows: Rows, what: str) -> None: ...

class PythonGradient(Function):
    def __init__(self, fn: Any, rows: Rows, what: str, sparse: bool = ...) -> None: ...

class Rates:
    def __init__(self, parts: Any, layouts: Any, part_of: Any, row_of: Any) -> None: ...

class Bank:
    name: str
    n: int
    n_atoms: int
    n_edges: int
    rhs: Function
    guards: Function
    rates: Rates
    def __init__(
        self,
        name: str,
        rhs: Function,
        guards: Function,
        singles: Any,
        owner: Any,
        base: Any,
        unilateral: Any,
        curved: Any,
        n_edges: int,
    ) -> None: ...

class History:
    held: int
    def __init__(self, bank: Bank) -> None: ...
    @property
    def t(self) -> Any: ...
    @property
    def x(self) -> Any: ...

class _Work:
    def __init__(self, bank: Bank) -> None: ...

def due_edges(bank: Bank, method: Any, memory: History) -> Any: ...
def flight(
    bank: Bank,
    method: Any,
    memory: History,
    t: float,
    x: Any,
    t_end: float,
    reach_tol: float,
    max_steps: int,
    ts: np.ndarray,
    xs: np.ndarray,
) -> Any: ...
