"""The tables every adapter file shares, one-FMU or coupled (`adapters`).

[modes], [[edges]], [constraint], [method] and [output] read the same way
whatever the flow; `Problems` collects a file's problems for one AdapterError,
and `Adapter` is the result (system, method, end time, output columns).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..core.errors import AdapterError, ExpressionError, FmibridgeError
from ..core.guards import DIRECTIONS, Edge, Guard
from ..core.numbers import is_number
from ..core.result import Result
from ..core.system import HybridSystem
from ..flows.base import Flow
from ..flows.mode_inputs import mode_inputs
from ..methods import Method, method_named
from ..methods.completion import CONSTRAINED, Completion
from ..methods.contact import Contact
from .expressions import Expression

EDGE_KEYS = {"name", "mode", "target", "guard", "direction", "reset", "approach"}
# the top-level keys of every adapter file, one-FMU or coupled
SHARED_KEYS = {"name", "description", "t_end", "interface", "parameters", "edges"}
SHARED_KEYS |= {"constraint", "method", "output"}
CONSTRAINT_KEYS = {"gap", "velocity", "restitution"}
DEFAULT_MODE = "model"
# what a message about a missing FMU asks to do
BUILD_HINT = (
    "build the FMUs with `python fmus/build.py` (in a clone) or "
    "`fmibridge examples DIR`."
)
# The [constraint] keys of the projection route (an FMU without a force input),
# and what a message asks to add for it (`mass` scales lam only).
PROJECTION_KEYS = {"coordinate", "mass"}
PROJECTION_HINT = (
    'add `coordinate = "<the state the gap is measured along>"` (optionally with '
    "`mass = <the effective mass along it: a number or a parameter name>` for lam "
    "in units of force) for completion by projection (Or and Ames' R* after every "
    "step; first order in h)."
)


@dataclass(frozen=True)
class Adapter:
    """A model ready to run: its system, method, end time and output columns."""

    path: Path
    system: HybridSystem
    method: Method
    t_end: float
    outputs: tuple[str, ...]

    def run(self, *, progress: bool = False, t_eval: ArrayLike | None = None) -> Result:
        """Run the method (`progress`, `t_eval` as `Method.run`) and fill in the
        output columns the flows did not record: those of no flow, and an FMU's
        outputs in completion's constrained samples."""
        result = self.method.run(
            self.system, self.t_end, progress=progress, t_eval=t_eval
        )
        n, states = len(result.t), set(self.system.state_names)
        constrained = np.asarray(result.mode) == CONSTRAINED
        columns = {}  # name -> (values, which samples to fill)
        for name in self.outputs:
            if name in states or name == "lam":
                continue
            if name not in result.outputs:
                columns[name] = (np.empty(n), np.ones(n, dtype=bool))
            elif (missing := constrained & np.isnan(result.outputs[name])).any():
                columns[name] = (np.array(result.outputs[name], dtype=float), missing)
        if not columns:
            return result
        flow = self.system.mode(self.system.initial_mode).flow
        fill = np.logical_or.reduce([missing for _, missing in columns.values()])
        for k in np.flatnonzero(fill):
            values = flow.variables(result.t[k], result.x[k])
            for name, (column, missing) in columns.items():
                if missing[k]:
                    column[k] = values[name]
        outputs = {name: column for name, (column, _) in columns.items()}
        return dataclasses.replace(result, outputs={**result.outputs, **outputs})

    def close(self) -> None:
        """Free the FMU instances."""
        self.system.close()

    def __enter__(self) -> Adapter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class Problems:
    """Collects every problem in one file, to report them together."""

    def __init__(self, path: Path) -> None:
        self.path, self.items = path, list[str]()

    def add(self, key: str, message: str) -> None:
        """Record a problem under the file's `key`."""
        self.items.append(f"[{key}] {message}")

    def unknown_keys(self, table: Mapping, allowed: Set[str], where: str = "") -> None:
        """Record each key of `table` that is not `allowed`, under `where`."""
        for key in sorted(set(table) - set(allowed)):
            self.add(
                f"{where}{key}", f"unknown key; allowed keys are {sorted(allowed)}."
            )

    def check(self, key: str, fn: Callable, *args, **kwargs):
        """Return ``fn(*args, **kwargs)``; None after recording its FmibridgeError."""
        try:
            return fn(*args, **kwargs)
        except FmibridgeError as exc:
            self.add(key, str(exc))
            return None

    def numbers(self, table: object, key: str) -> dict[str, float]:
        """Return a table of name = number as floats; record what is not one."""
        if not isinstance(table, Mapping):
            self.add(key, f"must be a table of name = number, got {table!r}.")
            return {}
        for name, value in table.items():
            if not is_number(value):
                self.add(f"{key}.{name}", f"must be a number, got {value!r}.")
        return {name: float(v) for name, v in table.items() if is_number(v)}

    def raise_if_any(self) -> None:
        """Raise one AdapterError listing every problem, if there is one."""
        if self.items:
            lines = "\n  ".join(self.items)
            raise AdapterError(f"{self.path}: {len(self.items)} problem(s):\n  {lines}")


def flatten(table: Mapping, prefix: str = "") -> dict:
    """Turn TOML's nested keys ({'parameters': {'e': ...}}) into 'parameters.e'."""
    flat = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def mode_flows(spec: Mapping, flow, problems: Problems) -> dict[str, Flow]:
    """Each mode's flow: `flow`, wrapped with its mode and held inputs if any."""
    held = problems.numbers(spec.get("held", {}), "held")
    table = spec.get("modes", {})
    if not isinstance(table, Mapping) or not all(
        isinstance(v, Mapping) for v in table.values()
    ):
        problems.add(
            "modes", "must be tables [modes.NAME] with `inputs = {name = value}`."
        )
        return {}
    edges = spec.get("edges", [])  # a mode: a [modes.NAME] table or an edge's `mode`
    edges = (
        [e for e in edges if isinstance(e, Mapping)] if isinstance(edges, list) else []
    )
    modes = sorted(set(table) | {str(e.get("mode", DEFAULT_MODE)) for e in edges})
    modes = modes or [DEFAULT_MODE]
    if not held and not table:
        return dict.fromkeys(modes, flow)
    flows = {}
    for mode in modes:
        spec_mode = table.get(mode, {})
        problems.unknown_keys(spec_mode, {"inputs"}, f"modes.{mode}.")
        fixed = problems.numbers(spec_mode.get("inputs", {}), f"modes.{mode}.inputs")
        flows[mode] = problems.check(
            f"modes.{mode}", mode_inputs, flow, fixed, held, mode
        )
    return flows


def read_edges(
    table, flows, parameters, variables, constraint, problems: Problems
) -> list[tuple[str, Edge]]:
    """Return the [[edges]] as (source mode, Edge): guards and resets over the
    `variables` and `parameters`; a reset "impact" is the `constraint`'s law,
    applied only where the edge's `approach` (else the gap's rate
    `Contact.rate`) is < 0 (Or and Ames eq. 4)."""
    if not isinstance(table, list):
        problems.add("edges", "must be an array of tables ([[edges]]).")
        return []
    edges = []
    named: dict[tuple[str, str], str] = {}  # (mode, name) -> where
    for k, item in enumerate(table):
        where = f"edges[{k}]"
        if not isinstance(item, Mapping):
            problems.add(where, "must be a table.")
            continue
        problems.unknown_keys(item, EDGE_KEYS, f"{where}.")
        direction = item.get("direction", "falling")
        if direction not in DIRECTIONS:
            problems.add(
                f"{where}.direction",
                f"must be one of {list(DIRECTIONS)}, got {direction!r}.",
            )
            continue
        if "guard" not in item:
            problems.add(
                f"{where}.guard", "missing: an expression, > 0 inside the domain."
            )
            continue
        mode = str(item.get("mode", DEFAULT_MODE))
        target = str(item.get("target", mode))
        if target not in flows:
            problems.add(
                f"{where}.target",
                f"unknown mode {target!r}; the declared modes are {sorted(flows)} "
                f"(declare a mode with [modes.NAME] or as the `mode` of an edge).",
            )
            continue
        states = flows[mode].state_names
        function = partial(_function, flows[mode], parameters, variables, problems)
        guard = function(f"{where}.guard", item["guard"], varying=True)
        reset = _reset_of(item, function, states, constraint, problems, where)
        approach = _approach_of(item, function, constraint, where)
        if guard is None or reset is None or approach is False:
            continue
        name = str(item.get("name", f"edge_{k}"))
        if named.setdefault((mode, name), where) != where:
            problems.add(
                f"{where}.name",
                f"{name!r} names {named[mode, name]} of mode {mode!r} too; events "
                f"and warnings name an edge, so give each edge of a mode its own.",
            )
            continue
        edge = Edge(Guard(guard, direction, name=name), target, reset, name, approach)
        edges.append((mode, edge))
    return edges


def _function(
    flow, parameters, variables, problems, key: str, source: object, varying=False
):
    """`source` at [`key`] as a `state_function`, or None (a problem; a constant
    guard where `varying`, as it never changes sign)."""
    expr = problems.check(key, Expression.parse, source, variables)
    if expr is None:
        return None
    if varying and not expr.names - set(constants(parameters)):
        problems.add(
            key,
            f"{expr.source!r} reads no state, output, input or t, so it never "
            f"changes sign and the edge never fires; give a guard over the state.",
        )
        return None
    return state_function(expr, flow, parameters, f"{problems.path}: [{key}]")


def _approach_of(item, function: Callable, constraint, where: str):
    """The `approach`, else an impact's `Contact.rate`, else None; False: bad."""
    if "approach" in item:
        approach = function(f"{where}.approach", item["approach"])
        return False if approach is None else approach
    if item.get("reset") == "impact" and isinstance(constraint, Contact):
        return constraint.rate
    return None


def _reset_of(item, function: Callable, states, constraint, problems, where: str):
    """The edge's reset: `{state = expression}`, or "impact" (Or and Ames eq. 4)."""
    table = item.get("reset", {})
    if table == "impact":
        if not isinstance(constraint, Contact):
            problems.add(
                f"{where}.reset",
                '"impact" needs a [constraint] with the constraint-force input of '
                "the FMU (force_input) or of each body (forces), or, without one, "
                "the state the gap is measured along and the effective mass "
                "(coordinate, mass).",
            )
            return None
        return constraint.impact
    if not isinstance(table, Mapping):
        problems.add(f"{where}.reset", "must be a table of state = expression.")
        return None
    table = flatten(table)  # `a.b = ...` (a dotted name) TOML nests
    assignments = {}
    for name, source in table.items():
        if name not in states:
            problems.add(
                f"{where}.reset.{name}",
                f"the reset writes {name!r}, which is not a state of the FMU; it can "
                f"set only {list(states)}.",
            )
        elif (fn := function(f"{where}.reset.{name}", source)) is not None:
            assignments[states.index(name)] = fn
    if len(assignments) < len(table):
        return None

    def reset(t: float, x: np.ndarray) -> np.ndarray:
        x_new = x.copy()  # every right-hand side reads x before the reset
        for i, fn in assignments.items():
            x_new[i] = fn(t, x)
        return x_new

    return reset


def state_function(expr: Expression, flow, parameters, where: str):
    """Return f(t, x): `expr` over the flow's variables and the parameters,
    compiled where the flow reads its names itself (`Flow.expression_function`,
    `f.engine_entry(n)`); a failure names `where` and the time."""
    function = flow.expression_function(
        expr.program, constants(parameters), failure(expr, where), where
    )
    if function is None:  # it reads a name only the flow can give

        def fn(t: float, x: np.ndarray) -> float:
            scope = {**parameters, **flow.variables(t, x), "t": t}
            try:
                return expr(scope)
            except ExpressionError as exc:
                raise ExpressionError(f"{where} at t = {t!r} s: {exc}") from None

    else:

        def fn(t: float, x: np.ndarray) -> float:
            return float(function(t, x)[0])

        fn.engine_entry = lambda n: (function, 0) if n == function.n_in else None  # type: ignore[attr-defined]  # read by `flows._programs`
    fn.__name__ = expr.source
    return fn


def constants(parameters: Mapping[str, float]) -> dict[str, float]:
    """The parameters an expression reads as constants (all but `t`, the time)."""
    return {k: v for k, v in parameters.items() if k != "t"}


def failure(expr: Expression, where: str) -> Callable:
    """Return failure(t, values, code, value): the error of `expr` failing
    inside a compiled call, as `state_function` names it."""

    def failed(t: float, values: Mapping[str, float], code: int, value: float):
        reason = expr.failure(values, code, value)
        return ExpressionError(f"{where} at t = {t!r} s: {reason}")

    return failed


def constraint_fields(
    table, parameters, problems: Problems, *, known=None, extra_keys=frozenset()
) -> tuple[Any, Any, float] | None:
    """Return (gap, velocity, restitution) of a [constraint] table, or None.

    gap and velocity must be among `known` (None: the caller checks them); the
    table may hold `extra_keys`; restitution may name a parameter.
    """
    if not isinstance(table, Mapping):
        problems.add(
            "constraint", "must be a table with gap, velocity and restitution."
        )
        return None
    problems.unknown_keys(table, CONSTRAINT_KEYS | set(extra_keys), "constraint.")
    for key in ("gap", "velocity"):
        if known is not None and table.get(key) not in known:
            problems.add(
                f"constraint.{key}",
                f"must name a variable of the system ({sorted(known)}), got "
                f"{table.get(key)!r}.",
            )
    restitution = table.get("restitution")
    if isinstance(restitution, str):
        restitution = parameters.get(restitution)
    if not is_number(restitution):
        problems.add("constraint.restitution", "must be a number or a parameter name.")
        return None
    return table.get("gap"), table.get("velocity"), float(restitution)


def read_method(table, name, overrides, problems: Problems, h=None) -> Method | None:
    """The [method], with `h` if none is given; `zeno = "complete"` wraps it
    in Completion."""
    if not isinstance(table, Mapping):
        problems.add("method", "must be a table.")
        return None
    options = {k: v for k, v in table.items() if k not in ("name", "zeno")}
    options.update({k: v for k, v in overrides.items() if v is not None})
    if h is not None and "h" not in options:
        options["h"] = h
    method = problems.check(
        "method", method_named, name or table.get("name", "halving"), options
    )
    zeno = table.get("zeno", "off")
    if zeno not in ("off", "complete"):
        problems.add("method.zeno", f"must be 'off' or 'complete', got {zeno!r}.")
    if method is None or zeno != "complete":
        return method
    return problems.check("method.zeno", Completion, method)


def read_outputs(table, default, known, problems: Problems) -> tuple[str, ...]:
    """The [output] `variables` (by default `default`), each one of `known`."""
    names = None
    if isinstance(table, Mapping):
        problems.unknown_keys(table, {"variables"}, "output.")
        names = table.get("variables", list(default))
    if not isinstance(names, list):
        problems.add("output.variables", "must be a list of variable names.")
        return ()
    for name in names:
        if name not in known:
            problems.add(
                "output.variables",
                f"unknown variable {name!r}; the system has {sorted(known)}.",
            )
    return tuple(names)
