"""Native flows: dynamics given as a Python callable f(t, x, u) or f(t, x)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np

from ..core.errors import FmibridgeError
from .base import VectorField, checked_names


class NativeFlow(VectorField):
    """Continuous dynamics x' = f(t, x, u(t)) defined in Python.

    Parameters
    ----------
    f : callable
        f(t, x, u) -> dx/dt, with x a float64 array and u the value of
        `inputs` at t (None when there are no inputs); or f(t, x) (the
        signature of solve_ivp and CompiledFlow) when there are no inputs.
        Its first value is checked: one finite number per state.
    state_names : sequence of str
        One unique name per state, in the order of x.
    inputs : callable, optional
        u(t), evaluated at every stage time the integrator needs.
    name : str, optional
        Name recorded in provenance.

    Raises
    ------
    FmibridgeError
        If f takes neither (t, x) nor (t, x, u), takes (t, x) with `inputs`,
        or (at its first call) does not return one finite value per state.

    Examples
    --------
    >>> import numpy as np
    >>> flow = NativeFlow(lambda t, x, u: np.array([x[1], -9.81]), ["h", "v"])
    >>> flow.rhs(0.0, np.array([1.0, 0.0])).tolist()
    [0.0, -9.81]
    >>> NativeFlow(lambda t, x: -x, ["y"]).rhs(0.0, np.array([2.0])).tolist()
    [-2.0]
    """

    def __init__(
        self,
        f: Callable[..., np.ndarray],  # f(t, x, u) or f(t, x)
        state_names: Sequence[str],
        *,
        inputs: Callable[[float], np.ndarray | float] | None = None,
        name: str = "native",
    ) -> None:
        names = checked_names(f"NativeFlow `{name}`", f, state_names)
        if inputs is not None and not callable(inputs):
            raise FmibridgeError(
                f"NativeFlow `{name}`: `inputs` must be callable u(t)."
            )
        self._takes_u = _takes_inputs(f, name)
        if inputs is not None and not self._takes_u:
            raise FmibridgeError(
                f"NativeFlow `{name}`: f takes (t, x) but `inputs` are given; write "
                f"f(t, x, u) to receive them."
            )
        self._f, self._inputs, self.name = f, inputs, name
        self.state_names, self._is_checked = names, False

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return f(t, x, u(t)) (or f(t, x)); at the first call, checked to be
        one finite value per state."""
        if self._takes_u:
            dx = self._f(t, x, None if self._inputs is None else self._inputs(t))
        else:
            dx = self._f(t, x)
        if self._is_checked:
            return dx
        try:
            values: np.ndarray | None = np.asarray(dx, dtype=float)
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape != x.shape or not np.all(np.isfinite(values)):
            got = (
                repr(dx)
                if values is None
                else f"{values.size} value(s) {values.tolist()}"
            )
            fn = getattr(self._f, "__name__", type(self._f).__name__)
            raise FmibridgeError(
                f"NativeFlow `{self.name}`: f (`{fn}`) returned {got} at t = {t!r}, "
                f"x = {np.asarray(x).tolist()}; expected {x.size} finite values, one "
                f"per state {list(self.state_names)}."
            )
        self._is_checked = True
        return values

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = native:NAME``."""
        return {"flow": f"native:{self.name}"}


def _takes_inputs(f: Callable, name: str) -> bool:
    """Return True if f takes (t, x, u), False if it takes (t, x); else raise."""
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):  # a builtin or extension: assume (t, x, u)
        return True
    for n in (3, 2):
        try:
            signature.bind(*range(n))
        except TypeError:
            continue
        return n == 3
    raise FmibridgeError(
        f"NativeFlow `{name}`: f must take (t, x) or (t, x, u), but its signature "
        f"is {getattr(f, '__name__', 'f')}{signature}."
    )
