"""The hybrid system: modes with flows, edges with guards and resets.

A guard g(t, x) is positive inside the domain; a "falling" guard fires when g
reaches zero from above, a "rising" one from below (FMI event indicators).

References
----------
Burden et al., Def. 7 (eq. 5): H = (J, Gamma, D, U, F, G, R).
Or and Ames, Sec. 2: unilateral constraint h(q) >= 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from .errors import FmibridgeError
from .numbers import is_real
from .records import COMPILED_FORMS, name_of

if TYPE_CHECKING:  # a Mode holds a Flow; the flows layer sits above this one
    from ..flows.base import Flow

Direction = Literal["falling", "rising", "either"]
DIRECTIONS = ("falling", "rising", "either")
Kind = Literal["unilateral", "bilateral"]
KINDS = ("unilateral", "bilateral")
GuardFn = Callable[[float, np.ndarray], float]
ResetFn = Callable[[float, np.ndarray], np.ndarray]
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


@dataclass(frozen=True)
class Mode:
    """A discrete mode: its continuous flow and its outgoing edges."""

    name: str
    flow: Flow
    edges: Sequence[Edge] = ()  # held as a tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "edges", tuple(self.edges))

    def __getstate__(self) -> dict[str, object]:
        """The fields, without the compiled forms the methods keep here."""
        return {k: v for k, v in self.__dict__.items() if k != COMPILED_FORMS}


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


@dataclass(frozen=True, repr=False, eq=False)
class Experiment:
    """A model's default experiment (an FMU's DefaultExperiment).

    A value is None where the model does not give it; an explicit value always
    wins. One that fails its check is held in `invalid` (name -> error) and
    raises that FmibridgeError only where it is read.
    """

    start: float | None = None
    stop: float | None = None
    step: float | None = None
    tolerance: float | None = None
    invalid: Mapping[str, str] = field(default_factory=dict)

    def __getattribute__(self, name: str) -> object:
        if name in EXPERIMENT_VALUES:
            problem = object.__getattribute__(self, "invalid").get(name)
            if problem is not None:
                raise FmibridgeError(problem)
        return object.__getattribute__(self, name)

    def __repr__(self) -> str:
        values = (
            f"{name}={object.__getattribute__(self, name)!r}"
            for name in EXPERIMENT_VALUES
        )
        return f"Experiment({', '.join(values)}, invalid={sorted(self.invalid)})"


EXPERIMENT_VALUES = ("start", "stop", "step", "tolerance")


@dataclass(frozen=True)
class HybridSystem:
    """A hybrid system: modes, the initial mode and state, and parameters.

    All modes share one state vector, named by `state_names` (those of the
    initial mode's flow).

    Parameters
    ----------
    modes : sequence of Mode
        The modes; their names must be unique.
    initial_mode : str
        Name of the mode at t0.
    x0 : array_like or mapping
        Initial state, as an array or as {state name: value}.
    t0 : float, optional
        Initial time, s.
    parameters : mapping, optional
        Model parameters, recorded in provenance.
    constraint : UnilateralConstraint, optional
        The contact data that completion methods need.
    name : str, optional
        Name recorded in provenance.
    experiment : Experiment, optional
        The model's defaults (`Method.run`'s t_end is its `stop`).
    """

    modes: Mapping[str, Mode]  # given as a sequence, held by name
    initial_mode: str
    x0: np.ndarray  # given as an array or a mapping, held as an array
    t0: float = 0.0
    parameters: Mapping[str, float] = field(default_factory=dict)
    constraint: UnilateralConstraint | None = None
    name: str = "system"
    experiment: Experiment = field(default_factory=Experiment)

    if TYPE_CHECKING:  # what __init__ takes (the dataclass's, at run time)

        def __init__(
            self,
            modes: Sequence[Mode],
            initial_mode: str,
            x0: ArrayLike | Mapping[str, float],
            t0: float = 0.0,
            parameters: Mapping[str, float] = ...,
            constraint: UnilateralConstraint | None = None,
            name: str = "system",
            experiment: Experiment = ...,
        ) -> None: ...

    def __post_init__(self) -> None:
        given = cast(Sequence[Mode], self.modes)  # held by name from here on
        modes = {m.name: m for m in given}
        if len(modes) != len(given):
            raise FmibridgeError(
                f"HybridSystem `{self.name}`: mode names must be unique."
            )
        object.__setattr__(self, "modes", modes)
        if self.initial_mode not in modes:
            raise FmibridgeError(
                f"HybridSystem `{self.name}`: unknown `initial_mode` "
                f"{self.initial_mode!r}; modes are {sorted(modes)}."
            )
        self._check_modes(modes.values())
        object.__setattr__(self, "x0", self._initial_array(self.x0))
        if not np.isfinite(self.t0):
            raise FmibridgeError(f"HybridSystem `{self.name}`: `t0` must be finite.")

    @property
    def state_names(self) -> tuple[str, ...]:
        """The names of the shared state vector."""
        return tuple(self.modes[self.initial_mode].flow.state_names)

    def mode(self, name: str) -> Mode:
        """Return the mode called `name`."""
        return self.modes[name]

    def with_initial(
        self, start: Mapping[str, float] | None = None, t0: float | None = None
    ) -> HybridSystem:
        """Return this system starting from other values of some states, or at t0.

        Examples
        --------
        >>> from fmibridge.models import bouncing_ball
        >>> bouncing_ball().with_initial({"h": 2.0}).x0.tolist()
        [2.0, 0.0]
        """
        x0 = dict(zip(self.state_names, self.x0.tolist(), strict=True))
        unknown = sorted(set(start or {}) - set(x0))
        if unknown:
            raise FmibridgeError(
                f"HybridSystem `{self.name}`: unknown start value(s) {unknown}; the "
                f"states are {list(x0)}."
            )
        return HybridSystem(
            list(self.modes.values()),
            self.initial_mode,
            {**x0, **(start or {})},
            t0=self.t0 if t0 is None else t0,
            parameters=self.parameters,
            constraint=self.constraint,
            name=self.name,
            experiment=self.experiment,
        )

    def flows(self) -> Iterable[Flow]:
        """Yield each distinct flow once."""
        return {id(mode.flow): mode.flow for mode in self.modes.values()}.values()

    def close(self) -> None:
        """Free every flow (FMU instances)."""
        for flow in self.flows():
            flow.close()

    def _check_modes(self, modes: Iterable[Mode]) -> None:
        names = self.modes[self.initial_mode].flow.state_names
        for mode in modes:
            if tuple(mode.flow.state_names) != tuple(names):
                raise FmibridgeError(
                    f"HybridSystem `{self.name}`: mode {mode.name!r} has states "
                    f"{list(mode.flow.state_names)}, mode {self.initial_mode!r} has "
                    f"{list(names)}; all modes must share one state vector."
                )
            for edge in mode.edges:
                if edge.target not in self.modes:
                    raise FmibridgeError(
                        f"HybridSystem `{self.name}`: edge {edge.name!r} of mode "
                        f"{mode.name!r} targets unknown mode {edge.target!r}."
                    )

    def _initial_array(self, x0: object) -> np.ndarray:
        names = self.state_names
        if isinstance(x0, Mapping):
            unknown = sorted(set(x0) - set(names))
            missing = [n for n in names if n not in x0]
            if unknown or missing:
                raise FmibridgeError(
                    f"HybridSystem `{self.name}`: `x0` has unknown state(s) {unknown} "
                    f"and lacks {missing}; the states are {list(names)}."
                )
            for n in names:
                if np.ndim(x0[n]) or not is_real(x0[n]):
                    raise FmibridgeError(
                        f"HybridSystem `{self.name}`: the start value of state "
                        f"{n!r} must be a number, got {x0[n]!r}."
                    )
            x0 = [x0[n] for n in names]
        x = np.array(x0, dtype=float).reshape(-1) if is_real(x0) else None
        if x is None or x.shape != (len(names),) or not np.all(np.isfinite(x)):
            raise FmibridgeError(
                f"HybridSystem `{self.name}`: `x0` must be {len(names)} finite "
                f"values for states {list(names)}, got {x0!r}."
            )
        return x
