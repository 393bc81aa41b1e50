"""Adapter expressions run by the one stack machine, from Python and inside the
compiled loops over an FMU's C calls.

Oracles: Python's own float arithmetic on each expression (its value, the sign
of a zero, and the exception it raises), the FMU's own forcing U cos(Omega t)
for the input given as an expression, and the FMU's gap output at the events
its guard located.
"""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from test_hostile import ball_adapter

from fmibridge.core.errors import ExpressionError, FmibridgeError
from fmibridge.formats.adapters import load_adapter
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
    # Python's own hypot, and True and False as the integers 1 and 0
    "hypot(x, y)",
    "hypot(x, y, 3)",
    "-(x > y)",
    "(x < y) * 2",
    "min(x < y, 1)",
    "copysign(1, -(x > y))",
    "atan2(-(x < y), -1)",
    "((x < y) - (y < x)) * (x == y)",
    "(x < y) // (y < x)",
    "-(x < y) % 3",
    "floor(x) * -1 + ceil(y) * 0",
]
VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, 7.0, 710.0, 1e300, -1e300, 1e-300]
VALUES += [math.inf, -math.inf, math.nan]
# How Python's exceptions read in an ExpressionError
REASONS = {
    ZeroDivisionError: "division by zero",
    OverflowError: "overflow (the result exceeds the largest float)",
}


class _AsAdapters(ast.NodeTransformer):
    """Python's reading of an adapter expression: literals are floats, `**` is
    math.pow, floor and ceil return floats, abs is math.fabs."""

    def visit_Constant(self, node):
        return ast.Constant(float(node.value))

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.Call(ast.Name("pow", ast.Load()), [node.left, node.right], [])
        return node


NAMESPACE = {
    "__builtins__": {},
    **{
        name: getattr(math, name)
        for name in (
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "atan2",
            "sinh",
            "cosh",
            "tanh",
            "exp",
            "log",
            "log10",
            "sqrt",
            "hypot",
            "copysign",
            "pow",
        )
    },  # fmt: skip
    "abs": math.fabs,
    "floor": lambda x: float(math.floor(x)),
    "ceil": lambda x: float(math.ceil(x)),
    "min": min,
    "max": max,
    "pi": math.pi,
}


def python_value(source: str, values: dict) -> tuple[float | None, str | None]:
    """(value, None) or (None, the reason of Python's exception)."""
    tree = ast.fix_missing_locations(
        _AsAdapters().visit(ast.parse(source, mode="eval"))
    )
    code = compile(tree, "", "eval")
    try:
        value = float(eval(code, NAMESPACE, dict(values)))  # noqa: S307 - the oracle
    except (ArithmeticError, ValueError) as exc:
        return None, REASONS.get(type(exc), str(exc))
    if not math.isfinite(value):
        return None, f"the result is {value}"
    return value, None


@pytest.mark.parametrize("source", SOURCES)
def test_the_machine_gives_python_values_and_python_failures(source):
    expr = Expression.parse(source, {"x", "y", "e", "v"})
    rng = np.random.default_rng(3)
    for x, y in itertools.product(
        VALUES + rng.normal(scale=4, size=6).tolist(), repeat=2
    ):
        values = {"x": x, "y": y, "v": x - y, "e": 0.8}
        expected, reason = python_value(source, values)
        if reason is not None:
            with pytest.raises(ExpressionError) as failed:
                expr(values)
            assert str(failed.value).endswith(f": {reason}."), (source, x, y)
            continue
        got = expr(values)
        # equal, with the sign of a zero
        assert (got, math.copysign(1, got)) == (
            expected,
            math.copysign(1, expected),
        ), (source, x, y, got, expected)


def test_integers_beyond_exact_floats_are_refused_when_checked():
    """A product of sums of comparisons may outgrow 2**53, where Python's
    integers are exact and floats are not: refused, naming the expression."""
    term = "((x<y)+(x<y)+(x<y))"
    assert Expression.parse("*".join([term] * 33), {"x", "y"})  # 3**33 < 2**53
    with pytest.raises(FmibridgeError, match="may exceed 2\\*\\*53"):
        Expression.parse("*".join([term] * 34), {"x", "y"}, "ball.toml: [guard]")


def run(path, **options):
    with load_adapter(path, **options) as adapter:
        return adapter.run()


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
def test_adapter_guards_run_in_the_compiled_loop_and_locate_the_surface(
    tmp_path, fmu_dir, name, fmi3
):
    """A guard over a state (h) and over an output (gap = y - sin x)."""
    with load_adapter(adapter(tmp_path, fmu_dir, name, fmi3)) as loaded:
        system = loaded.system
        mode = system.mode(system.initial_mode)
        guard = mode.edges[0].guard
        assert guard.fn.engine_entry(len(system.state_names)) is not None
        result = loaded.run()
        assert len(result.events) >= 2
        for event in result.events:  # the FMU's own value of the guarded variable
            gap = mode.flow.variables(event.t, event.x_before)[guard.fn.__name__]
            assert abs(gap) < 1e-9


@pytest.mark.parametrize("fmi3", [False, True], ids=["fmi2", "fmi3"])
def test_an_input_expression_of_t_drives_the_fmu_as_its_own_forcing(
    tmp_path, fmu_dir, fmi3
):
    """u = U cos(Omega t) run by the machine at every stage: the same operations
    as the FMU's own forcing (use_input = 0), so the same run bit for bit."""
    forced = 'use_input = 1\n\n[inputs]\nu = "U * cos(Omega * t)"'
    halving = {"method": "halving", "method_options": {"h": 1e-2}, "t_end": 12.0}
    path = adapter(
        tmp_path,
        fmu_dir,
        "forced_oscillator",
        fmi3,
        "use_input = 0",
        forced,
    )
    path.write_text(path.read_text().replace("eps = 1e-7\n", ""))
    driven = run(path, **halving)
    own = adapter(tmp_path, fmu_dir, "forced_oscillator", fmi3, "eps = 1e-7\n", "")
    reference = run(own, **halving)
    np.testing.assert_array_equal(driven.t, reference.t)
    np.testing.assert_array_equal(driven.x, reference.x)
    assert len(driven.events) >= 3
    assert "fmu_calls=C functions called directly" in driven.provenance["flows"]
    assert "inputs set from Python" not in driven.provenance["flows"]


def test_a_guard_failing_mid_run_names_file_key_expression_and_time(tmp_path, fmu_dir):
    """sqrt(h - 0.5) is undefined once the ball falls below 0.5 m."""
    path = ball_adapter(tmp_path, fmu_dir, 'guard = "h"', 'guard = "sqrt(h - 0.5)"')
    with pytest.raises(ExpressionError) as e:
        run(path)
    message = str(e.value)
    assert message.startswith(f"{path}: [edges[0].guard] at t = ")
    t_failed = float(message.split("at t = ")[1].split(" s:")[0])
    below = math.sqrt(2 * 0.5 / 9.81)  # s: the ball reaches 0.5 m
    assert below < t_failed <= below + 1e-3  # the first step of h below it
    assert "'sqrt(h - 0.5)' failed with h = 0.49" in message
    assert message.endswith("math domain error.")


def test_an_input_failing_mid_run_names_file_key_expression_and_time(tmp_path, fmu_dir):
    forced = 'use_input = 1\n\n[inputs]\nu = "U * log(1.5 - t)"'
    path = adapter(
        tmp_path, fmu_dir, "forced_oscillator", False, "use_input = 0", forced
    )
    with pytest.raises(ExpressionError) as e:
        run(path, t_end=3.0)
    message = str(e.value)
    assert message.startswith(f"{path}: [inputs.u] at t = 1.5")
    assert "'U * log(1.5 - t)' failed with U = 20.0, t = 1.5" in message
    assert message.endswith("math domain error.")
