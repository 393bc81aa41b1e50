"""Validation ground truth: exact oscillator with stop, PS method, metrics.

Burden et al., Sec. V-B: Table I, eqs. 28-30.
"""

from __future__ import annotations

import numpy as np
import pytest

from fmibridge.validation import (
    EXAMPLE_1,
    EXAMPLE_2,
    OscillatorParams,
    exact_solution,
    gap,
    paoli_schatzman,
    quotient_distance_bound,
    reset,
    rho_eps_bound,
    rho_hat,
    rhs,
)

# Zeno time of Example 2 in the reference code (hssim, commented
# `time_arr`); it is itself only good to ~2e-5 (its Zeno cut-off), hence 1e-4 below.
REFERENCE_CODE_ZENO_TIME = 5.06452147367373


@pytest.fixture(scope="module")
def exact_1():
    return exact_solution(EXAMPLE_1)


@pytest.fixture(scope="module")
def exact_2():
    return exact_solution(EXAMPLE_2)


def _flight_times(exact, n, seed):
    """Return ``n`` random times strictly inside flight phases."""
    rng = np.random.default_rng(seed)
    flights = [p for p in exact.phases if p.kind == "flight" and p.t_end > p.t_start]
    spans = np.array([p.t_end - p.t_start for p in flights])
    pick = rng.choice(len(flights), size=n, p=spans / spans.sum())
    frac = rng.uniform(0.01, 0.99, size=n)
    return np.array(
        [flights[i].t_start + f * spans[i] for i, f in zip(pick, frac, strict=True)]
    )


def _ode_residual(exact, t):
    p = exact.params
    x, v = exact.state(t)
    acc = exact.acceleration(t)
    residual = acc + 2.0 * p.a * v + p.omega**2 * x - p.u(t) / p.m
    scale = np.abs(acc) + 2 * p.a * np.abs(v) + p.omega**2 * np.abs(x) + np.abs(p.u(t))
    return np.abs(residual) / scale


# --- Example 1 ----------------------------------------------------------------


def test_example_1_has_49_impacts_and_no_sticking(exact_1):
    assert exact_1.n_impacts == 49
    assert exact_1.sticking == () and exact_1.zeno_times == ()
    assert exact_1.impact_times[0] == pytest.approx(0.09206, abs=1e-5)  # eq. 28 by hand
    speeds = np.array([i.v_minus for i in exact_1.impacts])
    assert speeds.min() > 4.85 and speeds.max() < 26.6  # eq. 28 by hand: 4.9-26.5


@pytest.mark.parametrize("name", ["exact_1", "exact_2"])
def test_closed_form_satisfies_the_ode_in_flight(name, request):
    exact = request.getfixturevalue(name)
    t = _flight_times(exact, 2000, seed=1)
    assert np.all(exact.mode(t) == "flight")
    assert _ode_residual(exact, t).max() < 1e-9


@pytest.mark.parametrize("name", ["exact_1", "exact_2"])
def test_gap_never_negative_on_dense_grid(name, request):
    exact = request.getfixturevalue(name)
    t = np.linspace(0.0, exact.t_end, 400_001)
    x, _ = exact.state(t)
    assert np.all(x <= exact.params.x_max + 1e-12)


@pytest.mark.parametrize("name", ["exact_1", "exact_2"])
def test_impact_times_are_roots_of_the_gap(name, request):
    exact = request.getfixturevalue(name)
    g = gap(exact.params)
    for impact in exact.impacts:
        i = int(exact.phase_index(impact.t)[0]) - 1  # the flight ending there
        phase = exact.phases[i]
        assert phase.kind == "flight" and phase.t_end == impact.t
        x_minus = float(phase.flight.position(impact.t - phase.t_start))
        assert abs(g(impact.t, np.array([x_minus, 0.0]))) < 1e-12
        assert impact.v_minus >= 0.0
        assert impact.v_plus == -exact.params.c * impact.v_minus


def test_state_is_continuous_in_x_and_reset_in_v(exact_1):
    t = exact_1.impact_times
    x_after, v_after = exact_1.state(t)
    x_before, _ = exact_1.state(t - 1e-10)
    np.testing.assert_allclose(x_after, EXAMPLE_1.x_max, atol=1e-12)
    np.testing.assert_allclose(x_before, EXAMPLE_1.x_max, atol=1e-8)
    np.testing.assert_allclose(v_after, [i.v_plus for i in exact_1.impacts], rtol=1e-12)


# --- Example 2: sticking and Zeno ---------------------------------------------


def test_example_2_sticks_then_two_zeno_accumulations(exact_2):
    kinds = [p.kind for p in exact_2.phases]
    compressed = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert compressed == ["stick", "flight", "zeno", "stick", "flight", "zeno", "stick"]
    assert len(exact_2.zeno_times) == 2
    (s0, r0), (s1, r1), (s2, r2) = exact_2.sticking
    release = np.arccos(-0.8)  # u(t) - omega^2 x_max = cos t + 0.8 turns negative
    assert s0 == 0.0 and r0 == pytest.approx(release, rel=1e-14)
    assert (s1, s2) == exact_2.zeno_times
    assert r1 == pytest.approx(2 * np.pi + release, rel=1e-14)
    assert r2 == exact_2.t_end
    assert exact_2.zeno_times[0] == pytest.approx(REFERENCE_CODE_ZENO_TIME, abs=1e-4)
    assert exact_2.zeno_times[1] == pytest.approx(11.348, abs=1e-3)  # eq. 28 by hand


@pytest.mark.parametrize("which", [0, 1])
def test_zeno_time_agrees_with_geometric_series_of_impact_intervals(exact_2, which):
    t_zeno = exact_2.zeno_times[which]
    t_imp = exact_2.impact_times[exact_2.impact_times < t_zeno]
    last = t_imp[-4:]
    intervals = np.diff(last)
    ratio = intervals[-1] / intervals[-2]
    assert ratio == pytest.approx(EXAMPLE_2.c, rel=1e-4)  # v+ = -c v-: ratio -> c
    independent = last[-1] + intervals[-1] * ratio / (1.0 - ratio)
    assert abs(independent - t_zeno) < 1e-9


def test_exact_solution_matches_independent_ode_integration(exact_2):
    """DOP853 with event location, flight by flight, from the first release."""
    from scipy.integrate import solve_ivp

    p = EXAMPLE_2
    f = rhs(p)
    reset_map = reset(p)

    def hit(t, x):
        return p.x_max - x[0]

    hit.terminal, hit.direction = True, -1
    t, x = exact_2.sticking[0][1], np.array([p.x_max, 0.0])
    for k in range(8):
        max_step = np.inf if k == 0 else abs(x[1]) / 20.0  # never step over a flight
        sol = solve_ivp(
            f,
            (t, 20.0),
            x,
            method="DOP853",
            rtol=1e-13,
            atol=1e-15,
            events=hit,
            max_step=max_step,
        )
        t, x = sol.t_events[0][0], reset_map(0.0, sol.y_events[0][0])
        x[0] = p.x_max
        assert t == pytest.approx(exact_2.impact_times[k], abs=1e-10)


# --- Native model for other engineers ---------------------------------------------


def test_native_rhs_gap_reset():
    f, g, r = rhs(EXAMPLE_1), gap(EXAMPLE_1), reset(EXAMPLE_1)
    x = np.array([13.0, 2.0])
    assert f(0.0, x)[1] == pytest.approx(20.0 - 2 * 0.05 * 2.0 - 6.25 * 13.0)
    assert g(0.0, x) == 1.0 and g.direction == "falling"
    np.testing.assert_allclose(r(0.0, x), [13.0, -1.8])


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="sub-critical"):
        OscillatorParams(
            a=2.0, c=0.5, omega=1.0, x_max=1, x0=0, v0=0, t_max=1, u_amp=1, u_freq=1
        )
    with pytest.raises(ValueError, match="x0"):
        OscillatorParams(
            a=0.1, c=0.5, omega=1.0, x_max=1, x0=2, v0=0, t_max=1, u_amp=1, u_freq=1
        )


# --- PS method and metrics -----------------------------------------------------------


def test_ps_method_example_2_matches_paper_rho_hat(exact_2):
    res = paoli_schatzman(EXAMPLE_2, 5e-4)
    value = rho_hat(res.t, res.x, exact_2)
    assert 1e-4 / 3 < value < 3e-4  # paper, Sec. V-B: about 1e-4 at h = 5e-4


def test_ps_method_converges_with_order_one(exact_1):
    hs = np.array([2.5e-4, 1.25e-4, 6.25e-5])
    errors = [rho_hat(*_ps(h), exact_1) for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert 0.7 < slope < 1.3


def _ps(h):
    res = paoli_schatzman(EXAMPLE_1, h)
    return res.t, res.x


def test_rho_hat_of_exact_samples_is_zero(exact_2):
    t = np.linspace(0.0, EXAMPLE_2.t_max, 1001)
    assert rho_hat(t, exact_2.state(t)[0], exact_2) == 0.0


def test_rho_eps_bound_uses_reset_identification(exact_1):
    t_imp = exact_1.impact_times[exact_1.impact_times < 10.0]
    # Each impact stored twice: pre-impact then post-impact state (duplicate time).
    t = np.sort(np.concatenate([np.linspace(0.0, 10.0, 2001), t_imp, t_imp]))
    x, v = exact_1.state(t)
    first = np.searchsorted(t, t_imp)
    v[first] = [i.v_minus for i in exact_1.impacts[: t_imp.size]]
    eps = 1e-6
    value = rho_eps_bound(t, x, v, exact_1, eps, t_max=10.0)
    assert value < 1e-3  # linear-interpolation error of the samples only
    # Without the quotient the pre-impact sample is |v- - v+| = 1.9 |v-| away.
    i = first[0]
    d = quotient_distance_bound(x[i], v[i], x[i], v[i + 1], EXAMPLE_1, eps)
    assert d[0] == pytest.approx(eps)
    strip = quotient_distance_bound(
        EXAMPLE_1.x_max + 0.4 * eps, v[i], x[i], v[i + 1], EXAMPLE_1, eps
    )
    assert strip[0] == pytest.approx(0.6 * eps)
