"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Sequence

import numpy as np

from fmibridge.core.system import Guard

POINTS: int
REACH: float

class GuardHistory:
    m: int
    n: int
    beyond_t: float
    def __init__(self, m: int) -> None: ...

class CrossingForecast:
    guards: tuple[Guard, ...]
    def __init__(self, guards: Sequence[Guard]) -> None: ...
    def __call__(self, t: float, x: np.ndarray, h: float) -> bool: ...
