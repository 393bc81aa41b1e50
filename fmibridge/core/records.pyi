"""Signatures of the compiled module, for type checkers (the code is the .pyx)."""

import enum
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .errors import FmibridgeError
from .integrators import Scheme

class _Mode(Protocol):
    name: str
    flow: Any
    edges: Any

ON_SURFACE: float
TIME_RTOL: float
COMPILED_FORMS: str

class Status(enum.Enum):
    REACHED_END = ...
    MAX_STEPS = ...
    MAX_EVENTS = ...
    NO_PROGRESS = ...
    ZENO = ...
    ZENO_NOT_TRUNCATED = ...
    TERMINATED = ...
    STIFF = ...
    OVERSTEPPED = ...
    INTERRUPTED = ...
    TIME_LIMIT = ...
    FAILED = ...
    @property
    def is_success(self) -> bool: ...

@dataclass(frozen=True)
class Event:
    t: float
    edge: str
    source: str
    target: str
    x_before: np.ndarray
    x_after: np.ndarray
    simultaneous: tuple[str, ...] = ()
    t_tol: float = ...

@dataclass(frozen=True)
class State:
    t: float
    x: np.ndarray
    mode: str

@dataclass(frozen=True)
class Rated(State):
    rates: list[float] | None = None
    slope: np.ndarray | None = None
    h_next: float | None = None

@dataclass(frozen=True)
class Waiting(State):
    t_reset: float = 0.0
    edge: int = 0
    others: tuple[str, ...] = ()

@dataclass(frozen=True)
class Step:
    state: State
    stop: Status | None = None
    detail: str = ""

def non_finite(
    mode: _Mode, t: float, x: np.ndarray, g: list[float]
) -> FmibridgeError: ...
def unstable(
    name: str, scheme: Scheme, mode: _Mode, growth: dict
) -> FmibridgeError: ...
def name_of(fn: object) -> str: ...
