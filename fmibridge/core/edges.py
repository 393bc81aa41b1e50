"""Edges: the transitions of a hybrid system. When an edge's guard fires, its
reset maps the state into the target mode.

References
----------
Burden et al., Def. 7 (eq. 5): the edges Gamma, guards G and resets R of
H = (J, Gamma, D, U, F, G, R).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import FmibridgeError

if TYPE_CHECKING:
    from .guards import Guard, GuardFn

ResetFn = Callable[[float, np.ndarray], np.ndarray]


def _identity(t: float, x: np.ndarray) -> np.ndarray:
    """The identity reset R(t, x) = x (an edge that only changes mode)."""
    return x


@dataclass(frozen=True)
class Edge:
    """A transition: when `guard` fires, apply `reset` and go to mode `target`.

    Parameters
    ----------
    guard : Guard or callable
        The guard; a bare function g(t, x) is a falling guard.
    target : str
        Name of the mode entered.
    reset : callable, optional
        R(t, x) -> x', the state in the target mode; identity by default.
    name : str, optional
        Name in the event log; defaults to the guard's name.
    approach : callable, optional
        An impact's normal velocity v_n(t, x): it resets only where v_n < 0 (Or
        and Ames eq. 4), else it is a graze (`n_grazes`). Default: the guard's rate.
    discrete_change : callable, optional
        Whether the model's own event changed its discrete state (then it is
        logged even where x is unchanged).
    """

    guard: Guard  # given as a Guard or a callable (its `direction`, `kind` if set)
    target: str
    reset: ResetFn = _identity
    name: str = ""
    approach: GuardFn | None = None
    discrete_change: Callable[[], bool] | None = None

    if TYPE_CHECKING:  # what __init__ takes (the dataclass's, at run time)

        def __init__(
            self,
            guard: Guard | GuardFn,
            target: str,
            reset: ResetFn = _identity,
            name: str = "",
            approach: GuardFn | None = None,
            discrete_change: Callable[[], bool] | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        from .guards import Guard

        fn = self.guard
        if not isinstance(fn, Guard):
            direction = getattr(fn, "direction", "falling")
            guard = Guard(fn, direction, kind=getattr(fn, "kind", "unilateral"))
            object.__setattr__(self, "guard", guard)
        if not callable(self.reset):
            raise FmibridgeError(f"Edge `{self.name}`: `reset` must be callable.")
        if self.approach is not None and not callable(self.approach):
            raise FmibridgeError(f"Edge `{self.name}`: `approach` must be callable.")
        if not self.name:
            object.__setattr__(self, "name", self.guard.name)

    @property
    def has_reset(self) -> bool:
        """False for the identity reset, which the compiled loops skip."""
        return self.reset is not _identity
