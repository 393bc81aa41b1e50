"""Edges and their guards: the transitions of a hybrid system (`Edge`: when its
guard fires, its reset maps the state into the target mode), the surfaces
g(t, x) = 0 that end a mode (`Guard`, or many as one `VectorGuard`), and the
unilateral contact h(q) >= 0 that completion reads.

A guard g(t, x) is positive inside the domain; a "falling" guard fires when g
reaches zero from above, a "rising" one from below (FMI event indicators).

References
----------
Burden et al., Def. 7 (eq. 5): the edges Gamma, guards G and resets R of
H = (J, Gamma, D, U, F, G, R).
Or and Ames, Sec. 2: unilateral constraint h(q) >= 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from .errors import FmibridgeError
from .records import name_of

Direction = Literal["falling", "rising", "either"]
DIRECTIONS = ("falling", "rising", "either")
Kind = Literal["unilateral", "bilateral"]
KINDS = ("unilateral", "bilateral")
GuardFn = Callable[[float, np.ndarray], float]
# a Guard's fields that take one of a few words, and those words
_CHOICES = {"direction": DIRECTIONS, "reset_at": ("surface", "beyond"), "kind": KINDS}


@dataclass(frozen=True)
class Guard:
    """Surface g(t, x) = 0 that ends a mode; g > 0 inside the domain.

    Parameters
    ----------
    fn : callable
        g(t, x) -> float.
    direction : {'falling', 'rising', 'either'}
        Which zero crossing fires: from g > 0 to g < 0, the reverse, or both.
    name : str, optional
        Name in the event log; defaults to the function's name.
    reset_at : {'surface', 'beyond'}
        Reset on g = 0, or at the first point beyond (a reset that tests its
        own condition, as an FMU's event mode).
    kind : {'unilateral', 'bilateral'}
        Whether the guard may be crossed (Esposito and Kumar, Sec. 2.3); read
        by `Unilateral` only.
    """

    fn: GuardFn
    direction: Direction = "falling"
    name: str = ""
    reset_at: Literal["surface", "beyond"] = "surface"
    kind: Kind = "unilateral"

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise FmibridgeError(f"Guard: `fn` must be callable, got {self.fn!r}.")
        for key, words in _CHOICES.items():
            if getattr(self, key) not in words:
                allowed = ", ".join(map(repr, words[:-1])) + f" or {words[-1]!r}"
                raise FmibridgeError(
                    f"Guard `{self.name or name_of(self.fn)}`: `{key}` must be "
                    f"{allowed}, got {getattr(self, key)!r}."
                )
        if not self.name:
            object.__setattr__(self, "name", name_of(self.fn))

    def __call__(self, t: float, x: np.ndarray) -> float:
        return float(self.fn(t, x))

    def is_beyond(self, g: float) -> bool:
        """Return True if the value g lies outside the domain this guard bounds."""
        return {"falling": g < 0.0, "rising": g > 0.0}.get(self.direction, False)


VectorGradientFn = Callable[[float, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True, eq=False)
class VectorGuard:
    """Many guards of a mode as one function g(t, x) -> m values (g_i > 0 inside).

    `guards[i]` is entry i's guard function (a `GuardEntry`); g is evaluated
    once per point for all entries.

    Parameters
    ----------
    fn : callable
        g(t, x) -> `size` values; a pure function of (t, x).
    size : int
        m, the number of guards.
    gradient : callable, optional
        (t, x) -> (dg/dx (m, n), dg/dt (m,)) for `Unilateral`'s Lie derivatives
        (Esposito and Kumar, eq. 2); else central differences.
    affine : bool or sequence of bool
        Which entries are affine in x (one flag for all, or one per entry).
    name : str, optional
        Name in messages; defaults to the function's name.
    sparsity : (m, n) array_like of bool, optional
        Which entries of dg/dx may be non-zero (as solve_ivp's `jac_sparsity`).
    sparse_gradient : bool
        `gradient` returns dg/dx at the True entries of `sparsity` only, in the
        order of ``np.nonzero(sparsity)``.

    Examples
    --------
    >>> walls = VectorGuard(lambda t, x: np.array([x[0], 1.0 - x[0]]), 2)
    >>> Guard(walls[1], name="right")(0.0, np.array([0.25]))
    0.75
    """

    fn: Callable[[float, np.ndarray], np.ndarray]
    size: int
    gradient: VectorGradientFn | None = None
    affine: bool | Sequence[bool] | np.ndarray = False
    name: str = ""
    sparsity: np.ndarray | None = None
    sparse_gradient: bool = False
    # [(the last point (t, x as bytes), g there)], replaced whole: thread-safe reads
    _last: list = field(default_factory=lambda: [None], init=False, repr=False)

    def __post_init__(self) -> None:
        name = self.name or name_of(self.fn)
        object.__setattr__(self, "name", name)
        if not callable(self.fn):
            raise FmibridgeError(f"VectorGuard `{name}`: `fn` must be callable.")
        if not (isinstance(self.size, int | np.integer) and self.size >= 1):
            raise FmibridgeError(
                f"VectorGuard `{name}`: `size` must be an integer >= 1, got "
                f"{self.size!r}."
            )
        if self.gradient is not None and not callable(self.gradient):
            raise FmibridgeError(f"VectorGuard `{name}`: `gradient` must be callable.")
        affine = np.asarray(self.affine)
        if affine.dtype != bool or affine.size not in (1, self.size):
            raise FmibridgeError(
                f"VectorGuard `{name}`: `affine` must be one bool or {self.size} "
                f"bools, got {self.affine!r}."
            )
        object.__setattr__(self, "affine", np.resize(affine, self.size))
        if self.sparsity is not None:
            pattern = np.asarray(self.sparsity)
            if pattern.dtype != bool or pattern.ndim != 2 or len(pattern) != self.size:
                raise FmibridgeError(
                    f"VectorGuard `{name}`: `sparsity` must be a 2-D array of bools "
                    f"with {self.size} rows (one per entry, one column per state)."
                )
            object.__setattr__(self, "sparsity", pattern)
        if self.sparse_gradient and (self.gradient is None or self.sparsity is None):
            raise FmibridgeError(
                f"VectorGuard `{name}`: `sparse_gradient` needs a `gradient` and a "
                f"`sparsity` (the gradient returns dg/dx at its True entries)."
            )

    def pattern(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The columns of dg/dx each entry may have non-zero, by rows: (starts,
        columns), entry r's columns[starts[r]:starts[r + 1]] (n states)."""
        pattern = self.sparsity
        if pattern is None:
            pattern = np.ones((self.size, n), dtype=bool)
        if pattern.shape[1] != n:
            raise FmibridgeError(
                f"VectorGuard `{self.name}`: `sparsity` has {pattern.shape[1]} "
                f"columns; the mode has {n} states."
            )
        rows, columns = np.nonzero(pattern)
        starts = np.searchsorted(rows, np.arange(self.size + 1))
        return starts.astype(np.int64), columns.astype(np.int64)

    def __getitem__(self, i: int) -> GuardEntry:
        """The guard function of entry i."""
        if not (isinstance(i, int | np.integer) and 0 <= i < self.size):
            raise FmibridgeError(
                f"VectorGuard `{self.name}`: no entry {i!r}; it has {self.size}."
            )
        return GuardEntry(self, int(i))

    def values(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return g(t, x), computed once per point (`size` values, or raise)."""
        key = (t, x.dtype.str, x.tobytes())
        last = self._last[0]
        if last is not None and last[0] == key:
            return last[1]
        g = np.asarray(self.fn(t, x), dtype=float)
        if g.shape != (self.size,):
            raise FmibridgeError(
                f"VectorGuard `{self.name}` returned {g.size} value(s) at t = {t!r}, "
                f"x = {x.tolist()}; expected {self.size}."
            )
        self._last[0] = (key, g)
        return g


@dataclass(frozen=True, eq=False)
class GuardEntry:
    """The guard function g_i(t, x) = g(t, x)[i] of entry i of a VectorGuard."""

    vector: VectorGuard
    index: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "__name__", f"{self.vector.name}[{self.index}]")

    def __call__(self, t: float, x: np.ndarray) -> float:
        return float(self.vector.values(t, x)[self.index])

    @property
    def affine(self) -> bool:
        """Is g_i affine in x?"""
        return bool(np.asarray(self.vector.affine)[self.index])


@dataclass(frozen=True)
class UnilateralConstraint:
    """A unilateral contact h >= 0 with restitution, for completion methods.

    Parameters
    ----------
    gap, velocity : str
        Names of the gap h(q) and its velocity dh/dq qdot (states or outputs).
    restitution : float
        Newton's coefficient e in [0, 1].
    """

    gap: str
    velocity: str
    restitution: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.restitution <= 1.0:
            raise FmibridgeError(
                f"UnilateralConstraint: `restitution` must be in [0, 1], "
                f"got {self.restitution!r}."
            )


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
