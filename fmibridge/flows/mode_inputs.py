"""One FMU seen from one mode: inputs fixed in the mode, and inputs the master holds.

`ModeInputs` sets a mode's fixed inputs (a legged model's contact
configuration) and the held inputs (a pinned foot's ground position, set at
touchdown; Burden et al., Sec. V-C) before every evaluation. Held inputs are
appended to the state with zero derivative, so resets assign them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import Scheme
from .base import Flow, VectorField
from .fmu import CoSimulationFlow, ModelExchangeFlow

INTEGERS = ("Integer", "Int32")  # the types of the discrete inputs a mode fixes


def _inner(name: str, *default: object) -> property:
    """The inner flow's attribute `name` (`default` where it has none)."""
    return property(lambda self: getattr(self.flow, name, *default))


class _ModeInputs:
    """Shared body of both wrappers (see `mode_inputs`)."""

    def __init__(
        self, flow, fixed: Mapping[str, float], held: Mapping[str, float], mode: str
    ):
        self.flow, self.mode = flow, mode
        self._n = len(flow.state_names)
        self.state_names = tuple(flow.state_names) + tuple(held)
        self._held_vrs = [self._input(name, "held input", real=True) for name in held]
        self._fixed_reals: dict[int, float] = {}
        self._fixed_ints: dict[int, int] = {}
        for name, value in fixed.items():
            vr = self._input(name, f"input of mode {mode!r}")
            if flow.archive.variables[name].type not in INTEGERS:
                self._fixed_reals[vr] = float(value)
            elif float(value) != round(value):
                raise FmibridgeError(
                    f"{flow.path}: input {name!r} of mode {mode!r} is an integer, "
                    f"got {value!r}."
                )
            else:
                self._fixed_ints[vr] = round(value)
        self.x0 = np.concatenate([flow.x0, np.array(list(held.values()), dtype=float)])

    def _input(self, name: str, role: str, real: bool = False) -> int:
        """The value reference of the input `name` (`real`: not an integer)."""
        variable = self.flow.archive.variables.get(name)
        if variable is None or variable.causality != "input":
            raise FmibridgeError(
                f"{self.flow.path}: {role} {name!r} is not an input of the FMU."
            )
        if real and variable.type in INTEGERS:
            raise FmibridgeError(
                f"{self.flow.path}: {role} {name!r} has type {variable.type}."
            )
        return variable.vr

    def _apply(self, t: float, x: np.ndarray) -> None:
        instance = self.flow.instance
        if self._held_vrs:
            instance.set_reals(self._held_vrs, x[self._n :])
        if self._fixed_reals:
            instance.set_reals(
                list(self._fixed_reals), list(self._fixed_reals.values())
            )
        if self._fixed_ints:
            self.flow.set_discrete_inputs(t, x[: self._n], self._fixed_ints)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        self._apply(t, x)
        held = dict(
            zip(self.state_names[self._n :], map(float, x[self._n :]), strict=True)
        )
        return {**self.flow.variables(t, x[: self._n]), **held}

    def describe(self) -> dict[str, str]:
        return {**self.flow.describe(), "mode_inputs": self.mode}

    # -- the FMU's own discrete behaviour, seen from this mode -----------------

    recorded_names = _inner("recorded_names")
    units = _inner("units")
    is_terminated = _inner("is_terminated")
    forward_only = _inner("forward_only", False)
    reports_events = _inner("reports_events")

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        self._apply(t, x)
        observed, events = self.flow.observe(t, x[: self._n])
        held = x[self._n :]
        return observed, tuple(
            (t_e, name, np.concatenate([xb, held]), np.concatenate([xa, held]), *rest)
            for t_e, name, xb, xa, *rest in events
        )

    def next_event_time(self) -> float:
        return self.flow.next_event_time()

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        self._apply(t, x)
        return np.concatenate([self.flow.discrete_event(t, x[: self._n]), x[self._n :]])

    def step_completed(self, t: float, x: np.ndarray) -> bool:
        self._apply(t, x)
        return self.flow.step_completed(t, x[: self._n])

    def close(self) -> None:
        self.flow.close()


class ModeInputsVectorField(_ModeInputs, VectorField):  # type: ignore[override]  # Flow's attributes read from the inner flow
    """A Model Exchange FMU in one mode; the master integrates it."""

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt with this mode's inputs set; held inputs do not move."""
        self._apply(t, x)
        return np.concatenate(
            [self.flow.rhs(t, x[: self._n]), np.zeros(len(x) - self._n)]
        )


class ModeInputsFlow(_ModeInputs, Flow):  # type: ignore[override]  # Flow's attributes read from the inner flow
    """A Co-Simulation FMU in one mode; the FMU integrates it."""

    def _apply(self, t: float, x: np.ndarray) -> None:
        self.flow.goto(t, x[: self._n])  # restore first: a saved state holds old inputs
        super()._apply(t, x)

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h) with this mode's inputs set; held inputs do not move."""
        self._apply(t, x)
        return np.concatenate(
            [self.flow.advance(t, x[: self._n], h, scheme), x[self._n :]]
        )


def mode_inputs(
    flow: ModelExchangeFlow | CoSimulationFlow,
    fixed: Mapping[str, float],
    held: Mapping[str, float],
    mode: str,
) -> ModeInputsVectorField | ModeInputsFlow:
    """Return `flow` as seen from `mode`, with its fixed and held inputs.

    Parameters
    ----------
    flow : ModelExchangeFlow or CoSimulationFlow
    fixed : mapping
        Input name to the value it takes in this mode (integers for discrete
        inputs, set through the FMU's event mode in Model Exchange).
    held : mapping
        Input name to its start value; the master holds it in the state.
    mode : str
        The mode's name, for messages.
    """
    cls = (
        ModeInputsVectorField if isinstance(flow, ModelExchangeFlow) else ModeInputsFlow
    )
    return cls(flow, fixed, held, mode)
