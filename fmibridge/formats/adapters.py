"""Adapter files: one TOML file per model, read into a HybridSystem and a Method.

An adapter names the FMU (path relative to the file), its interface type,
parameter overrides, start values and inputs, the guards and resets as
expressions over FMU variable and parameter names, the unilateral constraint,
the method with its parameters and the output columns::

    fmu = "../fmus/build/BouncingBall.fmu"
    interface = "me"            # or "cs"
    t_end = 3.0

    [parameters]
    e = 0.8

    [[edges]]
    name = "floor"
    guard = "h"                 # g > 0 inside the domain
    direction = "falling"
    reset = { v = "-e * v" }    # right-hand sides use the values before the reset
                                # (or reset = "impact": Or and Ames eq. 4 from the
                                # [constraint] and the FMU's force input)

    [constraint]
    gap = "h"                   # a state or output
    velocity = "v"              # dh qdot
    restitution = "e"           # a number or a parameter name
    force_input = "lam"         # optional: the FMU's constraint-force input

    [method]
    name = "halving"
    h = 1e-3
    zeno = "complete"           # optional: continue Zeno executions (Or and Ames)

The whole file is checked before anything runs, and every problem found is
reported in one AdapterError that names the file and the key. Every `target`
must be a declared mode: a [modes.NAME] table or the `mode` of an edge. FMU
event indicators (an exported model's own `when` clauses) always become guards
too. An expression that fails at run time (`v / 0`) raises one ExpressionError
naming the file, the key, the expression and the time.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import AdapterError, ExpressionError, FmibridgeError
from ..core.result import Result
from ..core.span import check_span, check_step
from ..core.system import (
    DIRECTIONS,
    Edge,
    Guard,
    HybridSystem,
    Mode,
    UnilateralConstraint,
)
from ..flows.fmu import ModelExchangeFlow, fmu_event_edges, open_fmu
from ..flows.fmu_archive import FmuArchive
from ..flows.mode_inputs import mode_inputs
from ..methods import Method, method_named
from ..methods.contact import Contact, fmu_contact
from .compiled_expressions import program_of
from .expressions import Expression
from .toml_file import read_toml

TOP_KEYS = {
    "name",
    "description",
    "fmu",
    "interface",
    "t_end",
    "parameters",
    "start",
    "inputs",
    "held",
    "modes",
    "initial_mode",
    "edges",
    "constraint",
    "method",
    "output",
}
EDGE_KEYS = {"name", "mode", "target", "guard", "direction", "reset"}
DEFAULT_MODE = "model"


@dataclass(frozen=True)
class Adapter:
    """A model ready to run: its system, method, end time and output columns."""

    path: Path
    system: HybridSystem
    method: Method
    t_end: float
    outputs: tuple[str, ...]

    def run(
        self, *, progress: bool = False, t_eval: Sequence[float] | None = None
    ) -> Result:
        """Run the method on the system and add the requested output columns.

        `progress` and `t_eval` are those of `Method.run`.
        """
        result = self.method.run(
            self.system, self.t_end, progress=progress, t_eval=t_eval
        )
        extra = [n for n in self.outputs if n not in self.system.state_names]
        if not extra:
            return result
        flow = self.system.mode(self.system.initial_mode).flow
        columns = {n: np.empty(len(result.t)) for n in extra}
        for k, (t, x) in enumerate(zip(result.t, result.x, strict=True)):
            values = flow.variables(t, x)
            for n in extra:
                columns[n][k] = values[n]
        return dataclasses.replace(result, outputs={**result.outputs, **columns})

    def close(self) -> None:
        """Free the FMU instance."""
        self.system.close()

    def __enter__(self) -> Adapter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Problems:
    """Collects every problem in one file, to report them together."""

    def __init__(self, path: Path) -> None:
        self.path, self.items = path, []

    def add(self, key: str, message: str) -> None:
        self.items.append(f"[{key}] {message}")

    def check(self, key: str, fn: Callable, *args):
        """Call fn(*args); record an FmibridgeError under `key` and return None."""
        try:
            return fn(*args)
        except FmibridgeError as exc:
            self.add(key, str(exc))
            return None

    def raise_if_any(self) -> None:
        if self.items:
            lines = "\n  ".join(self.items)
            raise AdapterError(f"{self.path}: {len(self.items)} problem(s):\n  {lines}")


def load_adapter(
    path: str | Path,
    *,
    method: str | None = None,
    method_options: Mapping[str, object] | None = None,
    t_end: float | None = None,
    interface: str | None = None,
    zeno: str | None = None,
    parameters: Mapping[str, float] | None = None,
    start: Mapping[str, float] | None = None,
    outputs: Sequence[str] | None = None,
) -> Adapter:
    """Read an adapter file; the keyword overrides win over its values.

    Parameters
    ----------
    path : path
        The adapter file.
    method, method_options, t_end, interface :
        Override [method] name and options, `t_end` and `interface`.
    zeno : {'off', 'complete'}, optional
        Override [method] `zeno`: 'complete' wraps the method in Completion.
    parameters, start : mapping, optional
        Update the [parameters] and [start] tables (sweeps use these); a start
        value of a name in [parameters] updates that parameter.
    outputs : sequence of str, optional
        Override [output] `variables`.

    Raises
    ------
    AdapterError
        Listing every problem in the file (unknown keys, unknown variables,
        malformed or unsafe expressions, bad method options).
    FmibridgeError, FMUError
        If the FMU itself cannot be opened.
    """
    path = Path(path)
    spec = read_toml(path, "an adapter file", AdapterError)
    if outputs is not None:
        spec = {**spec, "output": {"variables": list(outputs)}}
    from .coupled import is_coupled, load_coupled  # coupled.py builds on this file

    if is_coupled(spec):
        overrides = dict(
            method=method,
            method_options=method_options,
            t_end=t_end,
            interface=interface,
            zeno=zeno,
            parameters=parameters,
            start=start,
        )
        return load_coupled(path, spec, overrides)
    problems = _Problems(path)
    for key in sorted(set(spec) - TOP_KEYS):
        problems.add(key, f"unknown key; allowed keys are {sorted(TOP_KEYS)}.")
    if "fmu" not in spec:
        problems.add("fmu", "missing: the path of the FMU, relative to this file.")
        problems.raise_if_any()  # nothing more can be checked without the FMU
    spec = _overridden(spec, interface, zeno, parameters, start)
    flow = _open_flow(path, spec, problems)
    try:
        adapter = _build(
            path, spec, flow, problems, method, method_options or {}, t_end
        )
    except BaseException:
        flow.close()
        raise
    return adapter


def _overridden(spec: Mapping, interface, zeno, parameters, start) -> dict:
    """The file's tables updated by load_adapter's keywords; a start value of a
    name in [parameters] updates that parameter."""
    spec = dict(spec)
    if interface is not None:
        spec["interface"] = interface
    if start and isinstance(spec.get("parameters"), Mapping):
        named = {k: v for k, v in start.items() if k in spec["parameters"]}
        parameters = {**(parameters or {}), **named}
        start = {k: v for k, v in start.items() if k not in named}
    for key, values in (("parameters", parameters), ("start", start)):
        if values:
            spec[key] = {**spec.get(key, {}), **values}
    if zeno is not None:
        spec["method"] = {**spec.get("method", {}), "zeno": zeno}
    return spec


def _open_flow(path: Path, spec: Mapping, problems: _Problems):
    """Open the FMU with the file's values, after checking their names against
    it; raise the problems found so far if it cannot be opened."""
    fmu = (path.parent / str(spec["fmu"])).resolve()
    if not fmu.exists():
        problems.add(
            "fmu", f"{fmu} does not exist; build the FMUs with `fmibridge build-fmus`."
        )
        problems.raise_if_any()
    archive = problems.check("fmu", FmuArchive, fmu)
    if archive is None:
        problems.raise_if_any()
    parameters = _numbers(spec.get("parameters", {}), "parameters", problems)
    parameters = _declared(archive, parameters, "parameters", problems)
    start = _declared(
        archive, _numbers(spec.get("start", {}), "start", problems), "start", problems
    )
    constants = _constant_inputs(spec.get("inputs", {}), parameters, problems)
    constants = _declared(archive, constants, "inputs", problems, inputs=True)
    try:
        return open_fmu(
            archive,
            spec.get("interface"),
            parameters=parameters,
            start=start,
            inputs=constants,
        )
    except FmibridgeError as exc:
        problems.add("fmu", str(exc))
        problems.raise_if_any()
        raise


def _declared(archive, values: Mapping, key: str, problems: _Problems, *, inputs=False):
    """Keep the values whose names the FMU declares (as inputs, for `inputs`);
    record a problem for each of the others, with the names that come close."""
    kept = {}
    for name, value in values.items():
        variable = archive.variables.get(name)
        if variable is None:
            close = difflib.get_close_matches(name, list(archive.variables), n=3)
            hint = f" Did you mean {close}?" if close else ""
            problems.add(f"{key}.{name}", f"the FMU has no variable {name!r}.{hint}")
        elif inputs and variable.causality != "input":
            problems.add(
                f"{key}.{name}",
                f"{name!r} is not an input of the FMU (causality "
                f"{variable.causality!r}).",
            )
        else:
            kept[name] = value
    return kept


def _build(path, spec, flow, problems, method_name, method_options, t_end) -> Adapter:
    parameters = flow.parameter_values
    n_problems = len(problems.items)
    flows = _mode_flows(spec, flow, problems)
    if len(problems.items) > n_problems:  # the rest needs each mode's flow
        problems.raise_if_any()
    any_flow = next(iter(flows.values()))
    variables = (
        set(any_flow.state_names) | set(flow.output_names) | set(parameters) | {"t"}
    )
    constraint = _constraint(spec.get("constraint"), flow, parameters, problems)
    edges = _edges(
        spec.get("edges", []), flows, parameters, variables, constraint, problems
    )
    experiment = flow.archive.experiment  # the FMU's defaults; the file's win
    method = _method(
        spec.get("method", {}), method_name, method_options, problems, experiment.step
    )
    outputs = _outputs(spec.get("output", {}), flow, problems)
    initial = spec.get("initial_mode", edges[0][0] if edges else next(iter(flows)))
    if initial not in flows:
        problems.add(
            "initial_mode", f"unknown mode {initial!r}; modes are {sorted(flows)}."
        )
    default_end = 1.0 if experiment.stop is None else experiment.stop
    end = t_end if t_end is not None else spec.get("t_end", default_end)
    end = problems.check("t_end", check_span, flow.t0, end)
    if end is not None and method is not None:
        step = (method.h, flow.t0, end, method.max_steps, "method.h")
        problems.check("method.h", check_step, *step)
    problems.raise_if_any()
    modes = [
        Mode(m, f, tuple(e for src, e in edges if src == m) + fmu_event_edges(f, m))
        for m, f in flows.items()
    ]
    system = HybridSystem(
        modes,
        initial,
        any_flow.x0,
        t0=flow.t0,
        parameters=parameters,
        constraint=constraint,
        name=str(spec.get("name", path.stem)),
        experiment=experiment,
    )
    return Adapter(path, system, method, end, outputs)


def _mode_flows(spec, flow, problems) -> dict[str, object]:
    """Each mode's flow: the FMU flow, wrapped with its mode and held inputs if any."""
    held = _numbers(spec.get("held", {}), "held", problems)
    table = spec.get("modes", {})
    if not isinstance(table, Mapping) or not all(
        isinstance(v, Mapping) for v in table.values()
    ):
        problems.add(
            "modes", "must be tables [modes.NAME] with `inputs = {name = value}`."
        )
        return {}
    names = set(table)  # declared: a [modes.NAME] table, or an edge's `mode`
    for item in (
        spec.get("edges", []) if isinstance(spec.get("edges", []), list) else []
    ):
        if isinstance(item, Mapping):
            names.add(str(item.get("mode", DEFAULT_MODE)))
    names = sorted(names) or [DEFAULT_MODE]
    if not held and not table:
        return dict.fromkeys(names, flow)
    flows = {}
    for mode in names:
        spec_mode = table.get(mode, {})
        for key in sorted(set(spec_mode) - {"inputs"}):
            problems.add(
                f"modes.{mode}.{key}", "unknown key; allowed keys are ['inputs']."
            )
        fixed = _numbers(spec_mode.get("inputs", {}), f"modes.{mode}.inputs", problems)
        flows[mode] = problems.check(
            f"modes.{mode}", mode_inputs, flow, fixed, held, mode
        )
    return flows


def flatten(table: Mapping, prefix: str = "") -> dict:
    """Turn TOML's nested keys ({'parameters': {'e': ...}}) into 'parameters.e'."""
    flat = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _numbers(table: object, key: str, problems: _Problems) -> dict[str, float]:
    if not isinstance(table, Mapping):
        problems.add(key, f"must be a table of name = number, got {table!r}.")
        return {}
    out = {}
    for name, value in table.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.add(f"{key}.{name}", f"must be a number, got {value!r}.")
        else:
            out[name] = float(value)
    return out


def _constant_inputs(table, parameters, problems) -> dict[str, object]:
    """Inputs: numbers, or expressions of t and the parameters given in the file."""
    if not isinstance(table, Mapping):
        problems.add("inputs", f"must be a table of name = expression, got {table!r}.")
        return {}
    inputs = {}
    for name, source in table.items():
        expr = problems.check(
            f"inputs.{name}", Expression.parse, source, set(parameters) | {"t"}, ""
        )
        if expr is not None:
            where = f"{problems.path}: [inputs.{name}]"
            inputs[name] = problems.check(
                f"inputs.{name}", _input_function, expr, parameters, where
            )
    return inputs


def _input_function(expr: Expression, parameters: Mapping[str, float], where: str):
    """A constant input's value, or the function of t of a time-varying one
    (with its `program` for the compiled loop, `flows.fmu_view`)."""
    if not expr.names - set(parameters):
        return expr(parameters)

    def u(t: float) -> float:
        return _evaluate(expr, {**parameters, "t": t}, where, t)

    u.program = program_of(expr, _constants(parameters))
    return u


def _constants(parameters: Mapping[str, float]) -> dict[str, float]:
    """The names an expression reads as constants: the parameters, less `t`
    (which `_values` gives the time)."""
    return {k: v for k, v in parameters.items() if k != "t"}


def _edges(
    table, flows, parameters, variables, constraint, problems
) -> list[tuple[str, Edge]]:
    if not isinstance(table, list):
        problems.add("edges", "must be an array of tables ([[edges]]).")
        return []
    edges = []
    for k, item in enumerate(table):
        where = f"edges[{k}]"
        if not isinstance(item, Mapping):
            problems.add(where, "must be a table.")
            continue
        for key in sorted(set(item) - EDGE_KEYS):
            problems.add(
                f"{where}.{key}", f"unknown key; allowed keys are {sorted(EDGE_KEYS)}."
            )
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
        flow = flows[mode]
        guard = problems.check(
            f"{where}.guard", Expression.parse, item["guard"], variables, ""
        )
        reset = _reset_of(
            item.get("reset", {}),
            flow,
            parameters,
            variables,
            constraint,
            problems,
            where,
        )
        if guard is None or reset is None:
            continue
        name = str(item.get("name", f"edge_{k}"))
        key = f"{problems.path}: [{where}.guard]"
        fn = _guard_function(guard, flow, parameters, key)
        edges.append((mode, Edge(Guard(fn, direction, name=name), target, reset, name)))
    return edges


def _reset_of(table, flow, parameters, variables, constraint, problems, where):
    """A reset: assignments `{state = expression}`, or "impact" (Or and Ames eq. 4)."""
    if table == "impact":
        if not isinstance(constraint, Contact):
            problems.add(
                f"{where}.reset",
                '"impact" needs a [constraint] on an FMU '
                "with a constraint-force input (force_input).",
            )
            return None
        return constraint.impact
    assignments = _reset(table, flow, variables, problems, where)
    if assignments is None:
        return None
    keys = {
        i: f"{problems.path}: [{where}.reset.{flow.state_names[i]}]"
        for i in assignments
    }
    return _reset_function(assignments, flow, parameters, keys)


def _reset(table, flow, variables, problems, where):
    if not isinstance(table, Mapping):
        problems.add(f"{where}.reset", "must be a table of state = expression.")
        return None
    assignments = {}
    for name, source in table.items():
        if name not in flow.state_names:
            problems.add(
                f"{where}.reset.{name}",
                f"the reset writes {name!r}, which is not a state of the FMU; it can "
                f"set "
                f"only {list(flow.state_names)}.",
            )
            continue
        expr = problems.check(
            f"{where}.reset.{name}", Expression.parse, source, variables, ""
        )
        if expr is not None:
            assignments[flow.state_names.index(name)] = expr
    return assignments if len(assignments) == len(table) else None


def _values(flow, parameters, used: set[str]) -> Callable[[float, np.ndarray], dict]:
    """Return (t, x) -> every name an expression may use at that point.

    The FMU is asked only when the expressions `used` name more than states,
    parameters and t.
    """
    names = flow.state_names
    if used - set(names) - set(parameters) - {"t"}:
        return lambda t, x: {**parameters, **flow.variables(t, x), "t": t}
    return lambda t, x: {
        **parameters,
        **dict(zip(names, x.tolist(), strict=True)),
        "t": t,
    }


def _evaluate(expr: Expression, values: Mapping[str, float], where: str, t: float):
    """Evaluate `expr`; a failure names `where` (file and key) and the time."""
    try:
        return expr(values)
    except ExpressionError as exc:
        raise ExpressionError(f"{where} at t = {t!r} s: {exc}") from None


def _guard_function(expr: Expression, flow, parameters, where: str):
    """The guard g(t, x) of `expr`, with its `program` over the states, outputs
    and t of `program_flow` for the compiled loop (`flows.fmu_view`)."""
    values = _values(flow, parameters, expr.names)

    def guard(t: float, x: np.ndarray) -> float:
        return _evaluate(expr, values(t, x), where, t)

    guard.__name__ = expr.source
    guard.program, guard.program_flow = program_of(expr, _constants(parameters)), flow
    return guard


def _reset_function(assignments: dict[int, Expression], flow, parameters, keys):
    """The reset of `assignments`; `keys` name each one's file and key."""
    values = _values(
        flow, parameters, set().union(*(e.names for e in assignments.values()))
    )

    def reset(t: float, x: np.ndarray) -> np.ndarray:
        before = values(t, x)  # every right-hand side sees the values before the reset
        x_new = x.copy()
        for i, expr in assignments.items():
            x_new[i] = _evaluate(expr, before, keys[i], t)
        return x_new

    return reset


def _constraint(table, flow, parameters, problems) -> UnilateralConstraint | None:
    """The [constraint]: a Contact (impact law, completion) where the FMU allows it."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        problems.add(
            "constraint", "must be a table with gap, velocity and restitution."
        )
        return None
    for key in sorted(set(table) - {"gap", "velocity", "restitution", "force_input"}):
        problems.add(
            f"constraint.{key}",
            "unknown key; allowed keys are "
            "['force_input', 'gap', 'restitution', 'velocity'].",
        )
    known = set(flow.state_names) | set(flow.output_names)
    for key in ("gap", "velocity"):
        if table.get(key) not in known:
            problems.add(
                f"constraint.{key}",
                f"must name a state or output of the FMU "
                f"({sorted(known)}), got {table.get(key)!r}.",
            )
    restitution = table.get("restitution")
    if isinstance(restitution, str):
        restitution = parameters.get(restitution)
    if not isinstance(restitution, int | float):
        problems.add("constraint.restitution", "must be a number or a parameter name.")
        return None
    args = (table.get("gap"), table.get("velocity"), float(restitution))
    force_input = table.get("force_input", "lam")
    if force_input in flow.archive.variables:
        return problems.check(
            "constraint", lambda: fmu_contact(flow, *args, force_input=force_input)
        )
    return problems.check("constraint", UnilateralConstraint, *args)


def _method(table, name, overrides, problems, h=None) -> Method | None:
    """The [method], with `h` (the FMU's DefaultExperiment step) if none is given."""
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
    from ..methods.completion import Completion

    return problems.check("method.zeno", Completion, method)


def _outputs(table, flow, problems) -> tuple[str, ...]:
    names = (
        table.get("variables", list(flow.state_names))
        if isinstance(table, Mapping)
        else None
    )
    if not isinstance(names, list):
        problems.add("output.variables", "must be a list of variable names.")
        return ()
    known = set(flow.state_names) | set(flow.output_names)
    for name in names:
        if name not in known:
            problems.add(
                "output.variables",
                f"unknown variable {name!r}; the FMU has {sorted(known)}.",
            )
    if not isinstance(flow, ModelExchangeFlow) and set(names) - set(flow.state_names):
        problems.add(
            "output.variables", "a Co-Simulation run can output its states only."
        )
    return tuple(names)
