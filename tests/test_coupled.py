"""Coupled systems: FMUs and native blocks joined by connections, as one flow.

The plant (MassSpringStop) and its controller (PositionController), coupled in
Model Exchange, equal the same model exported as one FMU
(ControlledMassSpringStop); coupled in Co-Simulation they converge to it at the
orders of their master. Algebraic loops are solved against the loop's closed
form, and bad input is refused naming the component and variable.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
from test_fmu_flows import copy_fmu

from fmibridge import (
    FmibridgeError,
    Halving,
    HybridSystem,
    Mode,
    NativeFlow,
    Relaxation,
    Unilateral,
)
from fmibridge.core.errors import FMUError
from fmibridge.core.integrators import SCHEMES
from fmibridge.core.system import Edge, Guard
from fmibridge.core.units import UnitDefinition
from fmibridge.flows.components import NativeBlock
from fmibridge.flows.cosim_master import Communication
from fmibridge.flows.coupled import CoupledModelExchange, couple
from fmibridge.flows.fmu import fmu_system, open_fmu
from fmibridge.flows.loops import AlgebraicLoopError, solve_loop
from fmibridge.validation.cosim_orders import STEPS, communication_orders

PLANT = dict(m=1.0, k=4.0, d=0.2, x_stop=1.0, e=0.6)  # MassSpringStop's defaults
CONTROLLER = dict(Kp=20.0, Ki=2.0, Kd=2.0, R=1.4, Omega=2.5)  # PositionController's
LOOP = [
    ("plant.x", "controller.x_meas"),
    ("plant.v", "controller.v_meas"),
    ("controller.F", "plant.F"),
]
T_END = 10.0  # seven impacts at the stop (the first at 0.565 s)
N_IMPACTS = 7


def fmu(fmu_dir, model, version=2):
    return fmu_dir / f"{model}{'' if version == 2 else '_fmi3'}.fmu"


def with_stop(flow, prefix="plant."):
    """The stop of the plant as the master's guard: gap = x_stop - x, v -> -e v."""
    ix = flow.state_names.index(f"{prefix}x")
    iv = flow.state_names.index(f"{prefix}v")

    def gap(t, x):
        return PLANT["x_stop"] - x[ix]

    def bounce(t, x):
        y = x.copy()
        y[iv] = -PLANT["e"] * x[iv]
        return y

    stop = Edge(Guard(gap, "falling"), "run", bounce, "stop")
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def plant_and_controller(fmu_dir, interface, *, versions=(2, 3), **options):
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop", versions[0]), interface),
        "controller": open_fmu(
            fmu(fmu_dir, "PositionController", versions[1]), interface
        ),
    }
    return couple(parts, LOOP, **options)


@pytest.fixture(scope="module")
def single(fmu_dir):
    """The plant and controller exported as one FMU, with the stop: the reference."""
    system = with_stop(open_fmu(fmu(fmu_dir, "ControlledMassSpringStop"), "me"), "")
    try:
        yield Halving(h=1e-3).run(system, T_END)
    finally:
        system.close()


def test_model_exchange_coupling_equals_the_single_fmu(fmu_dir, single):
    flow = plant_and_controller(fmu_dir, "me")  # FMI 2 plant, FMI 3 controller
    assert isinstance(flow, CoupledModelExchange)
    assert flow.state_names == ("plant.x", "plant.v", "controller.z")
    system = with_stop(flow)
    try:
        result = Halving(h=1e-3).run(system, T_END)
    finally:
        system.close()
    assert result.status.is_success and len(result.events) == N_IMPACTS
    assert single.status.is_success and len(single.events) == N_IMPACTS
    assert np.max(np.abs(result.event_times - single.event_times)) <= 1e-9
    assert result.x.shape == single.x.shape
    assert np.max(np.abs(result.x - single.x)) <= 1e-9
    assert result.to_pandas().columns[:3].tolist() == list(flow.state_names)


def test_fmi1_components_couple_as_their_fmi2_builds(fmu_dir):
    """FMI 1.0 builds of the same C (their calls made in Python) give the FMI 2
    coupling's run."""

    def run(suffix):
        parts = {
            name: open_fmu(fmu_dir / f"{model}{suffix}.fmu", "me")
            for name, model in (
                ("plant", "MassSpringStop"),
                ("controller", "PositionController"),
            )
        }
        system = with_stop(couple(parts, LOOP))
        try:
            return Halving(h=1e-2).run(system, 2.0)
        finally:
            system.close()

    ours, fmi2 = run("_fmi1me"), run("")
    assert len(ours.events) == len(fmi2.events) == 1
    assert ours.x.shape == fmi2.x.shape
    assert np.max(np.abs(ours.x - fmi2.x)) <= 1e-12


def test_a_native_block_replaces_an_fmu(fmu_dir, single):
    def control(t, x, u):  # the controller's equations, in Python
        return np.array([CONTROLLER["R"] * np.sin(CONTROLLER["Omega"] * t) - u[0]])

    def force(t, x, u):
        r = CONTROLLER["R"] * np.sin(CONTROLLER["Omega"] * t)
        kp, ki, kd = CONTROLLER["Kp"], CONTROLLER["Ki"], CONTROLLER["Kd"]
        return np.array([kp * (r - u[0]) + ki * x[0] - kd * u[1]])

    block = NativeBlock(
        control,
        ["z"],
        [0.0],
        inputs=["x_meas", "v_meas"],
        outputs=["F"],
        g=force,
        feedthrough={"F": ["x_meas", "v_meas"]},
        units={"x_meas": "m", "F": "N"},
    )
    plant = open_fmu(fmu(fmu_dir, "MassSpringStop"), "me")
    system = with_stop(couple({"plant": plant, "controller": block}, LOOP))
    try:
        result = Halving(h=1e-3).run(system, T_END)
    finally:
        system.close()
    assert len(result.events) == N_IMPACTS
    assert np.max(np.abs(result.x - single.x)) <= 1e-9


FORCE = UnitDefinition((1, 1, -2, 0, 0, 0, 0, 0))  # kg.m.s-2


@pytest.mark.parametrize(
    ("units", "problem"),
    [
        ({"N": FORCE, "kg.m/s2": FORCE}, None),
        (None, "('kg.m/s2' is undefined, 'N' is undefined)"),
        (
            {"N": FORCE, "kg.m/s2": UnitDefinition((1, 1, -1, 0, 0, 0, 0, 0))},
            "('kg.m/s2' is kg.m.s-1, 'N' is kg.m.s-2)",
        ),
    ],
)
def test_ports_spelled_differently_are_one_unit_where_defined_alike(
    fmu_dir, units, problem
):
    """The block's force in 'kg.m/s2' drives the plant's F in 'N': one unit
    where `units` (an SSD's Units) defines both alike, else refused naming the
    connection, both spellings and their definitions."""
    block = NativeBlock(
        lambda t, x, u: np.zeros(0), [], [], inputs=["x_meas", "v_meas"],
        outputs=["F"], g=lambda t, x, u: np.array([3.0 - u[0]]),
        units={"F": "kg.m/s2"},
    )  # fmt: skip
    plant = open_fmu(fmu(fmu_dir, "MassSpringStop"), "me")
    if problem is not None:
        with pytest.raises(FmibridgeError, match="unit mismatch") as error:
            couple({"plant": plant, "controller": block}, LOOP, units=units)
        message = str(error.value)
        assert "controller.F -> plant.F" in message and problem in message
        return
    flow = couple({"plant": plant, "controller": block}, LOOP, units=units)
    try:
        values = flow.variables(0.0, flow.x0)
    finally:
        flow.close()
    # a = (F - k x - d v) / m with m = 1 kg at rest: the plant feels the block's F
    assert values["plant.a"] == values["controller.F"] == 3.0 - values["plant.x"]


# -- Co-Simulation: communication steps, rolled back together --

# Final-state error against the single FMU (`validation.cosim_orders`, Halving
# brackets each impact to 1e-10 s); the slopes measured at h = 0.04, 0.02, 0.01:
# Jacobi 1.07 held, 1.90 extrapolated; Gauss-Seidel 1.07 and 1.92.
ORDERS = {"hold": 1.0, "extrapolate": 2.0}
ORDER_TOL = 0.15


def check_orders(errors, orders):
    assert (errors["impacts"] == N_IMPACTS).all()
    for row in orders.itertuples():
        assert abs(row.order - ORDERS[row.inputs]) <= ORDER_TOL, (errors, orders)
    finest = errors[errors["h"] == errors["h"].min()].set_index("inputs")["error"]
    assert finest["hold"].max() < 0.05 and finest["extrapolate"].max() < 1e-3


def test_co_simulation_converges_at_the_order_of_its_master(fmu_dir):
    check_orders(*communication_orders(STEPS["tiny"], fmu_dir))


@pytest.mark.slow
def test_co_simulation_orders_over_the_full_range_of_steps(fmu_dir):
    """`fmibridge validate --cosim --full`: h from 0.08 to 0.00125."""
    check_orders(*communication_orders(STEPS["full"], fmu_dir))


def test_mixed_model_exchange_and_co_simulation(fmu_dir, single):
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me"),
        "controller": open_fmu(fmu(fmu_dir, "PositionController"), "cs"),
    }
    flow = couple(
        parts, LOOP, communication=Communication("gauss-seidel", "extrapolate")
    )
    system = with_stop(flow)
    try:
        result = Halving(h=0.01).run(system, T_END)
    finally:
        system.close()
    assert len(result.events) == N_IMPACTS
    assert np.max(np.abs(result.x[-1] - single.x[-1])) < 2e-3


def test_a_communication_step_is_repeatable(fmu_dir):
    flow = plant_and_controller(
        fmu_dir, "cs", communication=Communication("jacobi", "extrapolate")
    )
    try:
        x1 = flow.advance(0.0, flow.x0, 0.1, None)
        x2 = flow.advance(0.1, x1, 0.1, None)
        again = flow.advance(0.1, x1, 0.1, None)  # every FMU restored to (0.1, x1)
        assert np.array_equal(x2, again)
        half = flow.advance(0.1, x1, 0.05, None)
        assert not np.array_equal(half, x2) and np.array_equal(
            flow.advance(0.1, x1, 0.1, None), x2
        )
    finally:
        flow.close()


# -- algebraic loops: direct feedthrough from the model descriptions --

ACCELERATION_FEEDBACK = [*LOOP, ("plant.a", "controller.a_meas")]


def closed_loop(ka):
    """The plant with F = Kp (r - x) + Ki z - Kd v - Ka a solved for F by hand."""
    p, c = PLANT, CONTROLLER

    def f(t, x, u):
        r = c["R"] * np.sin(c["Omega"] * t)
        spring = p["k"] * x[0] + p["d"] * x[1]
        force = (c["Kp"] * (r - x[0]) + c["Ki"] * x[2] - c["Kd"] * x[1]) / (
            1 + ka / p["m"]
        ) + ka / p["m"] * spring / (1 + ka / p["m"])
        return np.array([x[1], (force - spring) / p["m"], r - x[0]])

    return NativeFlow(f, ["plant.x", "plant.v", "controller.z"])


@pytest.mark.parametrize("ka", [0.5, 2.0])  # fixed point converges; Newton needed
def test_algebraic_loop_is_found_and_solved(fmu_dir, ka):
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me"),
        "controller": open_fmu(
            fmu(fmu_dir, "PositionController", 3), "me", parameters={"Ka": ka}
        ),
    }
    flow = couple(parts, ACCELERATION_FEEDBACK)
    assert flow.coupling.loops() == [
        "plant.a -> controller.a_meas -> controller.F -> plant.F -> plant.a"
    ]
    exact = closed_loop(ka)
    try:
        ours = Halving(h=1e-2).run(HybridSystem([Mode("m", flow)], "m", flow.x0), 3.0)
        theirs = Halving(h=1e-2).run(
            HybridSystem([Mode("m", exact)], "m", flow.x0), 3.0
        )
    finally:
        flow.close()
    assert np.max(np.abs(ours.x - theirs.x)) <= 1e-12 * np.max(np.abs(theirs.x))


def test_a_loop_without_solution_is_refused_naming_it(fmu_dir):
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me"),
        "controller": open_fmu(
            fmu(fmu_dir, "PositionController"), "me", parameters={"Ka": -1.0}
        ),
    }
    with pytest.raises(AlgebraicLoopError, match="plant.a -> controller.a_meas"):
        couple(parts, ACCELERATION_FEEDBACK)


def test_a_loop_through_blocks_without_declared_feedthrough_is_found():
    def gain(k):
        return NativeBlock(
            lambda t, x, u: np.zeros(0), [], [], inputs=["u"], outputs=["y"],
            g=lambda t, x, u: np.array([k * u[0] + 1.0]),
        )  # fmt: skip

    flow = couple({"a": gain(0.5), "b": gain(-3.0)}, [("a.y", "b.u"), ("b.y", "a.u")])
    assert flow.coupling.loops() == ["a.y -> b.u -> b.y -> a.u -> a.y"]
    values = flow.variables(0.0, flow.x0)
    # y_a = 0.5 y_b + 1, y_b = -3 y_a + 1: y_a = 1.5 / 2.5
    assert values["a.y"] == pytest.approx(0.6, abs=1e-13)
    assert values["b.y"] == pytest.approx(-0.8, abs=1e-13)


def test_solve_loop_uses_fixed_points_then_newton():
    calls = []

    def contraction(u):
        calls.append(u.copy())
        return 0.5 * u + 1.0

    assert solve_loop(contraction, np.zeros(1), "c", 0.0) == pytest.approx(2.0, 1e-12)
    n_fixed = len(calls)
    calls.clear()

    def expansion(u):
        calls.append(u.copy())
        return -3.0 * u + 1.0

    assert solve_loop(expansion, np.zeros(1), "e", 0.0) == pytest.approx(0.25, 1e-12)
    assert n_fixed > 10 and len(calls) < 10  # Newton: a few calls, FD included
    with pytest.raises(AlgebraicLoopError, match="loop s has no unique solution"):
        solve_loop(lambda u: u + 1.0, np.zeros(1), "s", 0.0)


# -- bad input: one clear error naming the component and variable --


@pytest.mark.parametrize(
    ("connections", "message"),
    [
        ([("plant.x", "ctrl.x_meas")], "no component 'ctrl'"),
        ([("plant.y", "controller.x_meas")], "component 'plant' .* no variable 'y'"),
        (
            [("plant.x", "controller.x_meas"), ("plant.gap", "controller.x_meas")],
            "input controller.x_meas is connected twice, from plant.x and from "
            "plant.gap",
        ),
        ([("plant.x", "controller.F")], "controller.F is an output, not an input"),
        ([("controller.x_meas", "plant.F")], "controller.x_meas is an input, not an"),
        (
            [("plant.v", "controller.x_meas")],
            "unit mismatch, plant.v is in 'm/s' and controller.x_meas in 'm'",
        ),
        ([("plant", "controller.x_meas")], "'plant' must be `component.variable`"),
    ],
)
def test_bad_connections_are_refused_naming_component_and_variable(
    fmu_dir, connections, message
):
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me"),
        "controller": open_fmu(fmu(fmu_dir, "PositionController"), "me"),
    }
    with pytest.raises(FmibridgeError, match=message):
        couple(parts, connections)
    assert parts["plant"]._instance is None  # closed on the error


def test_a_component_name_with_a_dot_is_refused(fmu_dir):
    with pytest.raises(FmibridgeError, match="'my.plant' must be a non-empty"):
        couple({"my.plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me")}, [])


# -- the FMUs' own events, and the other methods --


def test_fmu_events_of_a_component_run_inside_the_coupling(fmu_dir):
    """BouncingBallEvents' own `when h <= 0` fires inside a coupled system."""
    path = fmu_dir / "BouncingBallEvents.fmu"
    alone = fmu_system(path, "me")
    flow = couple({"ball": open_fmu(path, "me"), "clock": (
        NativeFlow(lambda t, x, u: np.ones(1), ["s"]), [0.0])}, [])  # fmt: skip
    coupled = HybridSystem([Mode("m", flow, flow.event_edges("m"))], "m", flow.x0)
    try:
        a = Halving(h=1e-2, t_tol=1e-10).run(alone, 2.0)
        b = Halving(h=1e-2, t_tol=1e-10).run(coupled, 2.0)
    finally:
        alone.close()
        coupled.close()
    assert len(a.events) == len(b.events) >= 3
    assert np.max(np.abs(a.event_times - b.event_times)) <= 1e-12
    assert np.max(np.abs(a.x[-1] - b.x[-1, :2])) <= 1e-12


REFERENCE_FMUS = Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "/nonexistent"))


@pytest.mark.skipif(
    not REFERENCE_FMUS.is_dir(), reason="FMIBRIDGE_REFERENCE_FMUS is not set"
)
def test_events_inside_a_cs_component_step_are_logged(fmu_dir):
    """The Reference BouncingBall (FMI 3 CS, Event Mode) coupled with SpringTable:
    its 12 own events appear in the coupled log as `ball.fmu_event`, at the same
    times and with the same ball states as the FMU alone; the table's part is
    interpolated between the communication points (exact: 0.1 cos 10 t)."""
    path = REFERENCE_FMUS / "fmi3" / "BouncingBall.fmu"
    alone = fmu_system(path, "cs")
    table = open_fmu(fmu_dir / "SpringTable_fmi3.fmu", "cs", start={"x": 0.1})
    flow = couple({"ball": open_fmu(path, "cs"), "table": table}, [])
    coupled = HybridSystem([Mode("m", flow, ())], "m", flow.x0)
    try:
        single = Halving(h=1e-2, t_tol=1e-12).run(alone, 3.0)
        ours = Halving(h=1e-2, t_tol=1e-12).run(coupled, 3.0)
    finally:
        alone.close()
        coupled.close()
    assert len(single.events) == len(ours.events) == 12
    assert {e.edge for e in ours.events} == {"ball.fmu_event"}
    assert np.array_equal(ours.event_times, single.event_times)
    for a, b in zip(single.events, ours.events, strict=True):
        assert np.array_equal(a.x_before, b.x_before[:2])
        assert np.array_equal(a.x_after, b.x_after[:2])
        assert np.array_equal(b.x_before[2:], b.x_after[2:])
        exact = 0.1 * np.cos(10.0 * b.t)  # linear interpolation over h: <= 1.3e-4
        assert abs(b.x_before[2] - exact) <= 0.1 * 100 * 1e-4 / 8


@pytest.mark.parametrize(
    "method",
    [Relaxation(h=1e-3, eps=1e-9, integrator="rk4"), Unilateral(h=1e-3)],
    ids=["relaxation", "unilateral"],
)
def test_other_methods_see_the_coupling_as_the_single_fmu(fmu_dir, method):
    coupled = with_stop(plant_and_controller(fmu_dir, "me"))
    single = with_stop(open_fmu(fmu(fmu_dir, "ControlledMassSpringStop"), "me"), "")
    try:  # the first three impacts
        ours, theirs = method.run(coupled, 3.5), method.run(single, 3.5)
    finally:
        coupled.close()
        single.close()
    assert ours.status.is_success and len(ours.events) == 3
    assert np.max(np.abs(ours.event_times - theirs.event_times)) <= 1e-9
    assert np.max(np.abs(ours.x[-1] - theirs.x[-1])) <= 1e-9


def run_with_stop(flow, t_end, h=0.01):
    system = with_stop(flow)
    try:
        return Halving(h=h).run(system, t_end)
    finally:
        system.close()


def fmpy_master(paths, scheme, inputs, h, n):
    """The plant and controller (FMI 2 CS) coupled by a master written plainly
    on fmpy: at each point t = k h the connections in dependency order (x, v
    to the controller, then F, which feeds through them, to the plant), each
    input held at its value at t, or on the line through the outputs at t - h
    and t taken at t + h/2; Gauss-Seidel steps the plant first and gives the
    controller its new outputs (held, or the line from t to t + h at t + h/2).
    Returns the states (plant x, v; controller z) at each point."""
    import fmpy
    from fmpy.fmi2 import FMU2Slave

    fmus = []
    for path in paths:
        md = fmpy.read_model_description(str(path))
        fmu = FMU2Slave(
            guid=md.guid,
            unzipDirectory=fmpy.extract(str(path)),
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName=path.stem,
        )
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        fmus.append((fmu, {v.name: v.valueReference for v in md.modelVariables}))
    (plant, p), (controller, c) = fmus
    try:
        states, previous = [], None
        for k in range(n + 1):
            t = k * h
            xv = plant.getReal([p["x"], p["v"]])
            states.append([*xv, *controller.getReal([c["z"]])])
            if k == n:
                break
            controller.setReal([c["x_meas"], c["v_meas"]], xv)
            y = np.array([*xv, *controller.getReal([c["F"]])])  # x, v, F at t
            extrapolated = inputs == "extrapolate" and previous is not None
            slope = (y - previous) / h if extrapolated else np.zeros(3)
            previous = y
            plant.setReal([p["F"]], [y[2] + slope[2] * (h / 2)])
            plant.doStep(t, h)
            if scheme == "gauss-seidel":
                new = np.array(plant.getReal([p["x"], p["v"]]))
                if inputs == "extrapolate":
                    slope[:2] = (new - y[:2]) / h
                else:
                    y[:2] = new
            controller.setReal([c["x_meas"], c["v_meas"]], y[:2] + slope[:2] * (h / 2))
            controller.doStep(t, h)
        return np.array(states)
    finally:
        for fmu, _ in fmus:
            fmu.terminate()
            fmu.freeInstance()


def without_state_saving(path, target):
    """A copy of the FMU with canGetAndSetFMUstate false: the master steps it
    through Python (`CoSimulationFlow.advance`), not by its C functions."""

    def rewrite(member, data):
        if member == "modelDescription.xml":
            flag = b'canGetAndSetFMUstate="true"'
            assert flag in data
            data = data.replace(flag, b'canGetAndSetFMUstate="false"')
        return member, data

    copy_fmu(path, target, rewrite)
    return target


@pytest.mark.parametrize("scheme", ["jacobi", "gauss-seidel"])
@pytest.mark.parametrize("inputs", ["hold", "extrapolate"])
@pytest.mark.parametrize("called", ["directly", "back"])
def test_the_communication_step_is_the_master_written_on_fmpy(
    fmu_dir, tmp_path, scheme, inputs, called
):
    """Two Co-Simulation FMUs (FMI 2), 200 communication steps of 0.01 s: every
    sample equals the plain master on fmpy (`fmpy_master`) to round-off, with
    the FMUs called from C (`_cosim`) or stepped through Python (copies without
    state saving), for each scheme and input mode (measured: 1.1e-14 to
    1.6e-14; the nearest other scheme or mode differs by 2.4e-4)."""
    h, n = 0.01, 200
    paths = [fmu(fmu_dir, "MassSpringStop"), fmu(fmu_dir, "PositionController", 2)]
    if called == "back":
        paths = [without_state_saving(path, tmp_path / path.name) for path in paths]
    parts = {
        name: open_fmu(path, "cs")
        for name, path in zip(["plant", "controller"], paths, strict=True)
    }
    flow = couple(parts, LOOP, communication=Communication(scheme, inputs))
    assert flow._compiled.direct == (called == "directly")
    try:
        result = Halving(h=h).run(HybridSystem([Mode("m", flow)], "m", flow.x0), n * h)
    finally:
        flow.close()
    theirs = fmpy_master(paths, scheme, inputs, h, n)
    assert result.x.shape == theirs.shape == (n + 1, 3)
    assert np.max(np.abs(result.x - theirs)) <= 1e-12
    assert np.max(np.abs(result.x[:, 0])) > 0.5  # the plant moved


def damped_oscillation(t, x0, p=PLANT):
    """x(t) of m x'' + d x' + k x = 0 from (x0, 0): MassSpringStop, F = 0."""
    gamma = p["d"] / (2 * p["m"])
    omega = math.sqrt(p["k"] / p["m"] - gamma**2)
    return (
        math.exp(-gamma * t)
        * x0
        * (math.cos(omega * t) + gamma / omega * math.sin(omega * t))
    )


@pytest.mark.parametrize(
    "integrator, order", [("euler", 1), ("midpoint", 2), ("rk4", 4)]
)
def test_a_model_exchange_component_converges_at_the_order_of_its_scheme(
    fmu_dir, integrator, order
):
    """MassSpringStop in Model Exchange, unforced, in a Co-Simulation coupling
    (it feeds a Co-Simulation controller): the master integrates it with the
    scheme, called back from the compiled step, and its position at t = 2
    converges to the closed form at the scheme's order (slopes measured over
    h = 0.04, 0.02, 0.01: euler 1.10, 1.05; midpoint 1.97, 1.99; rk4 3.97,
    3.99)."""
    x0, t_end, errors = 0.5, 2.0, []
    for h in (0.04, 0.02, 0.01):
        parts = {
            "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "me", start={"x": x0}),
            "controller": open_fmu(fmu(fmu_dir, "PositionController"), "cs"),
        }
        flow = couple(parts, [("plant.x", "controller.x_meas")])
        assert not flow._compiled.direct
        try:
            result = Halving(h=h, integrator=integrator).run(
                HybridSystem([Mode("m", flow)], "m", flow.x0), t_end
            )
        finally:
            flow.close()
        errors.append(abs(result.x[-1, 0] - damped_oscillation(t_end, x0)))
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(slopes - order) <= 0.15), (errors, slopes)


@pytest.mark.parametrize("ka", [0.5, 2.0])  # fixed point converges; Newton needed
def test_an_algebraic_loop_is_solved_at_each_communication_point(fmu_dir, ka):
    """The acceleration feedback in Co-Simulation: at each communication point
    the compiled step's propagation (`coupling.evaluate`, called back) gives F
    and a of the loop's closed form at the FMUs' states to 1e-12."""
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop"), "cs"),
        "controller": open_fmu(
            fmu(fmu_dir, "PositionController", 3), "cs", parameters={"Ka": ka}
        ),
    }
    flow = couple(
        parts,
        ACCELERATION_FEEDBACK,
        communication=Communication("gauss-seidel", "extrapolate"),
    )
    p, c = PLANT, CONTROLLER
    slot = {f"{flow.components[k].name}.{name}": i
            for i, (k, name) in enumerate(flow.coupling.sources)}  # fmt: skip
    assert not flow._compiled.direct
    try:
        t, x = 0.0, flow.x0
        for _ in range(50):
            y = flow.advance(t, x, 0.01, None)
            x_, v, z = x
            r = c["R"] * np.sin(c["Omega"] * t)
            spring = p["k"] * x_ + p["d"] * v
            force = (c["Kp"] * (r - x_) + c["Ki"] * z - c["Kd"] * v) / (
                1 + ka / p["m"]
            ) + ka / p["m"] * spring / (1 + ka / p["m"])
            outputs = flow._compiled.y_t
            assert abs(outputs[slot["controller.F"]] - force) <= 1e-12
            assert abs(outputs[slot["plant.a"]] - (force - spring) / p["m"]) <= 1e-12
            t, x = t + 0.01, y
    finally:
        flow.close()
    assert abs(x[0]) > 0.1  # the plant moved


@pytest.mark.parametrize("plant", ["cs", "me"])
@pytest.mark.parametrize("version", [2, 3])
def test_an_fmu_error_in_the_compiled_step_names_the_fmi_function(
    fmu_dir, version, plant
):
    """A status above warning from an FMU the compiled step calls directly (the
    controller, beside a plant in CS or, integrated by the master, in ME)
    raises the FMUError of the lower layer: doStep refused (h < 0), then
    setReal refused (the FMU terminated behind the master)."""
    parts = {
        "plant": open_fmu(fmu(fmu_dir, "MassSpringStop", version), plant),
        "controller": open_fmu(fmu(fmu_dir, "PositionController", version), "cs"),
    }
    flow = couple(parts, LOOP)
    names = {2: ("fmi2DoStep", "fmi2SetReal"), 3: ("fmi3DoStep", "fmi3SetFloat64")}
    do_step, set_real = names[version]
    scheme = SCHEMES["rk4"]
    try:
        assert list(flow._called) == ([0, 1] if plant == "cs" else [1])
        assert flow._compiled.direct == (plant == "cs")
        with pytest.raises(FMUError, match=f"{do_step} returned error.*needs h >= 0"):
            flow.advance(0.0, flow.x0, -0.01, scheme)
        x1 = flow.advance(0.0, flow.x0, 0.01, scheme)
        parts["controller"].instance._fmu.terminate()  # fmpy's, not ours
        with pytest.raises(FMUError, match=f"{set_real} returned error"):
            flow.advance(0.01, x1, 0.01, scheme)
    finally:
        flow.close()


def test_a_step_cut_short_by_a_component_called_back_can_be_taken_again(fmu_dir):
    """Gauss-Seidel, the plant (CS, called from C) first, then a native
    controller that raises: the plant has stepped and knows it, so the same
    step taken again restores it first and gives the bits of an uncut run."""
    failing = [False]

    def control(t, x, u):
        if failing[0]:
            raise ValueError("controller failed")
        return np.array([CONTROLLER["R"] * np.sin(CONTROLLER["Omega"] * t) - u[0]])

    def force(t, x, u):
        r = CONTROLLER["R"] * np.sin(CONTROLLER["Omega"] * t)
        return np.array([CONTROLLER["Kp"] * (r - u[0]) - CONTROLLER["Kd"] * u[1]])

    def coupled():
        block = NativeBlock(
            control, ["z"], [0.0], inputs=["x_meas", "v_meas"], outputs=["F"],
            g=force,
        )  # fmt: skip
        plant = open_fmu(fmu(fmu_dir, "MassSpringStop"), "cs")
        gauss_seidel = Communication("gauss-seidel")
        return couple(
            {"plant": plant, "controller": block}, LOOP, communication=gauss_seidel
        )

    scheme = SCHEMES["rk4"]
    flow, reference = coupled(), coupled()
    assert list(flow._called) == [0]
    try:
        x1 = flow.advance(0.0, flow.x0, 0.1, scheme)
        failing[0] = True
        with pytest.raises(ValueError, match="controller failed"):
            flow.advance(0.1, x1, 0.1, scheme)
        failing[0] = False
        again = flow.advance(0.1, x1, 0.1, scheme)
        r1 = reference.advance(0.0, reference.x0, 0.1, scheme)
        uncut = reference.advance(0.1, r1, 0.1, scheme)
    finally:
        flow.close()
        reference.close()
    assert np.array_equal(x1, r1)
    assert np.array_equal(again, uncut) and not np.array_equal(again, x1)


def test_a_component_closed_behind_the_compiled_step_is_an_error(fmu_dir):
    """The compiled step holds the components' instances: one closed on its own
    (not through the master) raises the FmibridgeError that names its FMU, as
    the Python step does, instead of calling into the freed instance (it
    crashed the process with a segmentation fault)."""
    flow = plant_and_controller(fmu_dir, "cs")
    try:
        assert flow._compiled.direct
        x1 = flow.advance(0.0, flow.x0, 0.01, None)
        flow.components[0].flow.close()
        with pytest.raises(
            FmibridgeError, match=r"MassSpringStop\.fmu: the FMU instance was closed"
        ):
            flow.advance(0.01, x1, 0.01, None)
    finally:
        flow.close()


def test_plain_communication_steps_call_back_only_for_the_guards(fmu_dir):
    """The steps the stop's forecast says may be undone, and those after a
    return, go through `advance` in Python; every other step runs in C
    (`_cosim.MasterStepper`): the forecast flags only the steps near the two
    impacts, so most of the run's trials never call back."""
    flow = plant_and_controller(fmu_dir, "cs")
    calls, advance = [0], flow.advance

    def counted(*args):
        calls[0] += 1
        return advance(*args)

    flow.advance = counted  # type: ignore[method-assign]
    result = run_with_stop(flow, 3.0)
    trials = result.stats["n_steps"] + result.stats["n_rejected"]
    assert result.status.is_success and len(result.events) == 2
    assert 0 < calls[0] < trials / 3, (calls[0], trials)
