"""Fixed-step explicit Runge-Kutta schemes, each a Butcher tableau.

A scheme advances x' = f(t, x) by one step of size h; the step itself is
compiled once for every scheme (`_rk.Tableau.step`). The right-hand side is
called at the stage times t + c_i h, so a time-varying input u(t) read inside
f is sampled where the scheme needs it (t + h/2 for the midpoint rule); holding
u over the step would cap every scheme at order one (Burden et al., Sec. IV-C).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._functions import PythonVector
from ._rk import Tableau

Rhs = Callable[[float, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Scheme:
    """An explicit Runge-Kutta scheme given by its Butcher tableau.

    Parameters
    ----------
    name : str
        Name used on the command line and in provenance.
    order : int
        Global order of accuracy.
    a : tuple of tuple of float
        Strictly lower-triangular stage coefficients, one row per stage.
    b : tuple of float
        Weights.
    c : tuple of float
        Stage times as fractions of the step.

    Examples
    --------
    >>> import numpy as np
    >>> float(RK4.step(lambda t, x: -x, 0.0, np.array([1.0]), 0.1)[0])
    0.9048375
    """

    name: str
    order: int
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    c: tuple[float, ...]

    def step(
        self,
        f: Rhs,
        t: float,
        x: np.ndarray,
        h: float,
        slope: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return the approximation of x(t + h) from x(t), f a Python function.

        `slope`, f(t, x) if the caller knows it, stands in for the first stage,
        which an explicit scheme evaluates there: the same values, one
        evaluation fewer. The step is the compiled one (`tableau`).
        """
        x = np.asarray(x, dtype=float)
        rhs = PythonVector(f, x.size, x.size, f"f `{getattr(f, '__name__', 'f')}`")
        return self.tableau.advance(rhs, t, x, h, slope)

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tableau as dense float arrays (a, b, c)."""
        s = len(self.b)
        a = np.zeros((s, s))
        for i, row in enumerate(self.a):
            a[i, : len(row)] = row
        return a, np.array(self.b, dtype=float), np.array(self.c, dtype=float)

    @cached_property
    def tableau(self) -> Tableau:
        """The tableau as the compiled loops step with it."""
        return Tableau(*self.arrays)

    def __repr__(self) -> str:
        return f"Scheme({self.name!r}, order={self.order})"


EULER = Scheme("euler", 1, a=((),), b=(1.0,), c=(0.0,))
MIDPOINT = Scheme("midpoint", 2, a=((), (0.5,)), b=(0.0, 1.0), c=(0.0, 0.5))
RK4 = Scheme(
    "rk4",
    4,
    a=((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)),
    b=(1 / 6, 1 / 3, 1 / 3, 1 / 6),
    c=(0.0, 0.5, 0.5, 1.0),
)

SCHEMES: dict[str, Scheme] = {s.name: s for s in (EULER, MIDPOINT, RK4)}


def scheme_named(name: str | Scheme) -> Scheme:
    """Return the scheme called `name` ('euler', 'midpoint', 'rk4')."""
    if isinstance(name, Scheme):
        return name
    try:
        return SCHEMES[name]
    except KeyError:
        from .errors import FmibridgeError

        raise FmibridgeError(
            f"`integrator` must be one of {sorted(SCHEMES)}, got {name!r}."
        ) from None
