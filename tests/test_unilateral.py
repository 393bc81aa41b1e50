"""Extrapolated unilateral stepping (Esposito and Kumar 2007): claims C1-C9."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from benchmarks.corridor import NOMINAL, corridor, corridor_first_collision
from fmibridge.core.errors import FmibridgeError
from fmibridge.core.result import Status
from fmibridge.core.system import Edge, Guard, HybridSystem, Mode
from fmibridge.flows.base import Flow
from fmibridge.flows.native import NativeFlow
from fmibridge.methods import METHODS
from fmibridge.methods.adams import integral_basis, milne, predict, predictor_of
from fmibridge.methods.polyroots import first_reach
from fmibridge.methods.unilateral import BAND_C, EndpointAdams, Unilateral
from fmibridge.models import bouncing_ball, bouncing_ball_impacts


class _Outside(Exception):
    """The right-hand side was called outside its domain."""


def rhs_sqrt(t, x, u):
    """x' = 1 + sqrt(1 - x): undefined for x > 1, so never evaluated
    there (Esposito and Kumar, Theorem 2.1)."""
    if x[0] > 1.0:
        raise _Outside(f"rhs called at x = {x[0]!r} > 1")
    return np.array([1.0 + math.sqrt(1.0 - x[0])])


def exact_sqrt_event() -> float:
    """Time at which x(0) = 0 reaches x = 1: 2 (1 - ln 2)."""
    return 2.0 * (1.0 - math.log(2.0))


def _sqrt_system(*, affine: bool) -> HybridSystem:
    def wall(t, x):
        return 1.0 - x[0]

    if affine:
        wall.affine = True
        wall.gradient = lambda t, x: (np.array([-1.0]), 0.0)
    rest = NativeFlow(lambda t, x, u: np.zeros(1), ["x"], name="rest")
    return HybridSystem(
        [
            Mode("go", NativeFlow(rhs_sqrt, ["x"]), (Edge(Guard(wall), "rest"),)),
            Mode("rest", rest),
        ],
        "go",
        [0.0],
    )


@pytest.mark.parametrize("tol", [1e-4, 1e-6, 1e-8])
@pytest.mark.parametrize("affine", [True, False])  # gradient given / finite differences
def test_singular_rhs_reached_from_one_side(tol, affine):
    result = Unilateral(tol=tol).run(_sqrt_system(affine=affine), t_end=1.0)
    assert result.status is Status.REACHED_END  # _Outside was never raised
    [event] = result.events
    band = 2 * tol / BAND_C  # |dg/dx| = 1: event declared in [-2 beta, 0] (eq. 21)
    assert 0.0 <= 1.0 - event.x_before[0] <= band
    assert abs(event.t - exact_sqrt_event()) <= band  # x' >= 1 near the wall


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_theorem_2_1_affine_guards_land_on_gamma_g(order):
    rng = np.random.default_rng(order)
    for _ in range(50):
        n = 3
        steps = rng.uniform(0.2, 2.0, order - 1)
        nodes = -np.r_[0.0, np.cumsum(steps)]
        forces = rng.normal(size=(order, n))
        x = rng.normal(size=n)
        basis = integral_basis(nodes)
        c1, c2 = rng.normal(size=n), rng.normal()
        g_k = -rng.uniform(0.1, 1.0)
        gamma = rng.uniform(0.0, 0.9)
        poly = basis.T @ (forces @ c1 + c2)
        poly[0] += (1.0 - gamma) * g_k
        h = first_reach(poly[np.newaxis], 50.0)
        if math.isinf(h):
            continue
        x_p = predict(x, predictor_of(basis, forces, 1.0), h)
        g_p = c1 @ (x_p - x) + c2 * h + g_k
        scale = abs(g_k) + np.abs(forces @ c1).max() * h + abs(c2) * h
        assert abs(g_p - gamma * g_k) <= 1e-12 * scale


def test_milne_constants_match_constant_step_values():
    for m, c in zip(range(1, 5), [1 / 2, 1 / 6, 1 / 10, 19 / 270], strict=True):
        assert milne(-np.arange(m, dtype=float), 1.0) == pytest.approx(c)


def test_first_reach_keeps_a_double_root():
    # -(u - 1)^2 touches zero at u = 1 only: a grazing contact
    assert first_reach(np.array([[-1.0, 2.0, -1.0]]), 3.0) == pytest.approx(1.0)
    assert math.isinf(first_reach(np.array([[-1.0 - 1e-9, 2.0, -1.0]]), 3.0))


def _perturbed(rng):
    r, a = 0.05 * math.sqrt(rng.uniform()), rng.uniform(0.0, 2 * math.pi)
    return NOMINAL[0] + r * math.cos(a), NOMINAL[1] + r * math.sin(a), NOMINAL[2]


def _first_edge(method, ic):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = method.run(corridor(*ic), 8.0)
    return result.events[0].edge if result.events else None


def test_corridor_corner_every_collision_detected():
    """Example 1, Table I: 100 perturbations of radius 0.05 (in x0, y0)."""
    rng = np.random.default_rng(1)
    n_true = n_ours = n_endpoint = 0
    for _ in range(100):
        ic = _perturbed(rng)
        truth = corridor_first_collision(*ic)
        if truth is None or truth[0] != "block":
            continue
        n_true += 1
        n_ours += _first_edge(Unilateral(tol=1e-4, h=1.0, max_events=1), ic) == "block"
        n_endpoint += (
            _first_edge(EndpointAdams(tol=1e-4, h=1.0, max_events=1), ic) == "block"
        )
    assert n_true >= 30
    assert n_ours == n_true
    assert n_endpoint < n_true  # the paper: 32% vs 100%
    print(
        f"corner collisions detected: unilateral {n_ours}/{n_true}, "
        f"endpoint {n_endpoint}/{n_true}"
    )


def test_bouncing_ball_exact_impacts_never_below_floor():
    system = bouncing_ball()
    flow = system.mode("flight").flow
    heights = []
    plain = flow.rhs

    def rhs(t, x):
        heights.append(x[0])
        return plain(t, x)

    flow.rhs = rhs
    tol = 1e-8
    with pytest.warns(Warning, match="Zeno point"):
        result = Unilateral(tol=tol, max_events=200).run(system, 10.0)
    assert result.status is Status.ZENO  # the Zeno accumulation, stopped cleanly
    assert len(result.events) >= 20
    assert min(heights) >= 0.0 and result["h"].min() >= 0.0
    exact = bouncing_ball_impacts(20)
    speeds = math.sqrt(2 * 9.81) * 0.8 ** np.arange(20)
    beta = tol / BAND_C
    # each event lands within 2 beta above the floor; the shift accumulates
    bound = np.cumsum(4 * beta / speeds) + 2 * beta / speeds
    assert np.all(np.abs(result.event_times[:20] - exact) <= bound)


def test_cosimulation_flow_refused():
    class Black(Flow):
        state_names = ("x",)

        def advance(self, t, x, h, scheme):
            return x

    system = HybridSystem([Mode("m", Black())], "m", [0.0])
    with pytest.raises(FmibridgeError, match="One-sidedness cannot be guaranteed"):
        Unilateral().run(system, 1.0)


def test_registered_and_bad_parameters():
    assert METHODS["unilateral"] is Unilateral
    for bad in ({"tol": 0.0}, {"gamma": 1.0}, {"max_order": 5}, {"rtol": -1.0}):
        with pytest.raises(FmibridgeError):
            Unilateral(**bad)


def test_bilateral_either_guard_is_crossed_once():
    flow = NativeFlow(lambda t, x, u: np.array([1.0]), ["x"])

    def half(t, x):
        return x[0] - 0.5

    edge = Edge(
        Guard(half, "either", kind="bilateral"),
        "m",
        lambda t, x: x + 0.0 * x,
        name="half",
    )
    system = HybridSystem([Mode("m", flow, (edge,))], "m", [0.0])
    result = Unilateral(tol=1e-8).run(system, 1.0)
    assert result.status is Status.REACHED_END
    assert result.stats["n_events"] + result.stats.get("n_silent_events", 0) == 1


@pytest.mark.slow
def test_bumper_cars_overhead():
    from benchmarks.bumper_cars import bumper_cars_overhead

    numbers = bumper_cars_overhead(repeats=3)
    print(numbers)
    assert numbers["ratio"] > 0.0
