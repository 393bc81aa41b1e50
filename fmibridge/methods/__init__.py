"""Master algorithms: each a small class with its parameters, run by one loop.

`base` (Method: the bounded run loop), `halving`, `relaxation` (Burden et al.,
Fig. 12), `unilateral` (Esposito and Kumar) and `completion` (Or and Ames) with
its contacts; the compiled walks and kernels beside them (docs/guide/engine.md).
May import core and flows; never models, formats or the front doors.
"""

import dataclasses
import sys
from collections.abc import Mapping
from importlib import import_module
from typing import Any

from ..core.errors import FmibridgeError
from ..core.records import State, Step
from .base import Method

# The methods load on first use (a run imports only its own), each from the
# module named as its class in lower case.
_CLASSES = ("Completion", "Halving", "Relaxation", "Unilateral")
# names that `method_named` takes -> class
_NAMED = {"halving": "Halving", "relaxation": "Relaxation", "unilateral": "Unilateral"}

__all__ = ["METHODS", *_CLASSES, "Method", "method_named", "State", "Step"]


def __getattr__(name: str) -> Any:
    if name == "METHODS":  # name -> class, every method loaded
        value: Any = {key: __getattr__(cls) for key, cls in _NAMED.items()}
    elif name in _CLASSES:
        value = getattr(import_module(f".{name.lower()}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def is_a(value: object, name: str) -> bool:
    """isinstance(value, method class `name`), False while its module is not loaded."""
    module = sys.modules.get(f"{__name__}.{name.lower()}")
    return module is not None and isinstance(value, getattr(module, name))


def method_named(name: str, options: Mapping[str, Any]) -> Method:
    """Build the method called `name` from `options`, naming any unknown option."""
    if name not in _NAMED:
        raise FmibridgeError(f"`method` must be one of {sorted(_NAMED)}, got {name!r}.")
    cls = __getattr__(_NAMED[name])
    known = sorted(f.name for f in dataclasses.fields(cls))
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise FmibridgeError(
            f"Method {name!r} takes no option(s) {unknown}; its options are {known}."
        )
    return cls(**options)
