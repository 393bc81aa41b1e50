"""The hybrid system: modes with flows, the edges between them, and the
model's default experiment.

The edges (`Edge`) and their guards (`Guard`, `VectorGuard`), in
`core.guards`, load with the first one built, so a run without them (a plain
FMU) builds none of their classes; their names here forward there (PEP 562).

References
----------
Burden et al., Def. 7 (eq. 5): H = (J, Gamma, D, U, F, G, R).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .errors import FmibridgeError
from .numbers import is_real
from .records import COMPILED_FORMS

if TYPE_CHECKING:  # a Mode holds a Flow; the flows layer sits above this one
    from ..flows.base import Flow
    from .guards import Edge, UnilateralConstraint

# names that moved to core.guards, still importable from here
_MOVED = "DIRECTIONS Edge Guard GuardEntry UnilateralConstraint VectorGuard".split()


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".guards", __package__), name)


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
