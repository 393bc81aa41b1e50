"""Master algorithms: each a small class with its parameters."""

import dataclasses
from collections.abc import Mapping

from ..errors import FmibridgeError
from .base import Method, State, Step
from .completion import Completion
from .halving import Halving
from .relaxation import Relaxation
from .unilateral import Unilateral

METHODS: dict[str, type[Method]] = {
    "halving": Halving,
    "relaxation": Relaxation,
    "unilateral": Unilateral,
}

__all__ = [
    "METHODS",
    "Completion",
    "Halving",
    "Method",
    "method_named",
    "Relaxation",
    "State",
    "Step",
    "Unilateral",
]


def method_named(name: str, options: Mapping[str, object]) -> Method:
    """Build the method called `name` from `options`, naming any unknown option."""
    if name not in METHODS:
        raise FmibridgeError(
            f"`method` must be one of {sorted(METHODS)}, got {name!r}."
        )
    cls = METHODS[name]
    known = sorted(f.name for f in dataclasses.fields(cls))
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise FmibridgeError(
            f"Method {name!r} takes no option(s) {unknown}; its options are {known}."
        )
    return cls(**options)
