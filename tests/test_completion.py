"""Zeno completion (Or and Ames): truncation, constrained motion, lift-off.

Oracles: the exact flat-ground Zeno time sqrt(2 h0/g)(1+e)/(1-e); the worked case
of flat ground; the paper's Examples 1 and 2 (Fig. 4); the
exact oscillator with stop (Burden et al., Table I Example 2).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from fmibridge.cli import main
from fmibridge.core.errors import FmibridgeError
from fmibridge.core.integrators import RK4
from fmibridge.core.system import (
    Edge,
    Guard,
    HybridSystem,
    Mode,
    UnilateralConstraint,
)
from fmibridge.flows.native import NativeFlow
from fmibridge.methods import Halving, Relaxation, Unilateral
from fmibridge.methods.completion import (
    Completion,
    ConstrainedFlow,
    truncation_threshold,
)
from fmibridge.methods.contact import Contact, ZenoBounds
from fmibridge.models import bouncing_ball, bouncing_ball_zeno_time, forced_oscillator
from fmibridge.models.lagrangian import to_hybrid
from fmibridge.models.or_ames import (
    flat_ball,
    knee_pendulum,
    sine_ball,
    stop_oscillator,
)
from fmibridge.validation import EXAMPLE_2, exact_solution, rho_hat

G = 9.81


def _events(result, edge):
    return [e for e in result.events if e.edge == edge]


# -- flat bouncing ball (UnilateralConstraint only, model-free truncation) ----------


def test_flat_ball_switches_at_the_zeno_time_and_rests_exactly():
    result = Completion(Halving(h=1e-2)).run(bouncing_ball(), t_end=10.0)
    (zeno,) = _events(result, "zeno")
    assert abs(zeno.t - bouncing_ball_zeno_time()) < 1e-6
    assert result.mode[-1] == "constrained"
    assert result["h"][-1] == 0.0 and result["v"][-1] == 0.0
    assert result["lam"][-1] == pytest.approx(G)  # unit mass: force per kg
    assert len(result.events) < 80


def test_flat_ball_rest_costs_log_steps_not_t_end():
    short = Completion(Halving(h=1e-2)).run(bouncing_ball(), t_end=10.0)
    long = Completion(Halving(h=1e-2)).run(bouncing_ball(), t_end=1000.0)
    assert long.status.is_success and long.t[-1] == 1000.0
    assert long.stats["n_steps"] - short.stats["n_steps"] < 20


def test_repeated_runs_reuse_the_added_modes_and_start_with_no_series():
    # the added modes are built once per free mode (their compiled forms with
    # them); each run starts without the previous run's series
    ball = bouncing_ball()
    runs = [Completion(Halving(h=1e-2)).run(ball, t_end=10.0) for _ in range(3)]
    for later in runs[1:]:
        assert np.array_equal(later.t, runs[0].t)
        assert np.array_equal(later.x, runs[0].x)
        assert later.stats == runs[0].stats
    (zeno,) = _events(runs[2], "zeno")
    assert abs(zeno.t - bouncing_ball_zeno_time()) < 1e-6
    completion = Completion(Halving(h=1e-2))
    first, again = completion._completed(ball), completion._completed(ball)
    assert first.mode("constrained") is again.mode("constrained")
    assert first.mode("flight:lifted") is again.mode("flight:lifted")


def test_a_system_is_completed_once_per_start_and_apart_inside_its_own_run():
    # the completed system is kept per system (repeated runs complete it once),
    # built again where x0 moved in place, and apart for a run of the system
    # inside a run of it (a reset that simulates it): the runs share no series
    ball = bouncing_ball()
    completion = Completion(Halving(h=1e-2))
    first = completion._completed(ball)
    assert completion._completed(ball) is first
    ball.x0[0] = 2.0
    higher = completion._completed(ball)
    assert higher is not first and higher.x0.tolist() == [2.0, 0.0]
    (zeno,) = _events(completion.run(ball, t_end=10.0), "zeno")
    assert abs(zeno.t - bouncing_ball_zeno_time(h0=2.0)) < 1e-6

    inside = {}

    def bounce(t, x):
        if not inside:  # the outer run's first impact runs the same system
            inside["result"] = None
            inside["result"] = Completion(Halving(h=1e-2)).run(nested, t_end=10.0)
        return np.array([x[0], -0.8 * x[1]])

    flow = NativeFlow(lambda t, x, u: np.array([x[1], -G]), ["h", "v"])
    edge = Edge(Guard(lambda t, x: x[0], "falling"), "flight", bounce, name="floor")
    nested = HybridSystem(
        [Mode("flight", flow, (edge,))],
        "flight",
        {"h": 1.0, "v": 0.0},
        constraint=UnilateralConstraint("h", "v", 0.8),
    )
    outer = Completion(Halving(h=1e-2)).run(nested, t_end=10.0)
    alone = Completion(Halving(h=1e-2)).run(bouncing_ball(), t_end=10.0)
    for result in (outer, inside["result"]):
        assert np.array_equal(result.t, alone.t) and np.array_equal(result.x, alone.x)
        assert [e.t for e in result.events] == [e.t for e in alone.events]


def test_restitution_one_never_truncates_and_zero_switches_at_once():
    elastic = Completion(Halving(h=1e-2)).run(bouncing_ball(e=1.0), t_end=3.0)
    assert not _events(elastic, "zeno")
    plastic = Completion(Halving(h=1e-2)).run(bouncing_ball(e=0.0), t_end=3.0)
    (zeno,) = _events(plastic, "zeno")  # A16: the plastic impact lands on Z
    assert zeno.t == pytest.approx(math.sqrt(2.0 / G), abs=1e-9)


def test_cli_zeno_complete_writes_exact_rest(tmp_path, capsys):
    out = tmp_path / "ball.csv"
    argv = [
        "run",
        "--zeno",
        "complete",
        "--stop-time",
        "10",
        "--step-size",
        "0.01",
        "--no-progress",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    frame = pd.read_csv(out, index_col="time")
    assert frame["h"].iloc[-1] == 0.0 and frame["v"].iloc[-1] == 0.0
    assert frame["mode"].iloc[-1] == "constrained"


# -- Definition 7 and Theorem 3 -------------------------------------------------------


def test_definition7_worked_case_of_spec_section6():
    """h0 = 1, g = 1, e = 0.5, xdot = 0.3, eps = 1e-3: truncation at impact 16."""
    system = to_hybrid(flat_ball(g=1.0, e=0.5), [0.0, 1.0], [0.3, 0.0])
    result = Completion(Halving(h=1e-2), switch="truncation").run(system, t_end=6.0)
    (zeno,) = _events(result, "zeno")
    assert len(_events(result, "impact")) == 16
    assert zeno.t == pytest.approx(
        math.sqrt(2) + 2 * math.sqrt(2) * (1 - 0.5**15), abs=1e-9
    )
    assert zeno.x_after[0] == pytest.approx(1.27276631, abs=1e-8)
    assert 3 * math.sqrt(2) - zeno.t < 1e-3  # c1 is tight on flat ground


def test_truncation_threshold_is_monotone_in_the_bounds():
    eps = (1e-3, 5e-4, 5e-4)
    base = ZenoBounds(a_min=1.0, a_max=1.2, eta=1.0, zeta=1.0)
    c = truncation_threshold(0.5, base, eps, speed=0.3, dh_norm=1.0)
    for worse in (
        ZenoBounds(0.9, 1.2, 1.0, 1.0),
        ZenoBounds(1.0, 1.3, 1.0, 1.0),
        ZenoBounds(1.0, 1.2, 1.1, 1.0),
        ZenoBounds(1.0, 1.2, 1.0, 1.1),
    ):
        assert truncation_threshold(0.5, worse, eps, speed=0.3, dh_norm=1.0) <= c
    assert (
        truncation_threshold(
            0.5, ZenoBounds(1.0, 2.5, 1.0, 1.0), eps, speed=0.3, dh_norm=1.0
        )
        == 0.0
    )  # e' >= 1


def _true_zeno_point(model, contact, x_minus, t_k):
    """Continue bouncing from the truncated impact until |hdot| < 1e-5 (Halving
    stops as Zeno below about 2e-6, where a reset would meet a receding body).

    The tail after that adds < 1e-4 to each error (2 e |hdot| / (a (1 - e)) in time).
    """
    n = len(contact.q_index)
    x = contact.project(t_k, x_minus)
    x[n:] = x_minus[n:]
    x = contact.impact(t_k, x)
    system = to_hybrid(model, x[:n], x[n:], t0=t_k)
    run = Halving(h=1e-3, max_events=30).run
    with pytest.warns(Warning):
        events = run(system, t_k + 1.0).events
    last = next(e for e in events if abs(contact.rate(e.t, e.x_before)) < 1e-5)
    star = contact.project(last.t, last.x_before)
    return last.t, star[:n], star[n:]


@pytest.mark.parametrize(
    "model, q0, v0",
    [
        (sine_ball(), [0.0, 2.0], [1.5, 0.0]),
        (knee_pendulum(), [math.radians(30), math.radians(25)], [0.0, 0.0]),
    ],
)
def test_theorem3_errors_below_eps(model, q0, v0):
    eps = 1e-3
    system = to_hybrid(model, q0, v0)
    result = Completion(Halving(h=1e-2), eps=eps, switch="truncation").run(system, 5.0)
    zeno = _events(result, "zeno")[0]
    n = model.n
    t_inf, q_inf, v_inf = _true_zeno_point(
        model, system.constraint, zeno.x_before, zeno.t
    )
    assert 0 < t_inf - zeno.t < eps
    assert np.linalg.norm(q_inf - zeno.x_after[:n]) < eps
    assert np.linalg.norm(v_inf - zeno.x_after[n:]) < eps


# -- the paper's examples ------------------------------------------------------


def test_sine_ball_truncates_lifts_off_and_truncates_again():
    system = to_hybrid(sine_ball(), [0.0, 2.0], [1.5, 0.0])
    result = Completion(Halving(h=1e-2), switch="truncation").run(system, t_end=20.0)
    zeno, lift = _events(result, "zeno"), _events(result, "lift-off")
    assert abs(zeno[0].t - 2.725) < 0.05 and abs(lift[0].t - 3.732) < 0.05
    assert zeno[0].t == pytest.approx(2.725117, abs=1e-5)  # Example 1, Fig. 4(a)
    assert lift[0].t == pytest.approx(3.731822, abs=1e-5)
    assert zeno[1].t == pytest.approx(12.465663, abs=1e-4)
    x, xdot = lift[0].x_before[0], lift[0].x_before[2]
    assert xdot**2 * math.sin(x) == pytest.approx(1.0, abs=1e-6)  # lam = 0 there
    constrained = result.mode == "constrained"
    gap = result["y"][constrained] - np.sin(result["x"][constrained])
    assert np.max(np.abs(gap)) < 1e-12 and np.all(result["lam"][constrained] > -1e-9)
    assert result.mode[-1] == "constrained"


def test_knee_pendulum_locks_below_zero_and_unlocks_at_zero():
    system = to_hybrid(
        knee_pendulum(), [math.radians(30), math.radians(25)], [0.0, 0.0]
    )
    result = Completion(Halving(h=1e-2), switch="truncation").run(system, t_end=15.0)
    zeno, lift = _events(result, "zeno"), _events(result, "lift-off")
    assert len(zeno) == 2 and len(lift) == 2
    assert zeno[0].t == pytest.approx(3.6916, abs=1e-3)  # Example 2, Fig. 4(e)
    assert lift[0].t == pytest.approx(5.6172, abs=1e-3)
    assert all(z.x_after[0] < 0 for z in zeno)
    assert abs(zeno[1].x_after[0]) < abs(zeno[0].x_after[0])  # decaying
    for event in lift:
        assert abs(event.x_before[0]) < 1e-8 and event.x_before[2] > 0


# -- the forced oscillator with a stop (Burden et al., Table I, Example 2) -------------


@pytest.fixture(scope="module")
def example2():
    return exact_solution(EXAMPLE_2)


@pytest.mark.parametrize(
    "inner",
    [
        Halving(h=1e-2),
        Relaxation(h=1e-3, eps=1e-8),
        Unilateral(h=1e-2, tol=1e-12),
    ],
    ids=["halving", "relaxation", "unilateral"],
)
def test_oscillator_example2_matches_the_exact_solution(inner, example2):
    p = EXAMPLE_2
    system = to_hybrid(stop_oscillator(p), [p.x0], [p.v0])
    result = Completion(inner).run(system, t_end=p.t_max)
    assert result.status.is_success
    assert result.mode[0] == "constrained"  # starts on Z with lam > 0 (A10)
    assert rho_hat(result.t, result["x"], example2) < 1e-6
    assert len(result.events) < 100  # relaxation alone: ~11,000 at h=1e-2, eps=2e-7
    releases = [e.t for e in _events(result, "lift-off")]
    exact = [t for _, t in example2.sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)
    zenos = [e.t for e in _events(result, "zeno")]
    np.testing.assert_allclose(zenos, example2.zeno_times, atol=1e-3)


@pytest.mark.parametrize(
    "inner",
    [
        Relaxation(h=1e-3, eps=1e-8),
        Unilateral(h=1e-2, tol=1e-12),
    ],
    ids=["relaxation", "unilateral"],
)
def test_flat_ball_composes_with_other_methods(inner):
    eps = 1e-2  # their event location resolves bounces down to ~1e-4 m/s only
    result = Completion(inner, eps=eps).run(bouncing_ball(), t_end=10.0)
    (zeno,) = _events(result, "zeno")
    assert abs(zeno.t - bouncing_ball_zeno_time()) < eps
    assert result["h"][-1] == 0.0 and result["v"][-1] == 0.0


# -- bad input -------------------------------------------------------------------------


def test_bad_input_is_refused_at_the_front_door():
    with pytest.raises(FmibridgeError, match="inner"):
        Completion(None)
    with pytest.raises(FmibridgeError, match="switch"):
        Completion(Halving(), switch="later")
    with pytest.raises(FmibridgeError, match="eps"):
        Completion(Halving(), eps=-1.0)
    ball = bouncing_ball()
    bare = HybridSystem(list(ball.modes.values()), ball.initial_mode, ball.x0)
    with pytest.raises(FmibridgeError, match="constraint"):
        Completion(Halving()).run(bare, 1.0)
    assert isinstance(ball.mode("flight"), Mode)


def test_models_forced_oscillator_declares_the_stop_as_its_contact(example2):
    p = EXAMPLE_2
    result = Completion(Halving(h=0.1)).run(forced_oscillator(p), t_end=p.t_max)
    assert result.mode[0] == "constrained"  # gap x_max - x = 0, lam = 1.8 > 0
    assert rho_hat(result.t, result["x"], example2) < 1e-5
    releases = [e.t for e in _events(result, "lift-off")]
    exact = [t for _, t in example2.sticking[:-1]]
    np.testing.assert_allclose(releases, exact, atol=1e-6)
    zenos = [e.t for e in _events(result, "zeno")]
    np.testing.assert_allclose(zenos, example2.zeno_times, atol=1e-3)


# -- the constrained phase's shortcuts change nothing ---------------------------------


@pytest.mark.parametrize("hessian", [True, False], ids=["hessian", "differences"])
def test_contact_with_interleaved_indices_matches_the_contiguous_layout(hessian):
    """q, qdot at (0, 2), (1, 3) (index arrays) against (0, 1), (2, 3) (slices)."""
    c = to_hybrid(sine_ball(), [0.0, 2.0], [1.5, 0.0]).constraint
    if not hessian:
        c = dataclasses.replace(c, hessian_fn=None)
    perm = [0, 2, 1, 3]  # its own inverse
    mixed = Contact(
        c.gap,
        c.velocity,
        c.restitution,
        gap_fn=lambda t, x: c.gap_fn(t, x[perm]),
        gradient_fn=lambda t, x: c.gradient_fn(t, x[perm]),
        rhs_with_force=lambda t, x, lam: c.rhs_with_force(t, x[perm], lam)[perm],
        q_index=(0, 2),
        v_index=(1, 3),
        hessian_fn=(lambda t, x: c.hessian_fn(t, x[perm])) if hessian else None,
    )
    x = np.array([0.3, math.sin(0.3) + 1e-3, 1.2, -0.4])
    for f in ("h", "rate", "lam"):
        assert getattr(mixed, f)(0.0, x[perm]) == pytest.approx(
            getattr(c, f)(0.0, x), rel=1e-14
        )
    for f in ("project", "impact", "constrained_rhs"):
        np.testing.assert_allclose(
            getattr(mixed, f)(0.0, x[perm])[perm], getattr(c, f)(0.0, x), rtol=1e-14
        )


def test_constrained_step_from_a_known_slope_is_bit_identical():
    contact = forced_oscillator(EXAMPLE_2).constraint
    flow = ConstrainedFlow(contact, ("x", "v"), "free", ("stop",))
    x = np.array([EXAMPLE_2.x_max, 0.0])
    slope, lam = contact.constrained(0.0, x)
    assert lam == contact.lam(0.0, x) > 0
    np.testing.assert_array_equal(
        flow.stepper(RK4).constrained_step(0.0, x, 0.1, slope),
        flow.advance(0.0, x, 0.1, RK4),
    )


def test_a_journaled_run_hands_each_constrained_sample_over_at_once(
    tmp_path, monkeypatch
):
    """A supervised run streams its samples to a journal, for a crash to lose
    none: the constrained phase then hands over each sample as it is taken
    (blocks of one), and the run is the same as one without a journal."""
    from fmibridge.core.journal import Journal
    from fmibridge.core.recorder import Recorder, recording
    from fmibridge.methods.completion import CONSTRAINED

    method = Completion(Halving(h=0.01))
    plain = method.run(forced_oscillator(EXAMPLE_2), EXAMPLE_2.t_max)
    blocks: list[int] = []
    samples = Recorder.samples

    def spy(self, t, x, mode, **outputs):
        if mode == CONSTRAINED:
            blocks.append(len(t))
        return samples(self, t, x, mode, **outputs)

    monkeypatch.setattr(Recorder, "samples", spy)
    with recording(Journal(tmp_path / "journal.bin")):
        journaled = method.run(forced_oscillator(EXAMPLE_2), EXAMPLE_2.t_max)
    assert len(blocks) > 10 and max(blocks) == 1
    np.testing.assert_array_equal(journaled.t, plain.t)
    np.testing.assert_array_equal(journaled.x, plain.x)
    assert dict(journaled.stats) == dict(plain.stats)
