"""Fixed-step explicit Runge-Kutta schemes, each a Butcher tableau.

A scheme advances x' = f(t, x) by one step of size h. The right-hand side is
called at the stage times t + c_i h, so a time-varying input u(t) read inside
f is sampled where the scheme needs it (t + h/2 for the midpoint rule); holding
u over the step would cap every scheme at order one (Burden et al., Sec. IV-C).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

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

    def __post_init__(self) -> None:
        # The tableau's nonzero entries, once: (c_i, ((j, a_ij), ...)) per stage and
        # (i, b_i) per weight; zero terms add nothing, so step() skips them.
        stages = tuple(
            (c_i, tuple((j, a_ij) for j, a_ij in enumerate(row) if a_ij))
            for row, c_i in zip(self.a, self.c, strict=True)
        )
        weights = tuple((i, b_i) for i, b_i in enumerate(self.b) if b_i)
        object.__setattr__(self, "_stages", stages)
        object.__setattr__(self, "_weights", weights)

    def step(
        self,
        f: Rhs,
        t: float,
        x: np.ndarray,
        h: float,
        slope: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return the approximation of x(t + h) from x(t).

        `slope`, f(t, x) if the caller knows it (the rates at the end of the
        step before), stands in for the first stage, which an explicit scheme
        evaluates there: the same values, one evaluation fewer.
        """
        slopes = [] if slope is None or self.c[0] != 0.0 else [slope]
        for c_i, row in self._stages[len(slopes) :]:
            x_stage = x
            for j, a_ij in row:
                x_stage = x_stage + (h * a_ij) * slopes[j]
            slopes.append(np.asarray(f(t + c_i * h, x_stage), dtype=float))
        (i, b_i), *rest = self._weights
        increment = b_i * slopes[i]
        for i, b_i in rest:
            increment = increment + b_i * slopes[i]
        return x + h * increment

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The tableau as dense float arrays (a, b, c), for the compiled kernels."""
        s = len(self.b)
        a = np.zeros((s, s))
        for i, row in enumerate(self.a):
            a[i, : len(row)] = row
        return a, np.array(self.b, dtype=float), np.array(self.c, dtype=float)

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
