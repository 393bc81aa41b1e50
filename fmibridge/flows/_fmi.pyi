"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

ROLES: tuple[str, ...]
STATUS_NAMES: tuple[str, ...]
ELEMENTS: tuple[str, ...]

class FmiFunctions:
    ARGUMENTS: tuple[tuple[str, ...], ...]
    logger: Callable[[str], None] | None
    def __init__(
        self,
        component: int,
        addresses: Mapping[str, int],
        names: Mapping[str, str],
        error: Any,
        logger: Callable[[str], None] | None = ...,
    ) -> None: ...
    def get_into(self, vrs: np.ndarray, out: np.ndarray) -> None: ...
    def set_from(self, vrs: np.ndarray, values: np.ndarray) -> None: ...

class Fmi1Functions(FmiFunctions): ...
class Fmi3Functions(FmiFunctions): ...
