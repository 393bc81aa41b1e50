"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

ROLES: tuple[str, ...]
STATUS_NAMES: tuple[str, ...]
ELEMENTS: tuple[str, ...]

class FmiFunctions:
    ARGUMENTS: tuple[tuple[str, ...], ...]
    STEP_FLAG: int
    logger: Callable[[str], None] | None
    def __init__(
        self,
        component: int,
        addresses: Mapping[str, int],
        names: Mapping[str, str],
        error: Any,
        logger: Callable[[str], None] | None = ...,
    ) -> None: ...

class Fmi1Functions(FmiFunctions): ...
class Fmi3Functions(FmiFunctions): ...

class Ports:
    n: int
    def __init__(self, n: int, reader: Any = ..., writer: Any = ...) -> None: ...

class RealPorts(Ports):
    def __init__(
        self, fmi: FmiFunctions, vrs: Any, touched: Callable[[], None] | None = ...
    ) -> None: ...
    def get(self) -> np.ndarray: ...
    def set(self, values: Any) -> None: ...
