"""Native flows: dynamics given as a Python callable f(t, x, u)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..core.errors import FmibridgeError
from .base import VectorField, checked_names

InputFn = Callable[[float], np.ndarray | float]


class NativeFlow(VectorField):
    """Continuous dynamics x' = f(t, x, u(t)) defined in Python.

    Parameters
    ----------
    f : callable
        f(t, x, u) -> dx/dt, with x a float64 array and u the value of
        `inputs` at t (None when there are no inputs).
    state_names : sequence of str
        One unique name per state, in the order of x.
    inputs : callable, optional
        u(t), evaluated at every stage time the integrator needs.
    name : str, optional
        Name recorded in provenance.

    Examples
    --------
    >>> import numpy as np
    >>> flow = NativeFlow(lambda t, x, u: np.array([x[1], -9.81]), ["h", "v"])
    >>> flow.rhs(0.0, np.array([1.0, 0.0])).tolist()
    [0.0, -9.81]
    """

    def __init__(
        self,
        f: Callable[[float, np.ndarray, object], np.ndarray],
        state_names: Sequence[str],
        *,
        inputs: InputFn | None = None,
        name: str = "native",
    ) -> None:
        names = checked_names(f"NativeFlow `{name}`", f, state_names)
        if inputs is not None and not callable(inputs):
            raise FmibridgeError(
                f"NativeFlow `{name}`: `inputs` must be callable u(t)."
            )
        self._f, self._inputs, self.name = f, inputs, name
        self.state_names = names

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return f(t, x, u(t))."""
        u = None if self._inputs is None else self._inputs(t)
        return self._f(t, x, u)

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = native:NAME``."""
        return {"flow": f"native:{self.name}"}
