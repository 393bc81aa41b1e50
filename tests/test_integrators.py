"""Integrator orders on a smooth problem with a time-varying input."""

import numpy as np
import pytest

from fmibridge.core.errors import FmibridgeError
from fmibridge.core.integrators import EULER, MIDPOINT, RK4, scheme_named


def forced_decay(t, x):
    """x' = -x + u(t), u(t) = cos(3 t): the input must be sampled inside the step."""
    return -x + np.cos(3.0 * t)


def exact_forced_decay(t, x0=1.0):
    # particular solution (cos 3t + 3 sin 3t)/10 plus the decaying homogeneous part
    particular = (np.cos(3 * t) + 3 * np.sin(3 * t)) / 10
    return (x0 - 0.1) * np.exp(-t) + particular


def global_error(scheme, h, t_end=2.0):
    n = round(t_end / h)
    x = np.array([1.0])
    for k in range(n):
        x = scheme.step(forced_decay, k * h, x, h)
    return abs(x[0] - exact_forced_decay(n * h))


@pytest.mark.parametrize("scheme, order", [(EULER, 1), (MIDPOINT, 2), (RK4, 4)])
def test_order_shows_when_h_halves(scheme, order):
    errors = [global_error(scheme, h) for h in (0.02, 0.01, 0.005)]
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(slopes - order) < 0.15), slopes


def test_unknown_scheme_is_named():
    with pytest.raises(FmibridgeError, match="`integrator` must be one of"):
        scheme_named("rk45")
