"""Explicit Runge-Kutta schemes, each a Butcher tableau with an error estimate.

A scheme advances x' = f(t, x) by one step of size h; the step itself is
compiled once for every scheme (`_rk.Tableau.step`). The right-hand side is
called at the stage times t + c_i h, so a time-varying input u(t) read inside
f is sampled where the scheme needs it (t + h/2 for the midpoint rule); holding
u over the step would cap every scheme at order one (Burden et al., Sec. IV-C).

Every scheme carries error weights e: the step's local error is estimated as
h (sum_i e_i k_i + e_{s+1} f(t + h, x1)), with the slope at the step's end,
which the methods evaluate anyway for the guards' rates (first same as last).
The estimate is O(h^q), q = `error_order`:

- euler: Euler minus Heun's step, h/2 (k1 - f(t + h, x1)); q = 2, the Euler
  step's own leading error.
- midpoint: the midpoint rule minus the second-order formula with weights
  (1/3, 1/3, 1/3) on (k1, k2, f(t + h, x1)): h/3 (2 k2 - k1 - f(t + h, x1));
  q = 3. No third-order formula uses these stages (the conditions sum b c^2 =
  1/3 and sum b a c = 1/6 contradict), so the estimate is that of a second
  companion: its leading term equals the midpoint rule's on the elementary
  differential f'f'f (all of it for linear autonomous x' = A x) and is twice
  it on f''(f, f) (a curvature, or a time-varying input).
- rk4: RK4 minus the third-order formula with weights (1/6, 1/3, 1/3, 0, 1/6)
  on (k1, k2, k3, k4, f(t + h, x1)): h/6 (k4 - f(t + h, x1)); q = 4. It is
  the error of the third-order companion, larger than RK4's own O(h^5) error
  by a factor of about 1/(h L) (L the Lipschitz constant): an upper estimate.
  No other fourth-order formula uses these stages.
- dopri5: Dormand and Prince's 5(4) pair, seven stages, the seventh
  f(t + h, x1); the fifth-order solution is propagated (local extrapolation)
  and the difference to the fourth is the estimate, q = 5. Its continuous
  extension of order 4 (`dense`) gives x anywhere inside an accepted step.

`dopri5` is the adaptive integrator: with a tolerance (rtol, atol) it chooses
its steps (`flows._stepper.EmbeddedStepper`); the fixed-step schemes estimate
the error of the steps they are given.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.1 (order conditions),
II.4 (embedded formulas, automatic step size control, eqs. 4.10-4.13), II.5
(Table 5.2: DOPRI5), II.6 (dense output, continuous Runge-Kutta methods).
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

Rhs = Callable[[float, np.ndarray], np.ndarray]

# A root of a stability polynomial counts as real where its imaginary part is below
# this fraction of its size (the roots are found as a companion matrix's
# eigenvalues, accurate to about 1e-12 relative for these low degrees).
ROOT_IMAG = 1e-9
# A stable step keeps h |lam| at this fraction of the stability boundary: a
# margin for the estimate of lam (as a step size controller's safety factor,
# Hairer, Norsett and Wanner, Solving ODEs I, eq. 4.13).
STABLE_SAFETY = 0.9


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
    error : tuple of float
        Error weights e, one per stage and a last one for f(t + h, x1): the
        local error estimate is h sum_i e_i k_i (module docstring).
    error_order : int
        q: the estimate is O(h^q).
    dense : tuple of tuple of float, optional
        Continuous extension: x(t + theta h) = x + h sum_i B_i(theta) k_i, with
        B_i(theta) = sum_j dense[i][j] theta^(j+1) over the stages and f(t + h,
        x1); None where the scheme has none.
    is_adaptive : bool
        True for a scheme that runs under a tolerance (it chooses its steps).

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
        dense = None if self.dense is None else np.array(self.dense, dtype=float)
        return Tableau(
            *self.arrays, self.error, self.error_order, dense, self.stability_boundary
        )

    @cached_property
    def stability_polynomial(self) -> np.ndarray:
        """Coefficients of R(z), lowest power first: a step on x' = lam x gives
        x1 = R(h lam) x, R(z) = 1 + sum_j z^j b^T A^(j-1) 1 for an explicit
        scheme (Hairer and Wanner, Solving ODEs II, Sec. IV.2)."""
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
        """The length of the stability interval on the negative real axis:
        abs(R(-rho)) <= 1 for 0 <= rho <= this (2 for Euler, 2.785 for RK4, 3.307
        for DOPRI5; Hairer and Wanner, Solving ODEs II, Sec. IV.2)."""
        return float(self._real_reach(1.0)[0])

    def pole_rate(self, h: float, growth: float) -> float:
        """Return abs(lam) of a real pole lam that steps of h amplify by `growth` > 1
        each, beyond the stability boundary: rho / h, rho the first point past
        it where abs(R(-rho)) = growth."""
        rho = next(r for r in self._real_reach(growth) if r >= self.stability_boundary)
        return float(rho / h)

    def stable_step(self, rate: float) -> float:
        """Return a step that is stable on a real pole of abs(lam) = `rate`: the
        stability boundary over abs(lam), times STABLE_SAFETY."""
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
    """Dormand-Prince 5(4) (Hairer, Norsett and Wanner, Table II.5.2) with its
    continuous extension of order 4 (Sec. II.6; the coefficients d of Hairer's
    DOPRI5: x(t + theta h) = x + theta (r2 + (1 - theta) (r3 + theta (r4 +
    (1 - theta) r5))), r2 = x1 - x, r3 = h k1 - r2, r4 = r2 - h k7 - r3, r5 =
    h sum_i d_i k_i, expanded here into powers of theta). The seventh stage is
    f(t + h, x1), so the tableau steps with six. The coefficients are the
    rationals (numerator, denominator), combined exactly (`_exact`)."""
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
    """The sum of k n/d over the `terms` (k, (n, d)), computed exactly in integers
    and rounded once to the nearest float (Python's int / int rounds correctly)."""
    den = math.prod(d for _, (_, d) in terms)
    return sum(k * n * (den // d) for k, (n, d) in terms) / den


DOPRI5 = _dopri5()

SCHEMES: dict[str, Scheme] = {s.name: s for s in (EULER, MIDPOINT, RK4, DOPRI5)}


def scheme_named(name: str | Scheme) -> Scheme:
    """Return the scheme called `name` ('euler', 'midpoint', 'rk4', 'dopri5').

    An adaptive integrator that is no tableau (an implicit one for stiff
    flows) is taken as given: an object with a `name`, `is_adaptive = True` and
    `adaptive_stepper(flow, rtol, atol)` returning a
    `flows._stepper.AdaptiveStepper` (`VectorField.adaptive_stepper`); it may
    enter SCHEMES under its name.
    """
    if isinstance(name, Scheme) or getattr(name, "is_adaptive", False):
        return name  # type: ignore[return-value]
    try:
        return SCHEMES[name]
    except KeyError:
        from .errors import FmibridgeError

        raise FmibridgeError(
            f"`integrator` must be one of {sorted(SCHEMES)}, got {name!r}."
        ) from None
