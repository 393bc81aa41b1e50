"""Pronking (Burden et al., Sec. V-C): through the touchdown-guard intersection
(theta' = 0, a simultaneous transition) and past it (theta' = -0.4, sequential)."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from fmibridge import Relaxation
from fmibridge.models.pronk import PronkParams, contact_intervals, pronk

H, EPS = 1e-3, 1e-2  # Sec. V-C
P = PronkParams()


def exact_first_touchdown(thetad0, leg_offset=0.5):
    """Ballistic flight until the foot at hip offset `leg_offset` d touches down."""

    def foot(t):
        theta = thetad0 * t
        z = 1.1 - P.g * t * t / 2
        return z + leg_offset * P.d * math.sin(theta) - P.l * math.cos(theta + P.psi)

    return brentq(foot, 0.0, 1.0, xtol=1e-14)


def run(thetad0):
    return Relaxation(h=H, eps=EPS, integrator="midpoint").run(pronk(thetad0), 0.8)


def test_zero_pitch_rate_lands_both_feet_through_the_guard_intersection():
    result = run(0.0)
    first, second = result.events[:2]
    assert first.edge == "front_touchdown" and first.simultaneous == ("back_touchdown",)
    assert second.edge == "back_touchdown" and second.source == "stance-air"
    assert 0.0 <= second.t - first.t <= EPS + H  # the second strip, right after
    assert 0.0 <= first.t - exact_first_touchdown(0.0) <= EPS
    z_touch = P.l * math.cos(P.psi)
    np.testing.assert_allclose(first.x_before[1], z_touch, atol=1e-6 * EPS)
    assert np.max(np.abs(result["theta"])) < 1e-12  # theta = 0 is invariant


def test_pitching_body_lands_front_then_back():
    result = run(-0.4)
    touchdowns = [e for e in result.events if e.edge.endswith("touchdown")]
    assert [e.edge for e in touchdowns] == ["front_touchdown", "back_touchdown"]
    assert all(not e.simultaneous for e in result.events)
    assert touchdowns[1].t - touchdowns[0].t > 3 * EPS
    assert 0.0 <= touchdowns[0].t - exact_first_touchdown(-0.4) <= EPS


@pytest.mark.parametrize("thetad0", [0.0, -0.4])
def test_one_stride_each_leg_one_stance(thetad0):
    intervals = contact_intervals(run(thetad0))
    for leg in ("front", "back"):
        ((touchdown, liftoff),) = intervals[leg]
        assert 0.3 < liftoff - touchdown < 0.5
