"""Master algorithms: each a small class with its parameters, run by one loop.

- `base`: Method (the bounded run loop, firing, provenance), State, Step;
- `halving`: fixed steps, halved (or Illinois-narrowed) until a crossing is bracketed;
- `relaxation`: strip relaxation (Burden et al., Fig. 12);
- `unilateral`: extrapolated unilateral stepping (Esposito and Kumar), with `adams`
  (the PECE predictor-corrector) and `polyroots` (the smallest positive root);
- `completion`: Zeno completion (Or and Ames) around any of the above, with
  `contact` (one unilateral contact's impact law, force and projection),
  `coupled_contact` (a contact between components of a coupled system, the
  force on each through its force input), `projection` and `_projection` (the
  constrained phase by projection, for a model without a force input),
  `_contact` (the contact's numerics, compiled) and `_completion` (the
  constrained phase, compiled).

May import core and flows; never models, formats or the front doors.
"""

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..core.errors import FmibridgeError
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


def method_named(name: str, options: Mapping[str, Any]) -> Method:
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
