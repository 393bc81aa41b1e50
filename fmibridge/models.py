"""Built-in native models, each paired with its exact solution."""

from __future__ import annotations

import functools
import math

import numpy as np

from .errors import FmibridgeError
from .flows.native import NativeFlow
from .system import Edge, Guard, HybridSystem, Mode, UnilateralConstraint


def bouncing_ball(
    h0: float = 1.0, v0: float = 0.0, g: float = 9.81, e: float = 0.8
) -> HybridSystem:
    """Return the ball bouncing on a floor: h' = v, v' = -g; at h = 0, v -> -e v.

    Parameters
    ----------
    h0, v0 : float
        Initial height (m, >= 0) and velocity (m/s).
    g : float
        Gravity, m/s^2 (> 0).
    e : float
        Coefficient of restitution in [0, 1].

    Examples
    --------
    >>> bouncing_ball().state_names
    ('h', 'v')
    """
    if not g > 0:
        raise FmibridgeError(f"bouncing_ball: `g` must be > 0, got {g!r}.")
    if not 0.0 <= e <= 1.0:
        raise FmibridgeError(f"bouncing_ball: `e` must be in [0, 1], got {e!r}.")

    def flight(t, x, u):
        return np.array([x[1], -g])

    def floor(t, x):
        return x[0]

    def bounce(t, x):
        return np.array([x[0], -e * x[1]])

    edge = Edge(Guard(floor, "falling"), "flight", bounce, name="floor")
    mode = Mode("flight", NativeFlow(flight, ["h", "v"], name="bouncing_ball"), (edge,))
    return HybridSystem(
        [mode],
        "flight",
        {"h": h0, "v": v0},
        parameters={"g": g, "e": e},
        constraint=UnilateralConstraint("h", "v", e),
        name="bouncing_ball",
    )


def bouncing_ball_impacts(
    n: int, h0: float = 1.0, g: float = 9.81, e: float = 0.8
) -> np.ndarray:
    """Return the first `n` exact impact times of the ball dropped from rest at h0.

    t_1 = sqrt(2 h0 / g); the k-th flight after it lasts 2 e^k v_1 / g with
    v_1 = sqrt(2 g h0).
    """
    v1 = math.sqrt(2.0 * g * h0)
    flights = 2.0 * v1 / g * e ** np.arange(1, n)
    return math.sqrt(2.0 * h0 / g) + np.concatenate([[0.0], np.cumsum(flights)])


def bouncing_ball_zeno_time(h0: float = 1.0, g: float = 9.81, e: float = 0.8) -> float:
    """Return the Zeno time sqrt(2 h0/g) (1 + e)/(1 - e) of the ball dropped at rest."""
    return math.sqrt(2.0 * h0 / g) * (1.0 + e) / (1.0 - e)


def _primitives(params, f):
    """Return (f, gap, gradient, force, hessian) of the oscillator and its stop
    h = x_max - x, around the right-hand side f (Python or compiled)."""
    from .validation.oscillator import gap

    m = params.m

    def gradient(t, x):
        return np.array([-1.0])

    def force(t, x, lam):
        return f(t, x) - np.array([0.0, lam / m])

    def hessian(t, x):
        return np.zeros((1, 1))

    return f, gap(params), gradient, force, hessian


@functools.cache
def _compiled_oscillator(params):
    """Return `_primitives` compiled by numba, once per parameter set."""
    from .flows.compiled import compiled
    from .validation.oscillator import rhs

    f = compiled(rhs(params), "the oscillator's f", kind="rhs")
    _, g, gradient, force, hessian = _primitives(params, f)
    return (
        f,
        compiled(g, "the oscillator's guard"),
        compiled(gradient, "the stop's gradient", kind="rhs"),
        compiled(force, "the oscillator's force map", kind="force"),
        compiled(hessian, "the stop's Hessian", kind="hessian"),
    )


def forced_oscillator(params, *, compiled: bool = False) -> HybridSystem:
    """Return the forced oscillator with a stop of Burden et al., Sec. V-B.

    One mode, state (x, v); guard x_max - x (falling); reset (x, -c v); flow
    x'' + 2 a x' + omega**2 x = u(t) / m with u(t) = u_amp cos(u_freq t). Its
    constraint is the `Contact` h = x_max - x >= 0 (dh = -1, force -lam / m on
    v), so `Completion` can truncate Example 2's Zeno executions and slide on
    the stop.

    Parameters
    ----------
    params : fmibridge.validation.OscillatorParams
        For example `EXAMPLE_1` or `EXAMPLE_2` (Table I).
    compiled : bool
        Compile the flow, the guard and the contact's primitives with numba
        (`flows.compiled`), so the steps between impacts and the constrained
        phases of `Completion` run compiled.

    Examples
    --------
    >>> from fmibridge.validation import EXAMPLE_1
    >>> forced_oscillator(EXAMPLE_1).x0.tolist()
    [11.36263, 31.40358]
    """
    from .contact import Contact
    from .validation.oscillator import reset, rhs

    if compiled:
        from .flows.compiled import CompiledFlow

        f, g, gradient, force, hessian = _compiled_oscillator(params)
        flow = CompiledFlow(f, ["x", "v"], name="forced_oscillator")
    else:
        f, g, gradient, force, hessian = _primitives(params, rhs(params))
        flow = NativeFlow(lambda t, x, u: f(t, x), ["x", "v"], name="forced_oscillator")
    edge = Edge(Guard(g, "falling", "stop"), "free", reset(params), name="stop")
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
