"""Adapter expressions compiled: the stack machine gives Python's values, and an
adapter-driven FMU run takes the compiled loop with the Python path's results
and its errors.

Oracles: Python's own evaluation of each checked expression (`Expression`),
the Python path of the same run (the flow's compiled loop switched off), and
the FMU's own forcing U cos(Omega t) for the input given as an expression.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from test_fmu_compiled import python_path
from test_hostile import ball_adapter

from fmibridge.core.errors import ExpressionError
from fmibridge.core.integrators import RK4
from fmibridge.flows.program_kernels import evaluate
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.compiled_expressions import program_of
from fmibridge.formats.expressions import Expression

SOURCES = [
    "-e * v",
    "x % y",
    "x // y",
    "x ** y",
    "sin(x) + cos(y) * tan(x) - exp(y)",
    "sinh(x) - cosh(y) + tanh(x) + asin(y) + acos(x) + atan(y)",
    "atan2(x, y) + copysign(x, y)",
    "log(x) + log10(y)",
    "log(x, y)",
    "sqrt(x) + abs(y) - floor(y) + ceil(x)",
    "min(x, y, -x)",
    "max(x, y, x)",
    "min(x, -0.0) + max(-0.0, x * 0)",
    "x / y",
    "x < y < 1",
    "x >= y <= 2",
    "x if x > y else y",
    "1 if x == y else (2 if x != y else 3)",
    "x and y",
    "x or y",
    "(x > 0 and y) or 3",
    "not x",
    "x * 0.0 or y",
    "-(x) ** 2 + +y",
    "2 ** -1 * x * pi",
]
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 7.0, 710.0, 1e300, -1e300, 1e-300]


def machine_value(expr: Expression, values: dict) -> float:
    """`expr` run by the compiled stack machine, with e a constant."""
    program = program_of(expr, {"e": values["e"]})
    places = {name: k for k, name in enumerate(program.names)}
    v = np.array([values[name] for name in program.names])
    code = np.ascontiguousarray(program.bound(places).ravel())
    return evaluate(code, program.consts, 0, len(program.code), v, np.empty(64))


@pytest.mark.parametrize("source", SOURCES)
def test_the_machine_gives_python_values_and_nan_where_python_fails(source):
    expr = Expression.parse(source, {"x", "y", "e", "v"})
    rng = np.random.default_rng(3)
    pairs = itertools.product(VALUES + rng.normal(scale=4, size=6).tolist(), repeat=2)
    for x, y in pairs:
        values = {"x": x, "y": y, "v": x - y, "e": 0.8}
        got = machine_value(expr, values)
        try:
            expected = expr(values)
        except ExpressionError:
            assert math.isnan(got), (source, x, y, got)
            continue
        # equal, with the sign of a zero (the Python path falls back on NaN)
        assert math.isnan(got) or (got, math.copysign(1, got)) == (
            expected,
            math.copysign(1, expected),
        ), (source, x, y, got, expected)


@pytest.mark.parametrize(
    "source",
    ["hypot(x, y)", "-(x > y)", "(x < y) * 2", "min(x < y, 1)", "(1 < 2) * x"],
)
def test_what_the_machine_might_compute_otherwise_stays_in_python(source):
    """C's hypot is not Python's; True and False are integers (0 has no sign)."""
    assert program_of(Expression.parse(source, {"x", "y"}), {}) is None


def run(path, *, compiled, **options):
    with load_adapter(path, **options) as adapter:
        if not compiled:
            for flow in adapter.system.flows():
                python_path(flow)
        return adapter.run()


def assert_identical(fast, python):
    assert fast.stats == python.stats
    np.testing.assert_array_equal(fast.t, python.t)
    np.testing.assert_array_equal(fast.x, python.x)
    np.testing.assert_array_equal(fast.event_times, python.event_times)


def takes_the_compiled_loop(path) -> bool:
    with load_adapter(path) as adapter:
        mode = adapter.system.mode(adapter.system.initial_mode)
        guards = [edge.guard for edge in mode.edges]
        flow = mode.flow
        steps = flow.steps_inside(guards, flow.t0, flow.x0, 1e-3, 0.1, RK4, 10, 0.0)
    return steps is not None and len(steps.t) > 0


def adapter(tmp_path, fmu_dir, name: str, fmi3: bool, old="", new="") -> Path:
    """adapters/NAME.toml in tmp_path, on the FMI 3 build of its FMU if `fmi3`
    (get and set of reals take nValues there), with `old` replaced by `new`."""
    text = (fmu_dir.parent.parent / "adapters" / f"{name}.toml").read_text()
    text = text.replace('"../fmus/build/', f'"{fmu_dir}/').replace(old, new)
    if fmi3:
        text = text.replace('.fmu"', '_fmi3.fmu"')
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "name, fmi3",
    [("bouncing_ball", False), ("ball_on_sine_surface", False),
     ("ball_on_sine_surface", True)],
)  # fmt: skip
def test_adapter_guards_take_the_compiled_loop_with_the_python_results(
    tmp_path, fmu_dir, name, fmi3
):
    """A guard over a state (h) and over an output (gap = y - sin x)."""
    path = adapter(tmp_path, fmu_dir, name, fmi3)
    assert takes_the_compiled_loop(path)
    fast, python = run(path, compiled=True), run(path, compiled=False)
    assert_identical(fast, python)
    assert len(fast.events) >= 2


def oscillator_adapter(tmp_path, fmu_dir, u: str, fmi3: bool = False) -> Path:
    """forced_oscillator.toml forced through its input u by an expression."""
    forced = f'use_input = 1\n\n[inputs]\nu = "{u}"'
    return adapter(
        tmp_path, fmu_dir, "forced_oscillator", fmi3, "use_input = 0", forced
    )


@pytest.mark.parametrize("fmi3", [False, True], ids=["fmi2", "fmi3"])
def test_an_input_expression_of_t_takes_the_compiled_loop(tmp_path, fmu_dir, fmi3):
    path = oscillator_adapter(tmp_path, fmu_dir, "U * cos(Omega * t)", fmi3)
    assert takes_the_compiled_loop(path)
    fast = run(path, compiled=True, t_end=6.0)
    assert_identical(fast, run(path, compiled=False, t_end=6.0))
    own = run(fmu_dir.parent.parent / "adapters" / "forced_oscillator.toml",
              compiled=True, t_end=6.0)  # fmt: skip
    assert len(fast.events) == len(own.events) >= 3  # the FMU's own forcing
    np.testing.assert_allclose(fast.event_times, own.event_times, atol=1e-9)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_guard_failing_mid_run_names_file_key_expression_and_time(
    tmp_path, fmu_dir, compiled
):
    """sqrt(h - 0.5) is undefined once the ball falls below 0.5 m."""
    path = ball_adapter(tmp_path, fmu_dir, 'guard = "h"', 'guard = "sqrt(h - 0.5)"')
    with pytest.raises(ExpressionError) as e:
        run(path, compiled=compiled)
    message = str(e.value)
    assert message.startswith(f"{path}: [edges[0].guard] at t = ")
    t_failed = float(message.split("at t = ")[1].split(" s:")[0])
    below = math.sqrt(2 * 0.5 / 9.81)  # s: the ball reaches 0.5 m
    assert below < t_failed <= below + 1e-3  # the first step of h below it
    assert "'sqrt(h - 0.5)' failed with h = 0.49" in message
    assert message.endswith("math domain error.")
    if compiled:
        with pytest.raises(ExpressionError) as python:
            run(path, compiled=False)
        assert str(python.value) == message


def test_an_input_failing_mid_run_gives_the_python_error(tmp_path, fmu_dir):
    path = oscillator_adapter(tmp_path, fmu_dir, "U * log(1.5 - t)")
    messages = []
    for compiled in (True, False):
        with pytest.raises(ExpressionError) as e:
            run(path, compiled=compiled, t_end=3.0)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{path}: [inputs.u] at t = 1.5")
    assert "'U * log(1.5 - t)' failed with U = 20.0, t = 1.5" in messages[0]
