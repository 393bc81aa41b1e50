"""Gap expressions in single-FMU adapters: [constraint] gap = "x_max - x".

A gap given as an expression (issue 28), not only a variable of the FMU, runs
Completion (`--zeno complete`) to the same result as the same model with the
gap as a variable of the FMU. Its gradient is exact where the expression is
affine in the states (read off the syntax tree) and central differences
elsewhere. Oracles: the run with the FMU's own gap output, and Example 2 of
Burden et al.'s Table I (exact Zeno times).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from spring_table_exact import BallOnTable

from fmibridge import Completion, Halving
from fmibridge.cli import main
from fmibridge.core.errors import AdapterError
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.expressions import Expression
from fmibridge.formats.gap_expressions import affine_coefficients
from fmibridge.models import EXAMPLE_2
from fmibridge.validation import exact_solution

STOP = """
fmu = "{fmu}"
interface = "{interface}"
t_end = {t_end!r}

[parameters]  # Example 2 of Burden et al., Table I
a = 0.95
omega = 1.0
c = 0.5
x_max = -0.8
U = 1.0
Omega = 1.0

[start]
x = -0.8
v = 0.0

[[edges]]
name = "stop"
guard = "{gap}"
direction = "falling"
reset = {{ v = "-c * v" }}

[constraint]
gap = "{gap}"
velocity = "{velocity}"
restitution = "c"

[method]
name = "halving"
h = 1e-2
"""


def write(tmp_path, name, template, **fields):
    path = tmp_path / f"{name}.toml"
    path.write_text(template.format(**fields))
    return path


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_a_gap_expression_completes_as_the_gap_variable(fmu_dir, tmp_path, interface):
    """ForcedOscillatorWithStop has the output gap = x_max - x (velocity -v):
    the expression gives the same samples and events, bit for bit (its dh = -1
    is read off the expression, the output's off gap_velocity at v = 1)."""
    fmu = fmu_dir / "ForcedOscillatorWithStop.fmu"
    common = {"fmu": fmu, "interface": interface, "t_end": EXAMPLE_2.t_max}
    runs = {}
    for name, gap, velocity in (
        ("variable", "gap", "gap_velocity"),
        ("expression", "x_max - x", "-v"),
    ):
        adapter = write(tmp_path, name, STOP, gap=gap, velocity=velocity, **common)
        out = tmp_path / f"{name}.csv"
        argv = ["run", str(adapter), "--zeno", "complete", "--out", str(out)]
        assert main([*argv, "--no-progress"]) == 0
        runs[name] = (
            pd.read_csv(out, index_col="time"),
            pd.read_csv(tmp_path / f"{name}.events.csv"),
        )
    (samples, events), (samples_x, events_x) = runs["variable"], runs["expression"]
    pd.testing.assert_frame_equal(samples, samples_x, check_exact=True)
    pd.testing.assert_frame_equal(events, events_x, check_exact=True)
    zeno = events["time"][events["edge"] == "zeno"].to_numpy()
    exact = exact_solution(EXAMPLE_2).zeno_times
    np.testing.assert_allclose(zeno, exact, rtol=0, atol=1e-3)


BALL = """
fmu = "{fmu}"
interface = "me"

[[edges]]
name = "floor"
guard = "{gap}"
direction = "falling"
reset = {{ v = "-e * v" }}

[constraint]
gap = "{gap}"
velocity = "{velocity}"
restitution = "e"

[method]
name = "halving"
h = 1e-3
"""


def test_a_curved_gap_expression_takes_central_differences(fmu_dir, tmp_path):
    """sin(h) >= 0 is the floor h >= 0 near it, with dh = cos(h) by central
    differences and H = -sin(h) by second differences: Completion of the
    BouncingBall FMU truncates where it does with the gap h, to 1e-12 s."""
    fmu = fmu_dir / "BouncingBall.fmu"
    results, x = [], np.array([0.3, -2.0])
    for gap, velocity in (("h", "v"), ("sin(h)", "cos(h) * v")):
        adapter = write(tmp_path, "ball", BALL, fmu=fmu, gap=gap, velocity=velocity)
        with load_adapter(adapter, t_end=10.0, zeno="complete") as loaded:
            results.append(loaded.run())
            contact = loaded.system.constraint
    gradient, hessian = contact.dh(0.0, x), contact.hessian_fn(0.0, x)  # sin(h)'s
    assert gradient == pytest.approx([np.cos(0.3)], abs=1e-10)
    assert hessian.shape == (1, 1) and hessian[0, 0] == pytest.approx(
        -np.sin(0.3), abs=1e-7
    )
    plain, curved = results
    assert [e.edge for e in curved.events] == [e.edge for e in plain.events]
    np.testing.assert_allclose(
        curved.event_times, plain.event_times, rtol=0, atol=1e-12
    )
    assert list(curved.x[-1]) == [0.0, 0.0] and curved["lam"][-1] == pytest.approx(9.81)


def test_affine_gaps_have_exact_gradients_and_others_none():
    known = {"x", "y", "v", "k", "t"}
    cases = {
        "1.5 - x": {"x": -1.0},
        "-(2 * x - y / 4) + k": {"x": -2.0, "y": 0.25},
        "k * (x + 1) - 3": {"x": 2.0},
        "x * y": None,
        "sin(x)": None,
        "x / k - t": None,  # t is no constant
        "x ** 2": None,
    }
    for source, expected in cases.items():
        expr = Expression.parse(source, known)
        assert affine_coefficients(expr, {"x", "y"}, {"k": 2.0}) == expected, source


@pytest.mark.parametrize(
    ("fmu", "gap", "velocity", "message"),
    [
        ("BouncingBall", "sin(h)", "v", "[constraint] The velocity 'v' is not the"),
        ("BouncingBall", "h - v", "v", "reads the velocities ['v']; it must be"),
        ("BouncingBall", "h - hh", "v", "[constraint.gap] unknown name(s) ['hh']"),
        (  # a floor that rises at 1 cm/s: its motion dh/dt the contact law misses
            "BouncingBall",
            "h - 0.01 * t",
            "v",
            "[constraint.gap] The gap 'h - 0.01 * t' reads the time t (a wall that "
            "moves); the contact law (Or and Ames, Def. 2, eqs. 4-8) takes the gap "
            "as h(q)",
        ),
        (  # the FMU's own variables (`fmu_contact`), checked at its start too
            "BouncingBall",
            "v",
            "v",
            "[constraint] The gap 'v' moves with ['v'] (dh/dv = 1 at t = 0.0), "
            "which are not coordinates q of the contact (q: ['h'])",
        ),
    ],
)
def test_a_gap_expression_that_cannot_work_is_refused_naming_it(
    fmu_dir, tmp_path, fmu, gap, velocity, message
):
    adapter = write(
        tmp_path, "bad", BALL, fmu=fmu_dir / f"{fmu}.fmu", gap=gap, velocity=velocity
    )
    with pytest.raises(AdapterError) as error:
        load_adapter(adapter)
    text = str(error.value)
    assert text.startswith(f"{adapter}: ") and message in text


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_the_fmus_own_velocity_is_checked_against_its_gap(fmu_dir, tmp_path, interface):
    """gap = "gap" (x_max - x) with velocity = "v", not its rate -v: the FMU's
    variables and force input (`fmu_contact`) are checked at its start."""
    fmu = fmu_dir / "ForcedOscillatorWithStop.fmu"
    common = {"fmu": fmu, "interface": interface, "t_end": 1.0}
    adapter = write(tmp_path, "sign", STOP, gap="gap", velocity="v", **common)
    with pytest.raises(AdapterError) as error:
        load_adapter(adapter)
    found = re.search(
        r"\[constraint\] The velocity 'v' is not the rate of the gap 'gap' \(dh "
        r"qdot\): at unit velocities it gives \[1.0\], the gap's slope over "
        r"\['x'\] is \[(\S+)\]",
        str(error.value),
    )
    assert found and float(found[1]) == pytest.approx(-1.0, abs=1e-9)


TABLE = """
fmu = "{fmu}"
interface = "me"

[[edges]]
name = "impact"
guard = "{gap}"
reset = "impact"

[constraint]
gap = "{gap}"
velocity = "{velocity}"
restitution = "e"
"""


def test_a_gap_that_moves_with_two_coordinates_runs(fmu_dir, tmp_path):
    """BallOnSpringTable (states h, x, v, w; lam along dh^T = (1, -1)): the gap
    h - x moves with the table's x as well as the ball's h, both coordinates q
    the contact force acts on, so it passes the check for states outside q. It
    completes as the FMU's gap output does (1e-12 s), the first series
    accumulates at its exact Zeno time (1e-9 s) and the ball lifts off where
    the exact sliding motion from there says (within eps)."""
    fmu, exact, eps = fmu_dir / "BallOnSpringTable.fmu", BallOnTable(), 1e-6
    runs = {}
    for name, gap, velocity in (
        ("variable", "gap", "gap_velocity"),
        ("expression", "h - x", "v - w"),
    ):
        adapter = write(tmp_path, name, TABLE, fmu=fmu, gap=gap, velocity=velocity)
        with load_adapter(adapter) as loaded:
            method = Completion(Halving(h=1e-3, t_tol=1e-12), eps=eps)
            runs[name] = method.run(loaded.system, 1.0), loaded.system.constraint
    (result, contact), (variable, _) = runs["expression"], runs["variable"]
    assert [result.state_names[i] for i in contact.q_index] == ["h", "x"]
    assert [e.edge for e in result.events] == [e.edge for e in variable.events]
    np.testing.assert_allclose(
        result.event_times, variable.event_times, rtol=0, atol=1e-12
    )
    _, t_zeno, (x, u) = exact.bounces(0.0, np.array([0.0, 0.0, -0.12, 0.0]))
    zeno = next(e for e in result.events if e.edge == "zeno")
    lift = next(e for e in result.events if e.edge == "lift-off")
    assert abs(zeno.t - t_zeno) <= 1e-9
    assert abs(lift.t - t_zeno - exact.lift_off(x, u)) <= eps
