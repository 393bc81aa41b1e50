"""Illinois regula falsi on a bracketed sign change (fmibridge.core.events)."""

import math

import pytest

from fmibridge.core.events import End, illinois
from fmibridge.core.events import bracketed as is_bracket


def end_of(fun):
    def trial(sigma):
        return End(sigma, fun(sigma))

    return trial


def test_narrows_cos_to_the_width_around_pi_over_2():
    trial = end_of(math.cos)
    lo, hi = illinois(trial, trial(0.0), trial(3.0), width=1e-12, max_iter=60)
    assert hi.sigma - lo.sigma <= 1e-12
    assert lo.sigma <= math.pi / 2 <= hi.sigma
    assert lo.f >= 0.0 > hi.f


def test_converges_superlinearly_where_plain_regula_falsi_stalls():
    """x**8 - 1e-8 on [0, 1]: plain regula falsi keeps one end and needs
    thousands of trials; Illinois needs a few dozen."""
    calls = []

    def fun(x):
        calls.append(x)
        return 1e-8 - x**8

    trial = end_of(fun)
    lo, hi = illinois(trial, trial(0.0), trial(1.0), width=1e-12, max_iter=200)
    assert hi.sigma - lo.sigma <= 1e-12
    assert lo.sigma == pytest.approx(0.1, abs=1e-12)
    assert len(calls) < 60


def test_non_finite_values_count_as_beyond_and_are_bisected():
    """sqrt(0.3 - x) - 0.2 is NaN past 0.3; the root is 0.26."""

    def fun(x):
        return math.sqrt(0.3 - x) - 0.2 if x <= 0.3 else math.nan

    trial = end_of(fun)
    lo, hi = illinois(trial, trial(0.0), End(1.0, math.nan), width=1e-10, max_iter=100)
    assert lo.sigma == pytest.approx(0.26, abs=1e-10)


def test_stops_after_max_iter_with_the_bracket_so_far():
    trial = end_of(math.cos)
    lo, hi = illinois(trial, trial(0.0), trial(3.0), width=1e-15, max_iter=2)
    assert hi.sigma - lo.sigma > 1e-15
    assert lo.sigma <= math.pi / 2 <= hi.sigma


@pytest.mark.parametrize("v", [1e-1, 1e-4, 1e-8])
def test_a_curve_leaving_the_surface_is_followed_by_parabolas(v):
    """f = s (v - s / 2) from f(0) = 0: the next bounce at s = 2 v. The secant
    from the surface says nothing; bisection alone needs log2(0.5 / (2 v)) trials
    to find f > 0, the parabolas through the surface point a few more."""
    calls = []

    def fun(s):
        calls.append(s)
        return s * (v - 0.5 * s)

    trial = end_of(fun)
    lo, hi = illinois(trial, End(0.0, 0.0), trial(0.5), width=1e-12, max_iter=64)
    assert lo.sigma <= 2 * v <= hi.sigma and hi.sigma - lo.sigma <= 1e-12
    assert len(calls) <= 6, calls


@pytest.mark.parametrize(
    ("lo_f", "hi_f", "expected"),
    [
        (0.0, -1.0, True),
        (2.0, -1.0, True),
        (-1e-17, -0.02, True),  # a reset's state, one ulp beyond the surface
        (-1e-6, -0.02, False),  # truly beyond
        (1.0, 0.0, False),
        (1.0, math.nan, False),
    ],
)
def test_is_bracket_allows_round_off_below_the_surface(lo_f, hi_f, expected):
    assert is_bracket(lo_f, hi_f) is expected
