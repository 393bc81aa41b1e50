"""Zeno completion of a contact between two FMUs: a ball on a table on a spring.

BouncingBall (FMI 2) lands on SpringTable (FMI 3), h = ball.h - table.x >= 0.
The impacts accumulate, completion truncates them and the two slide together
with the contact force lam on both FMUs, until lam falls through zero and the
ball lifts off. Checked against the same model as one Lagrangian system (to
round-off) and against the exact motion (`spring_table_exact`).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from spring_table_exact import BallOnTable

from fmibridge import Edge, Guard, HybridSystem, Mode
from fmibridge.core.errors import AdapterError, FmibridgeError
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import open_fmu
from fmibridge.formats.adapters import load_adapter
from fmibridge.methods import Halving, Relaxation
from fmibridge.methods.completion import Completion
from fmibridge.methods.contact import fmu_contact
from fmibridge.methods.coupled_contact import coupled_contact
from fmibridge.models import bouncing_ball_zeno_time
from fmibridge.models.lagrangian import LagrangianSystem, to_hybrid

EXACT = BallOnTable()  # m_ball 0.05, m_table 1, k 100, g 9.81, e 0.3
H0, X0 = 0.0, -0.12  # the ball starts at rest 0.12 m above the table
T_END = 1.6  # two Zeno series, one lift-off between them and one after
EPS = 1e-6  # completion's budgets eps_t, eps_q, eps_v
ADAPTER = Path(__file__).parents[1] / "adapters" / "ball_on_spring_table.toml"


def gap(t, x):
    return x[0] - x[2]  # ball.h - table.x


def gap_velocity(t, x):
    return x[1] - x[3]  # ball.v - table.v


def coupled_flow(fmu_dir, **table_start):
    return couple(
        {
            "ball": open_fmu(
                fmu_dir / "BouncingBall.fmu",
                "me",
                parameters={"m": EXACT.m_ball, "g": EXACT.g},
                start={"h": H0},
            ),
            "table": open_fmu(
                fmu_dir / "SpringTable_fmi3.fmu",
                "me",
                parameters={"m": EXACT.m_table, "k": EXACT.k},
                start={"x": X0, **table_start},
            ),
        },
        [],
    )


def on_table(fmu_dir) -> HybridSystem:
    """The ball and the table, two FMUs, with their contact."""
    flow = coupled_flow(fmu_dir)
    contact = coupled_contact(
        flow, gap, gap_velocity, EXACT.e, forces=["ball.lam", "table.lam"]
    )
    impact = Edge(
        Guard(gap, "falling", name="impact"), "free", contact.impact, "impact"
    )
    return HybridSystem(
        [Mode("free", flow, (impact,))], "free", flow.x0, constraint=contact
    )


def lagrangian() -> HybridSystem:
    """The same model as one Lagrangian system, q = (h, x): M = diag(m_ball,
    m_table), bias (m_ball g, k x), h(q) = h - x (Or and Ames, eq. 3)."""
    model = LagrangianSystem(
        ("h", "x"),
        lambda q: np.diag([EXACT.m_ball, EXACT.m_table]),
        lambda t, q, v: np.array([EXACT.m_ball * EXACT.g, EXACT.k * q[1]]),
        lambda q: q[0] - q[1],
        lambda q: np.array([1.0, -1.0]),
        lambda q: np.zeros((2, 2)),
        EXACT.e,
    )
    return to_hybrid(model, [H0, X0], [0.0, 0.0])


ORDER = [0, 2, 1, 3]  # (ball.h, ball.v, table.x, table.v) -> (h, x, h_dot, x_dot)


def run(system, inner, **options):
    try:
        return Completion(inner, eps=EPS, **options).run(system, T_END)
    finally:
        system.close()


@pytest.fixture(scope="module")
def completed(fmu_dir):
    return run(on_table(fmu_dir), Halving(h=1e-3, t_tol=1e-12))


def named(result, edge):
    return [e for e in result.events if e.edge == edge]


# -- the same as one Lagrangian system --


@pytest.mark.parametrize(
    "inner",
    [Halving(h=1e-3, t_tol=1e-12), Relaxation(h=1e-3, eps=1e-9, integrator="rk4")],
    ids=["halving", "relaxation"],
)
def test_two_fmus_complete_as_the_lagrangian_model(fmu_dir, inner):
    """Same impacts, truncations, lift-offs and states as the native system,
    to round-off; lam on both FMUs is the Lagrangian's force."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Relaxation's resolution warning, in both
        ours, native = run(on_table(fmu_dir), inner), run(lagrangian(), inner)
    assert ours.status.is_success and native.status.is_success
    assert [e.edge for e in ours.events] == [e.edge for e in native.events]
    assert [e.edge for e in ours.events].count("zeno") == 2
    assert named(ours, "lift-off")
    np.testing.assert_allclose(ours.event_times, native.event_times, atol=1e-12)
    for a, b in zip(ours.events, native.events, strict=True):
        np.testing.assert_allclose(a.x_after[ORDER], b.x_after, atol=1e-12)
    np.testing.assert_allclose(ours.x[:, ORDER], native.x, atol=1e-12)
    np.testing.assert_allclose(ours["lam"], native["lam"], atol=1e-10, equal_nan=True)


def test_two_fmus_complete_as_the_same_model_as_one_fmu(fmu_dir, completed):
    """BallOnSpringTable is the two exported as one FMU, its contact read off its
    outputs gap, gap_velocity and input lam (`fmu_contact`): the same impacts,
    truncations, lift-offs and states to 1e-12."""
    flow = open_fmu(fmu_dir / "BallOnSpringTable.fmu", "me")
    contact = fmu_contact(flow, "gap", "gap_velocity", EXACT.e)
    single_gap = Guard(lambda t, x: x[0] - x[1], "falling", name="impact")
    impact = Edge(single_gap, "free", contact.impact, "impact")
    one = run(
        HybridSystem(
            [Mode("free", flow, (impact,))], "free", flow.x0, constraint=contact
        ),
        Halving(h=1e-3, t_tol=1e-12),
    )
    assert [e.edge for e in completed.events] == [e.edge for e in one.events]
    np.testing.assert_allclose(completed.event_times, one.event_times, atol=1e-12)
    np.testing.assert_allclose(completed.x[:, ORDER], one.x, atol=1e-12)


# -- against the exact motion --


def test_impacts_exchange_momentum_between_the_fmus(completed):
    """Each reset sets both FMUs: m_ball v + m_table u is kept, and the relative
    velocity is reversed times e (Or and Ames, eq. 4)."""
    impacts = named(completed, "impact")
    assert len(impacts) == 25
    for event in impacts:
        (_, v, _, u), (_, v_after, _, u_after) = event.x_before, event.x_after
        momentum = EXACT.m_ball * v + EXACT.m_table * u
        after = EXACT.m_ball * v_after + EXACT.m_table * u_after
        assert abs(after - momentum) <= 1e-15 * (1 + abs(momentum))
        reversed_ = (v_after - u_after) + EXACT.e * (v - u)
        assert abs(reversed_) <= 1e-15 * (abs(v) + abs(u))
        assert v_after > u_after  # they separate


def test_impacts_and_zeno_time_are_exact(completed):
    """The impacts up to the truncation at their exact times (1e-9 s), and the
    Zeno time at the exact accumulation point to 1e-9 s (eps_t is 1e-6 s);
    the state there the exact one within eps."""
    impacts, t_zeno, (x, u) = EXACT.bounces(0.0, np.array([H0, 0.0, X0, 0.0]))
    zeno = named(completed, "zeno")[0]
    before = [e for e in named(completed, "impact") if e.t < zeno.t]
    assert len(before) == 14
    times = [t for t, _ in impacts[: len(before)]]
    np.testing.assert_allclose([e.t for e in before], times, rtol=0, atol=1e-9)
    assert abs(zeno.t - t_zeno) <= 1e-9
    np.testing.assert_allclose(zeno.x_after, [x, u, x, u], rtol=0, atol=EPS)


def test_sliding_and_lift_off_are_exact(completed):
    """From the switch, ball and table move as one mass on the spring (to 1e-9 m)
    with lam = m_ball (g + x''), and the ball lifts off where lam = 0, at
    table.x = m_table g / k; the time is exact to 1e-9 s from the switch state
    and within eps of the exact Zeno state's."""
    zeno, lift = named(completed, "zeno")[0], named(completed, "lift-off")[0]
    _, _, x, u = zeno.x_after
    sliding = (completed.mode == "constrained") & (completed.t <= lift.t)
    assert sliding.sum() > 100
    for t, state, lam in zip(
        completed.t[sliding],
        completed.x[sliding],
        completed["lam"][sliding],
        strict=True,
    ):
        position, speed, force = EXACT.contact(t - zeno.t, x, u)
        assert state[0] == state[2] and state[1] == state[3]  # on h = 0, hdot = 0
        assert abs(state[2] - position) <= 1e-9 and abs(state[3] - speed) <= 1e-8
        assert abs(lam - force) <= 1e-8 and lam >= -1e-10
    assert abs(lift.t - zeno.t - EXACT.lift_off(x, u)) <= 1e-9
    assert abs(lift.x_after[2] - EXACT.m_table * EXACT.g / EXACT.k) <= 1e-9
    _, t_zeno, (x_exact, u_exact) = EXACT.bounces(0.0, np.array([H0, 0.0, X0, 0.0]))
    assert abs(lift.t - t_zeno - EXACT.lift_off(x_exact, u_exact)) <= EPS


def test_the_ball_lands_again_where_the_exact_flight_says(completed):
    """After the lift-off the ball flies off the table and the second series
    starts at the exact impacts from the lift-off state (1e-9 s)."""
    lift, zeno = named(completed, "lift-off")[0], named(completed, "zeno")[1]
    flight = [e for e in named(completed, "impact") if lift.t < e.t < zeno.t]
    impacts, t_zeno, _ = EXACT.bounces(lift.t, lift.x_after)
    assert len(flight) == 11
    times = [t for t, _ in impacts[: len(flight)]]
    np.testing.assert_allclose([e.t for e in flight], times, rtol=0, atol=1e-9)
    assert abs(zeno.t - t_zeno) <= 1e-9


# -- the adapter file --


def test_adapter_declares_the_contact_between_components(fmu_dir):
    """[constraint] with `component.variable` expressions and `forces`: the run
    equals the Python declaration (completion's default eps = 1e-3)."""
    with load_adapter(ADAPTER) as adapter:
        ours = adapter.run()
    native = Completion(Halving(h=1e-3, t_tol=1e-12)).run(lagrangian(), T_END)
    assert adapter.t_end == T_END and ours.state_names[:2] == ("ball.h", "ball.v")
    assert [e.edge for e in ours.events] == [e.edge for e in native.events]
    np.testing.assert_allclose(ours.event_times, native.event_times, atol=1e-12)
    np.testing.assert_allclose(ours.x[:, ORDER], native.x, atol=1e-12)


@pytest.mark.parametrize(
    "constraint, message",
    [
        (
            'forces = { "ball.lam" = 1.0, "table.lam" = -1.0 }',
            r"the force through \['table.lam'\] \(scales \[-1.0\]\) moves 'table' "
            r"into the contact",
        ),
        ('forces = "ball.lam"', r"\[constraint.forces\] must list the bodies"),
        ('forces = ["ball.lam", "table.lamda"]', "has no variable 'lamda'"),
        (
            'forces = ["ball.lam"]',
            r"The gap 'ball.h - table.x' moves with \['table.x'\] \(dh/dtable.x = -1 "
            r"at t = 0.0\), which are not coordinates q of the contact \(q: "
            r"\['ball.h'\]\)",
        ),
    ],
)
def test_adapter_contact_errors_name_the_key(tmp_path, constraint, message):
    text = ADAPTER.read_text().replace('forces = ["ball.lam", "table.lam"]', constraint)
    text = text.replace("../fmus/build", str(ADAPTER.parents[1] / "fmus" / "build"))
    path = tmp_path / "contact.toml"
    path.write_text(text)
    with pytest.raises(AdapterError, match=r"(?s)contact.toml.*" + message):
        load_adapter(path)


# -- bad declarations in Python --


@pytest.mark.parametrize(
    "velocity, forces, message",
    [
        (gap_velocity, ["ball.lam", "table.x"], "table.x has causality 'state'"),
        (gap_velocity, ["ball.lam", "floor.lam"], "no component 'floor'"),
        ("ball.v", ["ball.lam", "table.lam"], "'ball.v' is not the rate of the gap"),
        (gap_velocity, [], "`forces` names no force input"),
    ],
)
def test_bad_contacts_are_refused_naming_the_variable(
    fmu_dir, velocity, forces, message
):
    flow = coupled_flow(fmu_dir)
    try:
        with pytest.raises(FmibridgeError, match=message):
            coupled_contact(flow, gap, velocity, EXACT.e, forces=forces)
    finally:
        flow.close()


def test_a_gap_that_moves_with_time_is_refused(fmu_dir, tmp_path):
    """A table top that sinks at 1 cm/s: given as a function of t to
    `coupled_contact`, the start check finds dh/dt = 0.01 (its difference in t
    is exact on a ramp, to round-off); written in the adapter file, the gap is
    refused as it is read."""
    flow = coupled_flow(fmu_dir)
    try:
        with pytest.raises(FmibridgeError) as error:
            coupled_contact(
                flow,
                lambda t, x: x[0] - x[2] + 0.01 * t,
                gap_velocity,
                EXACT.e,
                forces=["ball.lam", "table.lam"],
            )
    finally:
        flow.close()
    found = re.search(r"moves with time at fixed states \(dh/dt = (\S+) ", str(error))
    assert found and float(found[1]) == pytest.approx(0.01, rel=1e-6)
    text = ADAPTER.read_text().replace(
        'gap = "ball.h - table.x"', 'gap = "ball.h - table.x + 0.01 * t"'
    )
    path = tmp_path / "sinking.toml"
    path.write_text(text.replace("../fmus/build", str(fmu_dir)))
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    assert str(error.value).startswith(f"{path}: ")
    assert (
        "[constraint.gap] The gap 'ball.h - table.x + 0.01 * t' reads the time t"
        in str(error.value)
    )


def test_a_force_input_that_is_not_zero_is_refused(fmu_dir):
    """A start value of lam would act outside the contact too: refused."""
    flow = couple(
        {
            "ball": open_fmu(fmu_dir / "BouncingBall.fmu", "me", start={"lam": 0.5}),
            "table": open_fmu(fmu_dir / "SpringTable.fmu", "me"),
        },
        [],
    )
    try:
        with pytest.raises(FmibridgeError, match="are not 0 before the contact acts"):
            coupled_contact(
                flow, gap, gap_velocity, 0.5, forces=["ball.lam", "table.lam"]
            )
    finally:
        flow.close()


def test_a_contact_on_named_states_with_a_component_riding_along(fmu_dir):
    """gap = "ball.h" (a floor), forces on the ball only: the table's states ride
    along untouched, and the Zeno time is sqrt(2 h0/g)(1 + e)/(1 - e) (1e-9 s)."""
    flow = coupled_flow(fmu_dir, v=0.5)
    contact = coupled_contact(flow, "ball.h", "ball.v", EXACT.e, forces=["ball.lam"])
    floor = Edge(Guard(gap_floor, "falling", name="floor"), "free", contact.impact)
    system = HybridSystem(
        [Mode("free", flow, (floor,))], "free", [1.0, 0.0, X0, 0.5], constraint=contact
    )
    result = run(system, Halving(h=1e-3, t_tol=1e-12))
    (zeno,) = named(result, "zeno")
    assert (contact.q_index, contact.v_index) == ((0,), (1,))
    assert abs(zeno.t - bouncing_ball_zeno_time(1.0, EXACT.g, EXACT.e)) <= 1e-9
    table = 0.5 / EXACT.omega * np.sin(EXACT.omega * result.t) + X0 * np.cos(
        EXACT.omega * result.t
    )
    assert np.max(np.abs(result.x[:, 2] - table)) <= 1e-8  # the spring, undisturbed
    assert result.x[-1, 0] == 0.0 and result.x[-1, 1] == 0.0


def gap_floor(t, x):
    return x[0]


def test_a_co_simulation_coupling_is_refused(fmu_dir):
    flow = couple(
        {
            "ball": open_fmu(fmu_dir / "BouncingBall.fmu", "cs"),
            "table": open_fmu(fmu_dir / "SpringTable.fmu", "cs"),
        },
        [],
    )
    try:
        with pytest.raises(FmibridgeError, match="coupled Model Exchange system"):
            coupled_contact(flow, gap, gap_velocity, 0.5, forces=["ball.lam"])
    finally:
        flow.close()
