"""Newton's cradle: one CradleBall FMU per ball, impacts between neighbours.

Each impact is a guard over two FMUs and a reset that sets the angular
velocities of both. Checked against the exact pendulum (the time to the bottom
is sqrt(L/g) K(sin^2(theta0/2)), the speed there 2 sqrt(g/L) sin(theta0/2)) and
against the sequential impact law computed here, by hand.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fmibridge import Halving, HybridSystem, Mode, Relaxation
from fmibridge.models.cradle import newtons_cradle, swing

THETA0 = 0.3  # rad: ball 1 is pulled back this far and released at rest
G, LENGTH, MASS = 9.81, 1.0, 1.0
T_TOL = 1e-10
QUARTER, OMEGA0 = swing(THETA0, LENGTH, G)  # 0.5044 s, 0.9361 rad/s
IMPACT = 1e-6  # an event that changes a velocity by less is no impact (see below)


def cradle_fmu(fmu_dir, version):
    return fmu_dir / f"CradleBall{'' if version == 2 else '_fmi3'}.fmu"


def momentum(x):
    """Horizontal momentum sum m L cos(theta) omega."""
    return MASS * LENGTH * float(np.sum(np.cos(x[0::2]) * x[1::2]))


def energy(x):
    """Kinetic plus potential energy of the balls."""
    kinetic = 0.5 * MASS * LENGTH**2 * np.sum(x[1::2] ** 2)
    return float(kinetic + MASS * G * LENGTH * np.sum(1.0 - np.cos(x[0::2])))


def sequential(v, e):
    """The sequential impact law for equal balls: the first approaching pair in
    index order collides, until no pair approaches. Returns the velocities
    after, and the edges in the order they fired."""
    v, fired = list(v), []
    for _ in range(1000):
        pairs = [i for i in range(len(v) - 1) if v[i] > v[i + 1]]
        if not pairs:
            return np.array(v), fired
        i = pairs[0]
        fired.append(f"ball{i + 1}-ball{i + 2}")
        v[i], v[i + 1] = (
            (1 - e) / 2 * v[i] + (1 + e) / 2 * v[i + 1],
            (1 + e) / 2 * v[i] + (1 - e) / 2 * v[i + 1],
        )
    raise AssertionError("the sequential law did not settle")


def impacts(result):
    """The events that change a velocity by more than IMPACT.

    The balls left at rest touch at their lowest point to within T_TOL times
    their speed, so they swing about it with amplitudes of ~1e-11 rad and may
    meet again at relative speeds of that order: real (tiny) impacts of the
    located state, which the test lets pass and bounds.
    """
    found = []
    for event in result.events:
        change = np.max(np.abs(event.x_after - event.x_before))
        assert change > IMPACT or change < 1e-9, change
        if change > IMPACT:
            found.append(event)
    return found


def check_conserved(events, e):
    for event in events:
        assert abs(momentum(event.x_after) - momentum(event.x_before)) <= 1e-9
        if e == 1.0:
            assert abs(energy(event.x_after) - energy(event.x_before)) <= 1e-9


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("interface", ["me", "cs"])
@pytest.mark.parametrize(
    ("theta0", "leaving"),
    [([-THETA0, 0.0, 0.0], 1), ([-THETA0, -THETA0, 0.0, 0.0, 0.0], 2)],
    ids=["one-of-three", "two-of-five"],
)
def test_halving_resolves_the_cradle_as_sequential_impacts(
    fmu_dir, version, interface, theta0, leaving
):
    system = newtons_cradle(cradle_fmu(fmu_dir, version), theta0, interface=interface)
    try:
        result = Halving(h=1e-3, t_tol=T_TOL).run(system, 3 * QUARTER + 0.05)
    finally:
        system.close()
    assert result.status.is_success
    found = impacts(result)
    n = len(theta0)
    first = [ev for ev in found if ev.t < 2 * QUARTER]
    expected, order = sequential(np.where(np.array(theta0) < 0, OMEGA0, 0.0), 1.0)
    assert [ev.edge for ev in first] == order and len(found) == 2 * len(order)
    for ev in first:  # all at the instant ball 1 reaches the bottom
        assert abs(ev.t - QUARTER) <= 1e-9
    omega = first[-1].x_after[1::2]
    assert expected.tolist() == [0.0] * (n - leaving) + [OMEGA0] * leaving
    assert np.max(np.abs(omega - expected)) <= 1e-9  # velocities exchanged exactly
    for ev in found[len(first) :]:  # half a period later, back the other way
        assert abs(ev.t - 3 * QUARTER) <= 1e-9
    assert np.max(np.abs(found[-1].x_after[1::2] + expected[::-1])) <= 1e-9
    check_conserved(found, 1.0)


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_inelastic_cradle_follows_the_sequential_law(fmu_dir, e):
    system = newtons_cradle(cradle_fmu(fmu_dir, 2), [-THETA0, 0.0, 0.0], e=e)
    try:
        result = Halving(h=1e-3, t_tol=T_TOL).run(system, QUARTER + 0.01)
    finally:
        system.close()
    found = impacts(result)
    expected, order = sequential([OMEGA0, 0.0, 0.0], e)
    assert [ev.edge for ev in found] == order
    assert all(abs(ev.t - QUARTER) <= 1e-9 for ev in found)
    assert np.max(np.abs(found[-1].x_after[1::2] - expected)) <= 1e-9
    check_conserved(found, e)
    assert energy(found[-1].x_after) < energy(found[0].x_before) - 1e-3


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_relaxation_resolves_simultaneous_impacts(fmu_dir, interface):
    """Balls 1 and 3 hit ball 2 at the same instant from both sides."""
    eps = 1e-8
    system = newtons_cradle(
        cradle_fmu(fmu_dir, 2), [-THETA0, 0.0, THETA0], interface=interface
    )
    try:
        method = Relaxation(h=1e-3, eps=eps, integrator="rk4")
        result = method.run(system, QUARTER + 0.01)
    finally:
        system.close()
    found = impacts(result)
    assert found[0].simultaneous == ("ball2-ball3",)  # both strips entered at once
    assert [ev.edge for ev in found] == ["ball1-ball2", "ball2-ball3", "ball1-ball2"]
    assert all(0.0 <= ev.t - QUARTER <= 3 * eps for ev in found)  # strip waits
    omega = found[-1].x_after[1::2]
    assert np.max(np.abs(omega - [-OMEGA0, 0.0, OMEGA0])) <= 1e-9
    check_conserved(found, 1.0)


def test_a_cross_fmu_guard_rolls_every_fmu_back(fmu_dir):
    """Co-Simulation: the crossing of a guard over two FMUs is bracketed to
    t_tol by undoing steps; at the event every FMU holds the event's state."""
    system = newtons_cradle(cradle_fmu(fmu_dir, 3), [-THETA0, 0.0, 0.0], interface="cs")
    flow = system.mode("cradle").flow
    seen = []

    def fmu_states():
        """Time and states as each FMU holds them, read from the FMU."""
        return [
            c.flow.instance.get_reals(
                [c.flow.archive.variables[n].vr for n in ("time", "theta", "omega")]
            )
            for c in flow.components
        ]

    def watched(edge):
        def reset(t, x):
            seen.append((t, x.copy(), fmu_states()))
            return edge.reset(t, x)

        return dataclasses.replace(edge, reset=reset)

    mode = system.mode("cradle")
    watched_system = HybridSystem(
        [Mode("cradle", flow, [watched(e) for e in mode.edges])], "cradle", flow.x0
    )
    try:
        result = Halving(h=1e-2, t_tol=T_TOL).run(watched_system, QUARTER + 0.01)
    finally:
        system.close()
    assert result.stats["n_rejected"] >= 20  # steps past the impact, undone
    t, x, held = seen[0]
    assert abs(t - QUARTER) <= T_TOL
    for k, (time_k, theta_k, omega_k) in enumerate(held):
        assert math.isclose(time_k, t, rel_tol=1e-15)
        assert (theta_k, omega_k) == (x[2 * k], x[2 * k + 1])  # bit for bit
    assert abs(held[0][2] - OMEGA0) <= 1e-9 and held[1][2] == 0.0
