"""Forced linear oscillator with a stop (Burden et al., Sec. V-B, Table I).

One mode ``D = {x <= x_max}``, guard ``G = {x = x_max, v >= 0}``, reset
``R(x, v) = (x, -c v)``, flow ``x'' + 2 a x' + omega**2 x = u(t) / m`` with
``u(t) = u_amp cos(u_freq t)``.

References
----------
Burden, Gonzalez, Vasudevan, Bajcsy, Sastry, "Metrization and simulation of
controlled hybrid systems", Sec. V-B, Table I, eq. 28.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.guards import Edge, Guard
from ..core.system import HybridSystem, Mode
from ..flows.base import Flow
from ..flows.native import NativeFlow

__all__ = [
    "EXAMPLE_1",
    "EXAMPLE_2",
    "OscillatorParams",
    "forced_oscillator",
    "gap",
    "reset",
    "rhs",
]


@dataclass(frozen=True)
class OscillatorParams:
    """Parameters of the forced linear oscillator with stop (Table I, eq. 28).

    Parameters
    ----------
    a : float
        Damping rate (1/s), ``0 <= a < omega`` (sub-critical, as eq. 28 needs).
    c : float
        Coefficient of restitution, in ``[0, 1]``.
    omega : float
        Natural frequency ``sqrt(k / m)`` (rad/s).
    x_max : float
        Position of the stop (m).
    x0, v0 : float
        State at ``t = 0``, with ``x0 <= x_max``.
    t_max : float
        Horizon of Table I (s).
    u_amp, u_freq : float
        Control ``u(t) = u_amp cos(u_freq t)``.
    m : float
        Mass; Table I omits it and eq. 29 uses ``u`` directly, so 1.
    """

    a: float
    c: float
    omega: float
    x_max: float
    x0: float
    v0: float
    t_max: float
    u_amp: float
    u_freq: float
    m: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.a < self.omega:
            raise ValueError(
                f"`a` must satisfy 0 <= a < omega (sub-critical damping, eq. 28), "
                f"got a={self.a!r}, omega={self.omega!r}."
            )
        if not 0.0 <= self.c <= 1.0:
            raise ValueError(f"`c` must lie in [0, 1], got {self.c!r}.")
        if self.x0 > self.x_max:
            raise ValueError(
                f"`x0` must satisfy x0 <= x_max (inside D), got x0={self.x0!r}, "
                f"x_max={self.x_max!r}."
            )
        if not (self.t_max > 0.0 and self.m > 0.0 and self.u_freq >= 0.0):
            raise ValueError(
                f"`t_max` and `m` must be > 0 and `u_freq` >= 0, got "
                f"t_max={self.t_max!r}, m={self.m!r}, u_freq={self.u_freq!r}."
            )
        if self.a == 0.0 and self.u_freq == self.omega and self.u_amp != 0.0:
            raise ValueError(
                "Undamped resonant forcing (a == 0, u_freq == omega) has no bounded "
                "particular solution; use a > 0."
            )

    @property
    def omega_d(self) -> float:
        """Damped frequency ``sqrt(omega**2 - a**2)`` of eq. 28."""
        return math.sqrt(self.omega**2 - self.a**2)

    def u(self, t):
        """Return the control ``u(t) = u_amp cos(u_freq t)``."""
        return self.u_amp * np.cos(self.u_freq * np.asarray(t, dtype=float))

    def contact_force(self, t):
        """Return ``u(t)/m - omega**2 x_max``, the acceleration at rest on the stop:
        the mass sticks while it is ``>= 0`` (Burden et al., text after eq. 28)."""
        return self.u(t) / self.m - self.omega**2 * self.x_max

    def contact_force_rate(self, t):
        """Return the time derivative of `contact_force`."""
        t = np.asarray(t, dtype=float)
        return -self.u_amp * self.u_freq * np.sin(self.u_freq * t) / self.m

    def particular(self) -> tuple[float, float]:
        """Return (P, Q) of the periodic solution P cos(u_freq t) + Q sin(u_freq t)."""
        k = self.omega**2 - self.u_freq**2
        d = 2.0 * self.a * self.u_freq
        f = self.u_amp / self.m
        det = k * k + d * d
        return k * f / det, d * f / det

    def velocity_scale(self) -> float:
        """Return a velocity scale of the problem (for relative tolerances)."""
        return max(
            abs(self.v0),
            self.omega * max(abs(self.x0), abs(self.x_max)),
            abs(self.u_amp) / (self.m * self.omega),
            1e-300,
        )


# Table I's columns: a, c, omega, x_max, x0, v0, t_max, u_amp, u_freq. Example 1's
# x0, v0 are the digits of the arXiv version and the reference code (Table I
# prints 11.36 and 31.4).
EXAMPLE_1 = OscillatorParams(
    0.05, 0.9, 2.5, 14.0, 11.36263, 31.40358, 40.0 * math.pi, 20.0, 2.5
)
"""Table I, Example 1: resonant forcing, 49 impacts on ``[0, 40 pi]``, no sticking."""

EXAMPLE_2 = OscillatorParams(0.95, 0.5, 1.0, -0.8, -0.8, 0.0, 4.0 * math.pi, 1.0, 1.0)
"""Table I, Example 2: sticking, two Zeno accumulations, sticking and release."""


def rhs(params: OscillatorParams) -> Callable[[float, np.ndarray], np.ndarray]:
    """Return D's flow ``f(t, [x, v]) = [v, u(t)/m - 2 a v - omega**2 x]``."""
    a, w2, m = params.a, params.omega**2, params.m
    amp, freq = params.u_amp, params.u_freq

    def rhs_oscillator(t: float, x: np.ndarray) -> np.ndarray:
        return np.array(
            [x[1], amp * math.cos(freq * t) / m - 2.0 * a * x[1] - w2 * x[0]]
        )

    return rhs_oscillator


def gap(params: OscillatorParams) -> Callable[[float, np.ndarray], float]:
    """Return the guard ``g(t, x) = x_max - x``, falling into G.

    It is affine, with the exact ``gradient`` ((-1, 0), 0): `Unilateral` lands on
    its level without checking the predictor curve or taking differences.
    """
    x_max = params.x_max

    def gap_oscillator(t: float, x: np.ndarray) -> float:
        return float(x_max - x[0])

    vars(gap_oscillator).update(
        direction="falling",
        affine=True,
        gradient=lambda t, x: (np.array([-1.0, 0.0]), 0.0),
    )
    return gap_oscillator


def reset(params: OscillatorParams) -> Callable[[float, np.ndarray], np.ndarray]:
    """Return the impact reset ``R(t, x) = [x, -c v]``."""
    c = params.c

    def reset_oscillator(t: float, x: np.ndarray) -> np.ndarray:
        return np.array([x[0], -c * x[1]])

    return reset_oscillator


def _primitives(params, f):
    """(f, gap, gradient, force, hessian, reset) of the stop ``x_max - x`` around f."""
    m = params.m

    def gradient(t, x):
        return np.array([-1.0])

    def force(t, x, lam):
        dx = f(t, x)
        dx[1] -= lam / m
        return dx

    def hessian(t, x):
        return np.zeros((1, 1))

    return f, gap(params), gradient, force, hessian, reset(params)


@functools.cache
def _compiled_oscillator(params):
    """Return `_primitives` compiled by numba, once per parameters."""
    from ..flows.compiled import compiled

    f = compiled(rhs(params), "the oscillator's f", kind="rhs")
    _, g, gradient, force, hessian, impact = _primitives(params, f)
    guard = compiled(g, "the oscillator's guard")
    guard.affine = g.affine
    guard.gradient = compiled(g.gradient, "the guard's gradient", kind="gradient")
    return (
        f,
        guard,
        compiled(gradient, "the stop's gradient", kind="rhs"),
        compiled(force, "the oscillator's force map", kind="force"),
        compiled(hessian, "the stop's Hessian", kind="hessian"),
        compiled(impact, "the impact reset", kind="reset"),
    )


def forced_oscillator(params, *, compiled: bool = False) -> HybridSystem:
    """Return the forced oscillator with a stop as a HybridSystem.

    Its constraint is the `Contact` ``x_max - x >= 0``, so `Completion` can
    truncate Example 2's Zeno executions and slide on the stop.

    Parameters
    ----------
    params : OscillatorParams
        For example `EXAMPLE_1` or `EXAMPLE_2`.
    compiled : bool
        Compile the flow, guard, reset and contact primitives with numba.
    """
    from ..methods.contact import Contact

    flow: Flow
    if compiled:
        from ..flows.compiled import CompiledFlow

        f, g, gradient, force, hessian, impact = _compiled_oscillator(params)
        flow = CompiledFlow(f, ["x", "v"], name="forced_oscillator")
    else:
        f, g, gradient, force, hessian, impact = _primitives(params, rhs(params))
        flow = NativeFlow(lambda t, x, u: f(t, x), ["x", "v"], name="forced_oscillator")
    edge = Edge(Guard(g, "falling", "stop"), "free", impact, name="stop")
    contact = Contact(
        "x_max - x",
        "-v",
        params.c,
        gap_fn=g,
        gradient_fn=gradient,
        rhs_with_force=force,
        q_index=(0,),
        v_index=(1,),
        hessian_fn=hessian,
    )
    return HybridSystem(
        [Mode("free", flow, (edge,))],
        "free",
        {"x": params.x0, "v": params.v0},
        parameters={k: getattr(params, k) for k in ("a", "c", "omega", "x_max", "m")},
        constraint=contact,
        name="forced_oscillator",
    )
