"""Explicit Runge-Kutta schemes, each a Butcher tableau with an error estimate.

The right-hand side is called at the stage times t + c_i h, so an input u(t)
is sampled where the scheme needs it (Burden et al., Sec. IV-C). The step is
compiled (`_rk.Tableau`). The local error is estimated as h (sum_i e_i k_i +
e_{s+1} f(t + h, x1)), O(h^q); docs/guide/tolerances.md gives each scheme's.
dopri5 has a continuous extension of order 4 (`dense`) and, under a tolerance,
chooses its steps (`flows._stepper.EmbeddedStepper`).

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.1, II.4 (eqs. 4.10-4.13),
II.5 (Table 5.2: DOPRI5), II.6 (dense output).
Dormand and Prince, J. Comp. Appl. Math. 6 (1980), 19-26.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._functions import PythonVector
from ._rk import Tableau
from .errors import FmibridgeError

# A stability polynomial's root counts as real where |imag| is below this
# fraction of |z| (companion-matrix roots are accurate to about 1e-12).
ROOT_IMAG = 1e-9
# A stable step keeps h |lam| at this fraction of the stability boundary (a
# safety factor, Hairer, Norsett and Wanner, Solving ODEs I, eq. 4.13).
STABLE_SAFETY = 0.9


@dataclass(frozen=True, repr=False)  # its own __repr__, shorter
class Scheme:
    """An explicit Runge-Kutta scheme given by its Butcher tableau.

    Parameters
    ----------
    name : str
        Name used on the command line and in provenance.
    order : int
        Global order of accuracy.
    a, b, c : tuples of float
        Stage coefficients (lower-triangular rows), weights and stage times.
    error : tuple of float
        Error weights e, one per stage and a last one for f(t + h, x1).
    error_order : int
        q: the estimate is O(h^q).
    dense : tuple of tuple of float, optional
        Continuous extension x + h sum_i B_i(theta) k_i, B_i(theta) = sum_j
        dense[i][j] theta^(j+1) (the last k is f(t + h, x1)).
    is_adaptive : bool
        True for a scheme that chooses its steps under a tolerance.

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
    error: tuple[float, ...] = ()
    error_order: int = 0
    dense: tuple[tuple[float, ...], ...] | None = None
    is_adaptive: bool = False

    def step(
        self,
        f: Callable[[float, np.ndarray], np.ndarray],
        t: float,
        x: np.ndarray,
        h: float,
        slope: np.ndarray | None = None,
    ) -> np.ndarray:
        """Return x(t + h) from x(t), f a Python function; `slope` is f(t, x)
        where known (the first stage, one evaluation fewer)."""
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
        dense = None if self.dense is None else np.array(self.dense, dtype=float)
        return Tableau(
            *self.arrays, self.error, self.error_order, dense, self.stability_boundary
        )

    @cached_property
    def stability_polynomial(self) -> np.ndarray:
        """Coefficients of R(z), lowest power first: x1 = R(h lam) x on x' = lam
        x, R(z) = 1 + sum_j z^j b^T A^(j-1) 1 (Hairer and Wanner, Solving ODEs
        II, Sec. IV.2)."""
        a, b, _ = self.arrays
        coefficients, power = [1.0], np.ones(len(b))
        for _ in b:
            coefficients.append(float(b @ power))
            power = a @ power
        return np.array(coefficients)

    def _real_reach(self, level: float) -> list[float]:
        """The rho > 0 where abs(R(-rho)) = level, increasing."""
        p = self.stability_polynomial
        found = []
        for side in (level, -level):
            shifted = p * (-1.0) ** np.arange(p.size)  # R(-rho) in powers of rho
            shifted[0] -= side
            shifted = np.trim_zeros(shifted, "b")
            found += [
                z.real
                for z in np.polynomial.polynomial.polyroots(shifted)
                if abs(z.imag) <= ROOT_IMAG * abs(z) and z.real > ROOT_IMAG
            ]
        return sorted(found)

    @cached_property
    def stability_boundary(self) -> float:
        """The length of the stability interval on the negative real axis (2 for
        Euler, 2.785 for RK4, 3.307 for DOPRI5)."""
        return float(self._real_reach(1.0)[0])

    def pole_rate(self, h: float, growth: float) -> float:
        """Return abs(lam) of a real pole that steps of h amplify by `growth` > 1
        each: rho / h, rho the first point past the boundary with abs(R(-rho))
        = growth."""
        rho = next(r for r in self._real_reach(growth) if r >= self.stability_boundary)
        return float(rho / h)

    def stable_step(self, rate: float) -> float:
        """Return a step stable on a real pole of abs(lam) = `rate`."""
        return float(STABLE_SAFETY * self.stability_boundary / rate)

    def __repr__(self) -> str:
        return f"Scheme({self.name!r}, order={self.order})"


EULER = Scheme(
    "euler", 1, a=((),), b=(1.0,), c=(0.0,), error=(0.5, -0.5), error_order=2
)
MIDPOINT = Scheme(
    "midpoint",
    2,
    a=((), (0.5,)),
    b=(0.0, 1.0),
    c=(0.0, 0.5),
    error=(-1 / 3, 2 / 3, -1 / 3),
    error_order=3,
)
RK4 = Scheme(
    "rk4",
    4,
    a=((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)),
    b=(1 / 6, 1 / 3, 1 / 3, 1 / 6),
    c=(0.0, 0.5, 0.5, 1.0),
    error=(0.0, 0.0, 0.0, 1 / 6, -1 / 6),
    error_order=4,
)


def _dopri5() -> Scheme:
    """Dormand-Prince 5(4) (Hairer, Norsett and Wanner, Table II.5.2) with the
    continuous extension of Hairer's DOPRI5 (Sec. II.6: x + theta (r2 + (1 -
    theta) (r3 + theta (r4 + (1 - theta) r5))), expanded in powers of theta).
    The seventh stage is f(t + h, x1); coefficients are exact rationals."""
    a = (
        (),
        ((1, 5),),
        ((3, 40), (9, 40)),
        ((44, 45), (-56, 15), (32, 9)),
        ((19372, 6561), (-25360, 2187), (64448, 6561), (-212, 729)),
        ((9017, 3168), (-355, 33), (46732, 5247), (49, 176), (-5103, 18656)),
    )
    b = ((35, 384), (0, 1), (500, 1113), (125, 192), (-2187, 6784), (11, 84), (0, 1))
    b4 = (
        (5179, 57600), (0, 1), (7571, 16695), (393, 640), (-92097, 339200),
        (187, 2100), (1, 40),
    )  # fmt: skip
    d = (
        (-12715105075, 11282082432), (0, 1), (87487479700, 32700410799),
        (-10690763975, 1880347072), (701980252875, 199316789632),
        (-1453857185, 822651844), (69997945, 29380423),
    )  # fmt: skip
    first, last = (1, 0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 1)
    dense = tuple(
        (
            float(e1),
            _exact((3, bi), (-2 * e1 - e7, (1, 1)), (1, di)),
            _exact((-2, bi), (e1 + e7, (1, 1)), (-2, di)),
            _exact((1, di)),
        )
        for bi, di, e1, e7 in zip(b, d, first, last, strict=True)
    )
    return Scheme(
        "dopri5",
        5,
        a=tuple(tuple(_exact((1, x)) for x in row) for row in a),
        b=tuple(_exact((1, x)) for x in b[:6]),
        c=(0.0, 0.2, 0.3, 0.8, 8 / 9, 1.0),
        error=tuple(_exact((1, x), (-1, y)) for x, y in zip(b, b4, strict=True)),
        error_order=5,
        dense=dense,
        is_adaptive=True,
    )


def _exact(*terms: tuple[int, tuple[int, int]]) -> float:
    """The sum of k n/d over the `terms` (k, (n, d)), rounded once to a float."""
    den = math.prod(d for _, (_, d) in terms)
    return sum(k * n * (den // d) for k, (n, d) in terms) / den


DOPRI5 = _dopri5()

SCHEMES: dict[str, Scheme] = {s.name: s for s in (EULER, MIDPOINT, RK4, DOPRI5)}


def scheme_named(name: str | Scheme, others: tuple[str, ...] = ()) -> Scheme:
    """Return the scheme called `name` ('euler', 'midpoint', 'rk4', 'dopri5');
    the error also lists the `others` a caller takes.

    An adaptive integrator that is no tableau (one with `is_adaptive = True`
    and `adaptive_stepper(flow, rtol, atol)`) is taken as given.
    """
    if isinstance(name, Scheme) or getattr(name, "is_adaptive", False):
        return name  # type: ignore[return-value]
    if name not in SCHEMES:
        raise FmibridgeError(
            f"`integrator` must be one of {sorted([*SCHEMES, *others])}, got {name!r}."
        )
    return SCHEMES[name]
