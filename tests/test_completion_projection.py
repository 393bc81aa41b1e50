"""Completion without a force input: the constrained phase by projection (Or and
Ames' R* after every step) on DriveStop, an FMU of ours built like an exported
drive (no constraint-force input), against DriveStopForced, the same model with
one (adapters/drive_stop.toml, adapters/drive_stop_forced.toml)."""

import dataclasses
import re

import numpy as np
import pytest

from fmibridge import Completion, Halving
from fmibridge.core.errors import AdapterError, FmibridgeError
from fmibridge.core.result import Status
from fmibridge.core.system import HybridSystem
from fmibridge.formats.adapters import load_adapter
from fmibridge.methods.contact import Contact
from fmibridge.methods.projection import ProjectedContact
from fmibridge.models import bouncing_ball

PROJECTION = "adapters/drive_stop.toml"
FORCED = "adapters/drive_stop_forced.toml"


def adapter_file(fmu_dir, tmp_path, source, version="2.0", **replace):
    """The adapter `source` on the FMUs built here, with lines replaced."""
    text = open(source).read().replace('"../fmus/build/', f'"{fmu_dir}/')
    if version == "3.0":
        text = text.replace('.fmu"', '_fmi3.fmu"')
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.toml"
    path.write_text(text)
    return path


def run(path, h):
    with load_adapter(path, method_options={"h": h}) as adapter:
        assert (adapter.system.constraint is not None) and adapter.method.h == h
        return adapter.run(), adapter.system.constraint


def events(result):
    return {e.edge: e for e in result.events}


@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_a_drive_without_force_input_completes_by_projection(
    fmu_dir, tmp_path, version
):
    result, contact = run(adapter_file(fmu_dir, tmp_path, PROJECTION, version), 1e-3)
    assert isinstance(contact, ProjectedContact) and contact.mass == 1.0
    assert result.status is Status.REACHED_END and result.t[-1] == 1.5
    found = events(result)
    # 10 impacts accumulate at the stop, then the slider rests on it from the
    # predicted Zeno time until the current reverses
    assert sum(e.edge == "stop" for e in result.events) == 10
    assert found["zeno"].t == pytest.approx(0.385027915, abs=1e-8)
    assert found["lift-off"].t == pytest.approx(1.0495947, abs=3e-5)
    on = np.array(result.mode) == "constrained"
    # R* after every step: the gap and its rate are zero, through the states (the
    # gap is the FMU's output: dh by central differences, -1 to round-off)
    assert np.all(result["x"][on] == 0.02) and np.abs(result["v"][on]).max() < 1e-15
    lam = result["lam"][on]
    # pressed by the motor: lam = m a, with a = k_m i / m the free acceleration
    assert lam[:-1].min() > 0 and lam.max() == pytest.approx(5.9266, abs=2e-3)
    np.testing.assert_allclose(lam[:-1], result["i"][on][:-1], rtol=1e-9, atol=1e-12)
    assert abs(lam[-1]) < 1e-6  # the lift-off, where lam falls through zero
    # after the lift-off the current pulls the slider away from the stop
    assert result["gap"][-1] > 0.1 and result["v"][-1] < 0


def lift_off_and_end(path, h):
    result, _ = run(path, h)
    assert result.status is Status.REACHED_END
    return events(result)["lift-off"].t, result.x[-1], np.nanmax(result["lam"])


def test_projection_agrees_with_the_force_input_route_to_first_order(fmu_dir, tmp_path):
    projected, forced = (
        adapter_file(fmu_dir, tmp_path, source) for source in (PROJECTION, FORCED)
    )
    differences = []
    for h in (1e-3, 5e-4):
        (t_p, x_p, lam_p), (t_f, x_f, lam_f) = (
            lift_off_and_end(path, h) for path in (projected, forced)
        )
        differences.append((t_p - t_f, np.abs(x_p - x_f).max(), lam_f - lam_p))
    (dt1, dx1, dlam1), (dt2, dx2, dlam2) = differences
    # the force-input route is converged (its lift-off moves by < 1e-9 s between
    # the two h), the projection's steps are first order: halving h halves each
    # difference (measured at h = 1e-3: lift-off 1.22e-5 s, final state 8.0e-6,
    # largest lam 1.4e-3 N; the bands only check their size)
    assert 5e-6 < abs(dt1) < 3e-5 and 5e-6 < dx1 < 3e-5 and 5e-4 < dlam1 < 3e-3
    for first, second in ((dt1, dt2), (dx1, dx2), (dlam1, dlam2)):
        assert 1.8 < first / second < 2.2


@pytest.mark.parametrize(
    ("replace", "key", "message"),
    [
        (
            {'coordinate = "x"': "", 'mass = "m"': ""},
            "[constraint]",
            'Add `force_input = "<its input>"` if it has one under another name; '
            'otherwise add `coordinate = "<the state the gap is measured along>"` '
            "(optionally with `mass = <the effective mass",
        ),
        ({'mass = "m"': "mass = -1"}, "[constraint.mass]", "must be a positive"),
        (
            {'coordinate = "x"': 'coordinate = "i"'},
            "[constraint]",
            "no state is the derivative of the coordinate 'i'",
        ),
        (
            {'interface = "me"': 'interface = "cs"'},
            "[constraint]",
            "needs the FMU's derivatives (Model Exchange) to find its velocity",
        ),
        (
            {'coordinate = "x"': 'coordinate = "gap"'},
            "[constraint]",
            "the constraint's coordinate 'gap' is not a state (states ['x', 'v', 'i'])",
        ),
    ],
)
def test_an_adapter_without_what_completion_needs_is_told_what_to_add(
    fmu_dir, tmp_path, replace, key, message
):
    path = adapter_file(fmu_dir, tmp_path, PROJECTION, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    assert f"{key} " in str(error.value) and message in str(error.value)


def test_without_a_mass_projection_runs_the_same_with_lam_per_unit_mass(
    fmu_dir, tmp_path
):
    """With one coordinate the mass scales lam only (dh M^-1 dh^T = dh^2 / m): the
    impact law, R*, the truncation test and the lift-off do not read it. Without
    `mass` the run is the one with a mass, its lam divided by that mass (lift-off
    where lam changes sign)."""
    massless = adapter_file(fmu_dir, tmp_path, PROJECTION, **{'mass = "m"': ""})
    heavy = adapter_file(fmu_dir, tmp_path, PROJECTION, **{'mass = "m"': "mass = 2.5"})
    (result, contact), (given, _) = run(massless, 1e-3), run(heavy, 1e-3)
    assert isinstance(contact, ProjectedContact) and contact.mass == 1.0
    assert result.status is Status.REACHED_END and "lift-off" in events(result)
    assert [(e.edge, e.t) for e in result.events] == [
        (e.edge, e.t) for e in given.events
    ]
    # the impact law's M^-1 dh^T / (dh M^-1 dh^T) rounds differently with m
    np.testing.assert_allclose(result.x, given.x, rtol=1e-13, atol=1e-15)
    on = np.array(result.mode) == "constrained"
    assert on.sum() > 100
    np.testing.assert_allclose(
        2.5 * result["lam"][on], given["lam"][on], rtol=1e-14, atol=0
    )


def test_an_effective_mass_beside_a_force_input_is_refused(fmu_dir, tmp_path):
    path = adapter_file(
        fmu_dir, tmp_path, FORCED, **{'coordinate = "x"': 'coordinate = "x"\nmass = 1'}
    )
    with pytest.raises(AdapterError, match=r"\[constraint.mass\] the FMU has the"):
        load_adapter(path)


COUPLED_PROJECTION = {  # an affine gap: exact dh, no output read per evaluation
    'gap = "plant.gap"': 'gap = "plant.x_stop - plant.x"',
    'velocity = "plant.v"': (
        'velocity = "-plant.v"\ncoordinate = "plant.x"\nmass = "plant.m"'
    ),
    "h = 1e-3": 'h = 1e-3\nzeno = "complete"',
    "R = 1.4, Omega = 2.5": "R = 0.5, r0 = 1.0, Omega = 1.0",
    "e = 0.6 }": "e = 0.5 }",
}
SINGLE_PROJECTION = {
    'velocity = "v"': 'velocity = "-v"\ncoordinate = "x"\nmass = "m"',
    "h = 1e-3": 'h = 1e-3\nzeno = "complete"',
    "R = 1.4": "R = 0.5\nr0 = 1.0",
    "Omega = 2.5": "Omega = 1.0",
    "e = 0.6": "e = 0.5",
}


def test_a_body_whose_force_input_a_connection_drives_completes_by_projection(
    fmu_dir, tmp_path
):
    """The plant's force input F is the controller's output (adapters/
    controlled_stop.toml): no free force input. A reference r = 1 + 0.5 sin(t)
    beyond the stop at 1 presses the mass on it twice in 10 s."""
    coupled = adapter_file(
        fmu_dir, tmp_path, "adapters/controlled_stop.toml", **COUPLED_PROJECTION
    )
    single = adapter_file(
        fmu_dir, tmp_path, "adapters/controlled_stop_single.toml", **SINGLE_PROJECTION
    )
    (result, contact), (alone, _) = run(coupled, 1e-3), run(single, 1e-3)
    assert isinstance(contact, ProjectedContact) and result.status is Status.REACHED_END
    switches = [(e.edge, round(e.t, 6)) for e in result.events if e.edge != "stop"]
    assert switches == [
        ("zeno", 1.271672),
        ("lift-off", 3.002331),
        ("rearm", 4.921286),
        ("zeno", 6.857264),
        ("lift-off", 9.495539),
    ]
    on = np.array(result.mode) == "constrained"
    assert np.all(result["plant.x"][on] == 1.0)
    assert np.nanmax(result["lam"]) == pytest.approx(9.7594, abs=1e-3)
    # the two FMUs coupled and the one FMU of both: the same run, to round-off
    assert [e.edge for e in result.events] == [e.edge for e in alone.events]
    np.testing.assert_allclose(
        [e.t for e in result.events], [e.t for e in alone.events], rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(result.x[-1], alone.x[-1], rtol=0, atol=1e-9)


def test_a_connected_force_input_is_refused_naming_the_projection_keys(
    fmu_dir, tmp_path
):
    path = adapter_file(
        fmu_dir,
        tmp_path,
        "adapters/controlled_stop.toml",
        **{'velocity = "plant.v"': 'velocity = "-plant.v"\nforces = ["plant.F"]'},
    )
    with pytest.raises(AdapterError, match="driven by a connection.*`coordinate`"):
        load_adapter(path)


def test_the_projection_contact_steps_the_free_flow_and_projects():
    """On the native ball (h'' = -g): the constrained vector field is the free
    one, lam = mass g (eq. 6 with dh M^-1 dh^T = 1 / mass), and a completed run
    rests at h = v = 0 exactly with that force."""
    ball = bouncing_ball()
    flow = ball.mode(ball.initial_mode).flow
    contact = ProjectedContact(
        "h",
        "v",
        0.8,
        gap_fn=lambda t, x: x[0],
        gradient_fn=lambda t, x: np.ones(1),
        rhs_with_force=lambda t, x, lam: flow.rhs(t, x) + np.array([0.0, lam / 2.0]),
        q_index=(0,),
        v_index=(1,),
        mass=2.0,
    )
    x = np.array([0.0, 0.0])
    rates, lam = contact.compiled(2).constrained(0.0, x)
    assert rates.tolist() == [0.0, -9.81] and lam == pytest.approx(2 * 9.81, rel=1e-15)
    assert contact.impact(0.0, np.array([0.0, -1.0])).tolist() == [0.0, 0.8]
    system = HybridSystem(
        list(ball.modes.values()), ball.initial_mode, ball.x0, constraint=contact
    )
    result = Completion(Halving(h=1e-2)).run(system, 10.0)
    assert result.status is Status.REACHED_END and result.mode[-1] == "constrained"
    assert result["h"][-1] == 0.0 and result["v"][-1] == 0.0
    assert result["lam"][-1] == pytest.approx(2 * 9.81, rel=1e-12)
    with pytest.raises(FmibridgeError, match="effective `mass` must be a positive"):
        dataclasses.replace(contact, mass=0.0)


def test_a_coupled_gap_expression_infers_its_coordinate(fmu_dir, tmp_path):
    """Without `coordinate` the gap `plant.x_stop - plant.x` moves plant.x alone
    (its gradient in the states at the start): the same run as with it,
    bit for bit."""
    declared = adapter_file(
        fmu_dir, tmp_path, "adapters/controlled_stop.toml", **COUPLED_PROJECTION
    )
    inferred = adapter_file(
        fmu_dir,
        tmp_path,
        "adapters/controlled_stop.toml",
        **{
            **COUPLED_PROJECTION,
            'velocity = "plant.v"': 'velocity = "-plant.v"\nmass = "plant.m"',
        },
    )
    (result, contact), (given, _) = run(inferred, 1e-3), run(declared, 1e-3)
    assert isinstance(contact, ProjectedContact) and result.status is Status.REACHED_END
    assert result.state_names[contact.q_index[0]] == "plant.x"
    zeno = [e.t for e in result.events if e.edge == "zeno"]
    np.testing.assert_allclose(zeno, [1.271672, 6.857264], atol=1e-6)
    assert [e.t for e in result.events] == [e.t for e in given.events]
    np.testing.assert_array_equal(result.x[-1], given.x[-1])


SEVERAL = (  # what a gap that moves several states is told
    "at the start, and completion by projection moves one coordinate (it refuses "
    "a gap that also moves with another state; only the force-input route, the "
    "input named above, acts on several coordinates), so write the gap over one "
    'of them and name it: add `coordinate = "<the state the gap is measured along>"`'
)


@pytest.mark.parametrize(
    ("source", "replace", "message"),
    [
        (  # two FMUs: the plant's x and the controller's integral z
            "adapters/controlled_stop.toml",
            {
                **COUPLED_PROJECTION,
                'velocity = "plant.v"': 'velocity = "-plant.v"\nmass = "plant.m"',
                'gap = "plant.gap"': (
                    'gap = "plant.x_stop - plant.x + 0.001 * controller.z"'
                ),
            },
            'Add `forces = ["<body>.<its input>", ...]` if the bodies have them; '
            "otherwise the gap 'plant.x_stop - plant.x + 0.001 * controller.z' moves "
            f"with the states ['plant.x', 'controller.z'] {SEVERAL}",
        ),
        (  # one FMU: the slider's x and the motor current i
            PROJECTION,
            {
                'gap = "gap"': 'gap = "x_stop - x + 0.001 * i"',
                'velocity = "gap_velocity"': 'velocity = "-v"',
                'coordinate = "x"': "",
            },
            'Add `force_input = "<its input>"` if it has one under another name; '
            "otherwise the gap 'x_stop - x + 0.001 * i' moves with the states "
            f"['x', 'i'] {SEVERAL}",
        ),
    ],
    ids=["coupled", "single"],
)
def test_a_gap_that_moves_several_states_is_told_what_works(
    fmu_dir, tmp_path, source, replace, message
):
    """Without `coordinate` a gap that moves several states is told that
    projection moves one and refuses the others (so naming one of them, as the
    advice once said, only met the refusal of a riding state), and which route
    acts on several coordinates (the refusal of a riding state:
    `test_a_gap_that_moves_with_a_riding_state_is_refused`)."""
    path = adapter_file(fmu_dir, tmp_path, source, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    assert "[constraint.gap] " in str(error.value) and message in str(error.value)
    assert "must name a variable of the system" not in str(error.value)


@pytest.mark.parametrize(
    ("source", "replace", "message"),
    [
        (  # one FMU: the motor current i rides along (L i' = V - R i - k_m v)
            PROJECTION,
            {
                'gap = "gap"': 'gap = "x_stop - x + 0.001 * i"',
                'velocity = "gap_velocity"': 'velocity = "-v"',
            },
            "[constraint] The gap 'x_stop - x + 0.001 * i' moves with ['i'] "
            "(dh/di = 0.001 at t = 0.0), which are not coordinates q of the "
            "contact (q: ['x'])",
        ),
        (  # two FMUs: the controller's integral z rides along (z' = r - x)
            "adapters/controlled_stop.toml",
            {
                **COUPLED_PROJECTION,
                'gap = "plant.gap"': (
                    'gap = "plant.x_stop - plant.x + 0.001 * controller.z"'
                ),
            },
            "[constraint] The gap 'plant.x_stop - plant.x + 0.001 * controller.z' "
            "moves with ['controller.z'] (dh/dcontroller.z = 0.001 at t = 0.0), "
            "which are not coordinates q of the contact (q: ['plant.x'])",
        ),
        (  # the force-input route along the coordinate x: i rides along too
            FORCED,
            {
                'gap = "gap"': 'gap = "x_stop - x + 0.001 * i"',
                'velocity = "gap_velocity"': 'velocity = "-v"',
            },
            "[constraint] The gap 'x_stop - x + 0.001 * i' moves with ['i'] "
            "(dh/di = 0.001 at t = 0.0), which are not coordinates q of the "
            "contact (q: ['x'])",
        ),
    ],
    ids=["single", "coupled", "force-input"],
)
def test_a_gap_that_moves_with_a_riding_state_is_refused(
    fmu_dir, tmp_path, source, replace, message
):
    """Projection holds h = 0 through the coordinate alone and takes the gap's
    rate as dh qdot over it, so a gap that also moves with a riding state
    would complete wrongly without an error: it is refused, naming the state."""
    path = adapter_file(fmu_dir, tmp_path, source, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ") and message in text
    assert "Write the gap over the coordinates alone" in text


def test_a_single_fmu_gap_expression_infers_its_coordinate(fmu_dir, tmp_path):
    """drive_stop.toml with the gap as an expression and no `coordinate`: the
    state x it moves is the coordinate, and the run is the declared one's."""
    path = adapter_file(
        fmu_dir,
        tmp_path,
        PROJECTION,
        **{
            'gap = "gap"': 'gap = "x_stop - x"',
            'velocity = "gap_velocity"': 'velocity = "-v"',
            'coordinate = "x"': "",
        },
    )
    result, contact = run(path, 1e-3)
    assert isinstance(contact, ProjectedContact) and result.status is Status.REACHED_END
    assert result.state_names[contact.q_index[0]] == "x"
    assert events(result)["zeno"].t == pytest.approx(0.385027915, abs=1e-8)
    assert events(result)["lift-off"].t == pytest.approx(1.0495947, abs=3e-5)


@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_a_gap_expression_with_a_coordinate_completes_as_the_gap_variable(
    fmu_dir, tmp_path, version
):
    """drive_stop_forced.toml (force input lam, states x, v and the riding
    current i) with the gap as an expression over its `coordinate` x: the same
    contact recipe as the FMU's gap output, so the same run, bit for bit (the
    expression's dh = -1 is exact, the output's is read off gap_velocity at
    v = 1), and the impacts accumulate at the projection route's Zeno time."""
    expression = {
        'gap = "gap"': 'gap = "x_stop - x"',
        'velocity = "gap_velocity"': 'velocity = "-v"',
    }
    (result, contact), (variable, _) = (
        run(adapter_file(fmu_dir, tmp_path, FORCED, version, **replace), 1e-3)
        for replace in (expression, {})
    )
    assert type(contact) is Contact and contact.gap == "x_stop - x"
    assert [result.state_names[i] for i in (*contact.q_index, *contact.v_index)] == [
        "x",
        "v",
    ]
    assert result.status is Status.REACHED_END
    assert sum(e.edge == "stop" for e in result.events) == 10
    assert events(result)["zeno"].t == pytest.approx(0.385027915, abs=1e-8)
    assert [(e.edge, e.t) for e in result.events] == [
        (e.edge, e.t) for e in variable.events
    ]
    np.testing.assert_array_equal(result.x, variable.x)
    np.testing.assert_array_equal(result["lam"], variable["lam"])


# -- a gap that moves with time (a moving wall) --

WALL = (  # what a gap that moves with time is told to do
    "Write the gap over the coordinates and parameters alone; a wall that moves "
    "can be a body of the model"
)


@pytest.mark.parametrize(
    ("source", "replace", "gap"),
    [
        (  # a wall moving at 1 cm/s, on the projection route
            PROJECTION,
            {'gap = "gap"': 'gap = "x_stop + 0.01 * t - x"'},
            "x_stop + 0.01 * t - x",
        ),
        (  # a wall that jumps at t = 1: dh/dt = 0 at the start, so read as written
            PROJECTION,
            {'gap = "gap"': 'gap = "x_stop - x - (0.005 if t > 1 else 0)"'},
            "x_stop - x - (0.005 if t > 1 else 0)",
        ),
        (  # two FMUs: a wall that oscillates
            "adapters/controlled_stop.toml",
            {
                **COUPLED_PROJECTION,
                'gap = "plant.gap"': 'gap = "plant.x_stop - plant.x + 0.01 * sin(t)"',
            },
            "plant.x_stop - plant.x + 0.01 * sin(t)",
        ),
    ],
    ids=["ramp", "jump", "coupled"],
)
def test_a_gap_expression_that_reads_t_is_refused(
    fmu_dir, tmp_path, source, replace, gap
):
    """The contact law takes the gap as h(q) (Or and Ames, Def. 2): a gap that
    reads t would complete without its own motion dh/dt, so it is refused as
    the file is read, naming the file, the key and the gap."""
    path = adapter_file(fmu_dir, tmp_path, source, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ")
    assert f"[constraint.gap] The gap {gap!r} reads the time t" in text
    assert WALL in text


@pytest.mark.parametrize(
    ("source", "replace", "velocity"),
    [
        (  # the force-input route: -1 at v = 1 and t = 0, where the check looks
            FORCED,
            {'velocity = "gap_velocity"': 'velocity = "-v + 0.01 * t"'},
            "-v + 0.01 * t",
        ),
        (  # the projection route
            PROJECTION,
            {'velocity = "gap_velocity"': 'velocity = "-v * (1 + 0.1 * sin(t))"'},
            "-v * (1 + 0.1 * sin(t))",
        ),
        (  # two FMUs, each with its force input: dh is read off the velocity
            "adapters/ball_on_spring_table.toml",
            {'velocity = "ball.v - table.v"': 'velocity = "ball.v - table.v + t"'},
            "ball.v - table.v + t",
        ),
        (  # two FMUs on the projection route
            "adapters/controlled_stop.toml",
            {
                **COUPLED_PROJECTION,
                'velocity = "plant.v"': (
                    'velocity = "-plant.v + 0.01 * t"\ncoordinate = "plant.x"'
                ),
            },
            "-plant.v + 0.01 * t",
        ),
    ],
    ids=["force-input", "projection", "coupled", "coupled-projection"],
)
def test_a_velocity_expression_that_reads_t_is_refused(
    fmu_dir, tmp_path, source, replace, velocity
):
    """The velocity is the rate dh(q) qdot of a gap that stands still in time,
    so no term in t: refused as the file is read, naming the file, the key and
    the velocity (the check at the start compares it with the gap's slope at
    unit velocities there, where these terms vanish or are small)."""
    path = adapter_file(fmu_dir, tmp_path, source, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ")
    assert (
        f"[constraint.velocity] The velocity {velocity!r} reads the time t, but it "
        f"is the gap's rate dh(q) qdot" in text
    )
    assert "Write the velocity without t, as dh(q) qdot over the states" in text


def test_the_time_is_no_velocity_of_a_coupled_constraint(fmu_dir, tmp_path):
    """A coupled [constraint] on named variables takes no expression, and the
    time t is no variable of the system."""
    path = adapter_file(
        fmu_dir,
        tmp_path,
        "adapters/controlled_stop.toml",
        **{'velocity = "plant.v"': 'velocity = "t"'},
    )
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    found = re.search(
        r"\[constraint.velocity\] must name a variable of the system \((\[.*?\])\), "
        r"got 't'.",
        str(error.value),
    )
    assert found and "'t'" not in found[1] and "'plant.v'" in found[1]


@pytest.mark.parametrize(
    ("source", "replace", "gap", "slope"),
    [
        (  # DriveStop's output V = V0 sin(2 pi f t): V0 = 6 V, f = 0.5 Hz
            PROJECTION,
            {'gap = "gap"': 'gap = "x_stop - x + 0.001 * V"'},
            "x_stop - x + 0.001 * V",
            0.001 * 6.0 * 2.0 * np.pi * 0.5,
        ),
        (  # the FMU's own variable V stands for a gap output that moves with time
            FORCED,
            {'gap = "gap"': 'gap = "V"'},
            "V",
            6.0 * 2.0 * np.pi * 0.5,
        ),
        (  # the controller's reference r = r0 + R sin(Omega t): R = 0.5, Omega = 1
            "adapters/controlled_stop.toml",
            {
                **COUPLED_PROJECTION,
                'gap = "plant.gap"': (
                    'gap = "plant.x_stop - plant.x + 0.001 * controller.r"'
                ),
            },
            "plant.x_stop - plant.x + 0.001 * controller.r",
            0.001 * 0.5 * 1.0,
        ),
    ],
    ids=["output", "variable", "coupled"],
)
def test_a_gap_that_moves_with_time_through_the_model_is_refused(
    fmu_dir, tmp_path, source, replace, gap, slope
):
    """A gap that reads an output depending on time does not name t: the start
    check differentiates h in t at the start's states and finds dh/dt."""
    path = adapter_file(fmu_dir, tmp_path, source, **replace)
    with pytest.raises(AdapterError) as error:
        load_adapter(path)
    text = str(error.value)
    found = re.search(
        rf"\[constraint\] The gap {re.escape(repr(gap))} moves with time at fixed "
        rf"states \(dh/dt = (\S+) at t = 0.0;",
        text,
    )
    assert text.startswith(f"{path}: ") and found and WALL in text
    assert float(found[1]) == pytest.approx(slope, rel=1e-5)


def test_a_gap_whose_input_varies_in_time_is_accepted(fmu_dir, tmp_path):
    """ForcedOscillatorWithStop forced through its input u = U sin(Omega t): the
    dynamics move with t, its gap x_max - x does not, and it is a contact."""
    path = adapter_file(
        fmu_dir,
        tmp_path,
        "adapters/forced_oscillator.toml",
        **{"use_input = 0": 'use_input = 1\n\n[inputs]\nu = "U * sin(Omega * t)"'},
    )
    with load_adapter(path) as adapter:
        contact, x0 = adapter.system.constraint, adapter.system.x0
        flow = adapter.system.mode(adapter.system.initial_mode).flow
        assert isinstance(contact, Contact)
        assert contact.h(0.0, x0) == contact.h(1.0, x0) == 14.0 - 11.36263
        forcing = flow.rhs(1.0, x0)[1] - flow.rhs(0.0, x0)[1]
        assert forcing == pytest.approx(20.0 * np.sin(2.5), rel=1e-12)
