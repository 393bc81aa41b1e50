"""Master algorithms: each a small class with its parameters, run by one loop.

- `base`: Method (the bounded run loop, firing, provenance); the State and Step
  records it passes to its compiled loops are `core.records`' (re-exported here);
- `halving`: fixed steps, halved (or Illinois-narrowed) until a crossing is bracketed;
- `_guard_history`: the guards' values at a flow's last points and the crossing
  they predict (Halving's walk of a flow stepped forward only, and `forecast`:
  which steps a Co-Simulation FMU saves its state before);
- `relaxation`: strip relaxation (Burden et al., Fig. 12);
- `_walk`: the compiled walk these two share (the point, its trials, the steps
  of one call up to the next output time);
- `unilateral`: extrapolated unilateral stepping (Esposito and Kumar), with `adams`
  (the PECE predictor-corrector) and `polyroots` (the smallest positive root);
- `completion`: Zeno completion (Or and Ames) around any of the above, with
  `contact` (one unilateral contact's impact law, force and projection, and
  the recipe every contact is built by), `coupled_contact` (a contact between
  components of a coupled system, the force on each through its force input),
  `projection` (the constrained phase by projection, for a model without a
  force input), `_contact` (the contact's numerics, compiled) and `_completion`
  (the constrained phase, compiled).

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

# The methods load on first use (a run imports only its own): class -> module.
_MODULES = {
    "Completion": "completion",
    "Halving": "halving",
    "Relaxation": "relaxation",
    "Unilateral": "unilateral",
}
# names that `method_named` takes -> class
_NAMED = {"halving": "Halving", "relaxation": "Relaxation", "unilateral": "Unilateral"}

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


def __getattr__(name: str) -> Any:
    if name == "METHODS":  # name -> class, every method loaded
        value: Any = {key: __getattr__(cls) for key, cls in _NAMED.items()}
    elif name in _MODULES:
        value = getattr(import_module(f".{_MODULES[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def is_a(value: object, name: str) -> bool:
    """isinstance(value, the method class `name`) without loading its module:
    while it is not loaded, nothing is an instance of it."""
    module = sys.modules.get(f"{__name__}.{_MODULES[name]}")
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
