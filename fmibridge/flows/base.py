"""The Flow interface: continuous dynamics of one mode, native or FMU."""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ..core._functions import Function, PythonVector
from ..core.errors import FmibridgeError
from ..core.integrators import Scheme, scheme_named
from ._programs import program_function
from ._stepper import (
    AdaptiveStepper,
    EmbeddedStepper,
    FieldStepper,
    FlowStepper,
    Stepper,
)

if TYPE_CHECKING:
    from .stiff import Stiff

STIFF_NAMES = ("cvode", "bdf")  # what a user may call the stiff integrator (`Stiff`)


def integrator_named(name) -> Scheme | Stiff:
    """Return the integrator called `name`: the stiff one ('cvode', 'bdf',
    loaded only then), or what `core.integrators.scheme_named` takes."""
    if isinstance(name, str) and name in STIFF_NAMES:
        from .stiff import Stiff

        return Stiff()
    return scheme_named(name, STIFF_NAMES)


def checked_names(flow: str, f: object, state_names) -> tuple[str, ...]:
    """Check a flow's f is callable and its state names unique and non-empty."""
    if not callable(f):
        raise FmibridgeError(f"{flow}: `f` must be callable.")
    names = tuple(state_names)
    if not names or len(set(names)) != len(names):
        raise FmibridgeError(
            f"{flow}: `state_names` must be unique and non-empty, got {list(names)}."
        )
    return names


UndoPlan = Callable[[float, np.ndarray, float], bool]  # Flow.plan_undo's argument


class Flow(abc.ABC):
    """Continuous dynamics of one mode. Knows nothing of guards or methods.

    Subclass contract:

    1. Set `state_names` (tuple of str) in the constructor.
    2. `advance(t, x, h, scheme)` returns x(t + h) from x(t), and is repeatable:
       the same (t, x, h) gives the same result, whatever was advanced before.
    3. `close()` frees any external resource; it may be called twice.
    4. Optionally, a flow with discrete behaviour of its own (an FMU) records
       columns (`recorded_names`, `observe`, its events where `reports_events`),
       schedules time events (`next_event_time`, `discrete_event`), asks for an
       event after a step (`step_completed`), and ends the run
       (`is_terminated`, or `core.errors.FlowTerminated`).
    """

    state_names: tuple[str, ...]
    units: Mapping[str, str] = MappingProxyType({})  # column name -> unit, if known
    recorded_names: tuple[str, ...] = ()
    reports_events: bool = False  # `observe` may return events of the flow's own
    is_terminated: bool = False

    @abc.abstractmethod
    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h) from x(t); `scheme` is ignored where the flow integrates."""

    def stepper(self, scheme: Scheme) -> Stepper:
        """Return this flow's steps for the compiled loops: `advance`, called back."""
        return FlowStepper(self, scheme, len(self.state_names))

    def adaptive_stepper(
        self, integrator: Scheme, rtol: float, atol: float
    ) -> AdaptiveStepper:
        """Refuse: only a flow with dx/dt has steps under a tolerance."""
        raise FmibridgeError(
            f"{_label(self)} integrates itself (it has no dx/dt), so a method "
            f"cannot choose its steps under a tolerance (rtol = {rtol:g}): give "
            f"a step h, or use the FMU's Model Exchange interface."
        )

    def expression_function(self, program, constants, failure, what: str):
        """Return an adapter expression's `program` as a Function of (t, x), or
        None where it reads names other than t, the states and `constants`."""
        return program_function(program, self.state_names, constants, failure, what)

    def variables(self, t: float, x: np.ndarray) -> dict[str, float]:
        """Return every named quantity at (t, x): states, and outputs if any."""
        return dict(zip(self.state_names, map(float, x), strict=True))

    def describe(self) -> dict[str, str]:
        """Return provenance entries for the Result."""
        return {"flow": type(self).__name__}

    def plan_undo(self, may_undo: UndoPlan) -> None:  # noqa: B027 - optional hook
        """Be told which steps the run may undo (`methods.forecast`): a flow that
        saves its state to undo a step saves it only there."""

    def observe(self, t: float, x: np.ndarray) -> tuple[dict[str, float], tuple]:
        """Return the `recorded_names` values at the sample (t, x), and the events
        handled in the step ending there: (t, name, x_before, x_after[, recorded])."""
        return {}, ()

    def next_event_time(self) -> float:
        """Return the time of the next event the flow has scheduled (inf: none)."""
        return math.inf

    def discrete_event(self, t: float, x: np.ndarray) -> np.ndarray:
        """Run the flow's own event at (t, x) and return the state after it."""
        return x

    def step_completed(self, t: float, x: np.ndarray) -> bool:
        """Tell the flow a step ended at (t, x); True if it asks for an event there."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook: most flows hold nothing
        """Free the FMU instance, if any."""

    def __enter__(self) -> Flow:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class VectorField(Flow):
    """A flow that exposes dx/dt, so the master integrates it (native, ME).

    A subclass implements `rhs` in Python (wrapped once into a Function) or
    `rhs_function` itself (compiled).
    """

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt at (t, x), inputs included."""
        return self.rhs_function()(t, x)

    def rhs_function(self) -> Function:
        """Return dx/dt as the compiled loops call it (built once)."""
        if "_rhs_function" not in self.__dict__:
            if type(self).rhs is VectorField.rhs:
                raise NotImplementedError(
                    f"{type(self).__name__} implements neither rhs nor rhs_function."
                )
            n = len(self.state_names)
            what = f"the flow {_label(self)}"
            self.__dict__["_rhs_function"] = PythonVector(self.rhs, n, n, what)
        return self.__dict__["_rhs_function"]

    def jacobian_function(self) -> Function | None:
        """Return df/dx as a Function of n*n values (entry j*n + i is df_i/dx_j),
        or None (an implicit integrator then takes difference quotients)."""
        return None

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h): one step of `scheme` on the right-hand side."""
        return scheme.tableau.advance(self.rhs_function(), t, x, h)

    def stepper(self, scheme: Scheme) -> Stepper:
        """Return steps of `scheme` on the right-hand side, compiled."""
        return FieldStepper(self.rhs_function(), scheme.tableau)

    def adaptive_stepper(
        self, integrator: Scheme, rtol: float, atol: float
    ) -> AdaptiveStepper:
        """Return steps under (rtol, atol): compiled for an embedded pair, else
        `integrator.adaptive_stepper(flow, rtol, atol)`."""
        if isinstance(integrator, Scheme):
            return EmbeddedStepper(self.rhs_function(), integrator.tableau, rtol, atol)
        return integrator.adaptive_stepper(self, rtol, atol)


def python_force(fn, n: int, what: str) -> Function:
    """Return a Python force map fn(t, x, lam) as a Function of (t, [x, lam])."""

    def force(t: float, z: np.ndarray) -> np.ndarray:
        return fn(t, z[:n], float(z[n]))

    return PythonVector(force, n + 1, n, f"{what} (with the contact force lam)")


def _label(flow: Flow) -> str:
    """The flow as messages name it: its class and name."""
    name = getattr(flow, "name", "")
    return f"{type(flow).__name__} `{name}`" if name else type(flow).__name__


class ForcedVectorField(VectorField):
    """Capability: dx/dt also with a generalized contact force `lam` (completion).

    `rhs_with_force(t, x, lam)` applies the term dh(q)^T lam; it is affine in
    `lam`, so lam = 0 and lam = 1 give the map completion needs.

    References
    ----------
    Or and Ames, eqs. (5)-(7).
    """

    @abc.abstractmethod
    def rhs_with_force(self, t: float, x: np.ndarray, lam: float) -> np.ndarray:
        """Return dx/dt at (t, x) with the contact force `lam` applied."""

    def force_function(self) -> Function:
        """Return the force map for the compiled loops: a Function of [x, lam]
        (default `rhs_with_force`, called back; built once)."""
        if "_force_function" not in self.__dict__:
            self.__dict__["_force_function"] = python_force(
                self.rhs_with_force, len(self.state_names), f"the flow {_label(self)}"
            )
        return self.__dict__["_force_function"]

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt at (t, x) without contact force (lam = 0)."""
        return self.rhs_with_force(t, x, 0.0)
