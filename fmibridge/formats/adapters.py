"""Adapter files: one TOML file per model, read into a HybridSystem and a Method.

One FMU with its values, inputs, guards, resets, [constraint], [method] and
[output] (docs/adapters.md), or `[[components]]` and `[[connections]]` (or an
`ssp`) named `component.variable` (docs/coupled.md). The FMUs' own event
indicators are guards too. Every problem is reported in one AdapterError.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import AdapterError, FmibridgeError, did_you_mean
from ..core.guards import UnilateralConstraint
from ..core.numbers import is_number
from ..core.span import check_span, check_step
from ..core.system import HybridSystem, Mode
from ..flows._programs import program_function
from ..flows.cosim_master import Communication, CoupledCoSimulation
from ..flows.coupled import CoupledModelExchange, couple
from ..flows.fmu import ModelExchangeFlow, fmu_event_edges, open_fmu
from ..flows.fmu_archive import FmuArchive
from ..methods.completion import Completion
from ..methods.contact import Contact, fmu_contact
from ..methods.coupled_contact import coupled_contact
from .adapter_tables import (
    BUILD_HINT,
    PROJECTION_HINT,
    PROJECTION_KEYS,
    SHARED_KEYS,
    Adapter,
    Problems,
    constants,
    constraint_fields,
    failure,
    mode_flows,
    read_edges,
    read_method,
    read_outputs,
    state_function,
)
from .expressions import Expression
from .gap_expressions import gap_contact, parse_constraint, projected_constraint
from .ssp import open_ssp
from .toml_file import read_toml

TOP_KEYS = SHARED_KEYS | {"fmu", "start", "inputs", "held", "modes", "initial_mode"}
COUPLED_KEYS = SHARED_KEYS | {"components", "connections", "ssp", "coupling"}
COMPONENT_KEYS = {"name", "fmu", "interface", "parameters", "start"}
COUPLING_KEYS = {"scheme", "inputs", "order"}


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
        Update the [parameters] and [start] tables; a start value of a name in
        [parameters] updates that parameter.
    outputs : sequence of str, optional
        Override [output] `variables`.

    Raises
    ------
    AdapterError
        Listing every problem in the file.
    FmibridgeError, FMUError
        If the FMU itself cannot be opened.
    """
    path = Path(path)
    spec = read_toml(path, "an adapter file", AdapterError)
    if outputs is not None:
        spec = {**spec, "output": {"variables": list(outputs)}}
    if zeno is not None and isinstance(spec.get("method", {}), Mapping):
        spec = {**spec, "method": {**spec.get("method", {}), "zeno": zeno}}
    problems = Problems(path)
    coupled = "components" in spec or "ssp" in spec
    args = (interface, parameters or {}, start or {}, problems)
    flow, spec = (_open_coupled if coupled else _open)(path, spec, *args)
    try:
        build = _build_coupled if coupled else _build
        return build(path, spec, flow, problems, method, method_options or {}, t_end)
    except BaseException:
        flow.close()
        raise


def _overridden(spec: Mapping, interface, parameters, start) -> dict:
    """The file's tables updated by load_adapter's keywords."""
    spec = dict(spec)
    if interface is not None:
        spec["interface"] = interface
    if start and isinstance(spec.get("parameters"), Mapping):
        named = {k: v for k, v in start.items() if k in spec["parameters"]}
        parameters = {**parameters, **named}
        start = {k: v for k, v in start.items() if k not in named}
    for key, values in (("parameters", parameters), ("start", start)):
        if values:
            spec[key] = {**spec.get(key, {}), **values}
    return spec


def _open(path: Path, spec: Mapping, interface, parameters, start, problems):
    """Open a one-FMU adapter's FMU; return (flow, the table overridden)."""
    problems.unknown_keys(spec, TOP_KEYS)
    if "fmu" not in spec:
        problems.add("fmu", "missing: the path of the FMU, relative to this file.")
        problems.raise_if_any()  # nothing more can be checked without the FMU
    spec = _overridden(spec, interface, parameters, start)
    fmu = (path.parent / str(spec["fmu"])).resolve()
    if not fmu.exists():
        problems.add("fmu", f"{fmu} does not exist; {BUILD_HINT}")
        problems.raise_if_any()
    archive = problems.check("fmu", FmuArchive, fmu)
    if archive is None:
        problems.raise_if_any()
    parameters, start = (
        _declared(archive, problems.numbers(spec.get(key, {}), key), key, problems)
        for key in ("parameters", "start")
    )
    constants = _constant_inputs(spec.get("inputs", {}), parameters, problems)
    constants = _declared(archive, constants, "inputs", problems, inputs=True)
    flow = problems.check(
        "fmu",
        open_fmu,
        archive,
        spec.get("interface"),
        parameters=parameters,
        start=start,
        inputs=constants,
        outputs=_recorded(archive, spec.get("output")),
    )
    if flow is None:
        problems.raise_if_any()
    return flow, spec


def _recorded(archive, table: object) -> list[str]:
    """The [output] variables the FMU records as it runs (not its states)."""
    names = table.get("variables") if isinstance(table, Mapping) else None
    if not isinstance(names, list):
        return []
    known = set(archive.variables) - set(archive.state_names)
    return [n for n in names if isinstance(n, str) and n in known]


def _declared(archive, values: Mapping, key: str, problems: Problems, *, inputs=False):
    """The values the FMU declares (as inputs); a problem for each other."""
    kept = {}
    for name, value in values.items():
        variable = archive.variables.get(name)
        if variable is None:
            hint = did_you_mean(name, list(archive.variables))
            problems.add(f"{key}.{name}", f"the FMU has no variable {name!r}{hint}.")
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
    flows = mode_flows(spec, flow, problems)
    if len(problems.items) > n_problems:  # the rest needs each mode's flow
        problems.raise_if_any()
    any_flow: Any = next(iter(flows.values()))  # an FMU's flow: it has x0
    variables = (
        set(any_flow.state_names) | set(flow.output_names) | set(parameters) | {"t"}
    )
    constraint = _constraint(spec.get("constraint"), flow, parameters, problems)
    edges = read_edges(
        spec.get("edges", []), flows, parameters, variables, constraint, problems
    )
    experiment = flow.archive.experiment  # the FMU's defaults; the file's win
    method = read_method(
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
    if end is not None and method is not None and not method.is_adaptive:
        step = (method.h, flow.t0, end, method.max_steps, "method.h")
        problems.check("method.h", check_step, *step)
    if isinstance(method, Completion):
        _check_completable(constraint, any_flow, spec.get("constraint"), problems)
    problems.raise_if_any()
    assert method is not None  # else `read_method` added a problem
    modes = [
        Mode(m, f, fmu_event_edges(f, m) + tuple(e for src, e in edges if src == m))
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


def _constant_inputs(table, parameters, problems) -> dict[str, object]:
    """Inputs: numbers, or expressions of t and the parameters."""
    if not isinstance(table, Mapping):
        problems.add("inputs", f"must be a table of name = expression, got {table!r}.")
        return {}
    inputs = {}
    for name, source in table.items():
        key = f"inputs.{name}"
        expr = problems.check(key, Expression.parse, source, set(parameters) | {"t"})
        if expr is not None:
            where = f"{problems.path}: [{key}]"
            inputs[name] = problems.check(key, _input_function, expr, parameters, where)
    return inputs


def _input_function(expr: Expression, parameters: Mapping[str, float], where: str):
    """A constant input's value, or u(t), a compiled Function of t."""
    if not expr.names - set(parameters):
        return expr(parameters)
    function = program_function(
        expr.program, (), constants(parameters), failure(expr, where), where
    )
    no_states = np.empty(0)

    def u(t: float) -> float:
        return float(function(t, no_states)[0])

    u.engine_entry = lambda n: (function, 0) if n == 0 else None  # type: ignore[attr-defined]
    return u


def _constraint(table, flow, parameters, problems) -> UnilateralConstraint | None:
    """The [constraint]: a Contact through the FMU's force input, else by projection."""
    if table is None:
        return None
    fields = constraint_fields(
        table, parameters, problems, extra_keys={"force_input"} | PROJECTION_KEYS
    )
    if fields is None:
        return None
    force_input = table.get("force_input", "lam")
    has_force = force_input in flow.archive.variables
    coordinate = table.get("coordinate")
    if has_force and "mass" in table:
        problems.add(
            "constraint.mass",
            f"the FMU has the constraint-force input {force_input!r}, through "
            f"which completion acts; `mass` is for the projection route of an FMU "
            f"without one. Remove it.",
        )
        return None
    known = set(flow.state_names) | set(flow.output_names)
    if fields[0] in known and fields[1] in known:
        if has_force:
            kwargs = {"force_input": force_input, "coordinate": coordinate}
            return problems.check("constraint", fmu_contact, flow, *fields, **kwargs)
        if coordinate is None and "mass" not in table:
            return problems.check("constraint", UnilateralConstraint, *fields)
    variables = known | set(parameters) | {"t"}
    gap, velocity = parse_constraint(table, variables, problems)
    if gap is None or velocity is None:
        return None
    where = str(problems.path)
    if not has_force:
        lacking = (
            f"the FMU has no constraint-force input {force_input!r}. Add "
            f'`force_input = "<its input>"` if it has one under another name'
        )
        return projected_constraint(
            flow, gap, velocity, fields[2], table, lacking, parameters, problems, where
        )
    args = (flow, gap, velocity, fields[2], force_input, parameters, where, coordinate)
    return problems.check("constraint", gap_contact, *args)


def _check_completable(constraint, flow, table, problems) -> None:
    """Record a problem where completion cannot act on the [constraint]."""
    if constraint is None or isinstance(constraint, Contact):
        return
    names = set(flow.state_names)
    if constraint.gap in names and constraint.velocity in names:
        return  # the unit-mass contact of `contact_of`
    force_input = table.get("force_input", "lam")
    problems.add(
        "constraint",
        f'completion (zeno = "complete") needs the contact force: the FMU has no '
        f"constraint-force input {force_input!r}, and the gap "
        f"{constraint.gap!r} is not one of its states. Add `force_input = "
        f'"<its input>"` if it has one under another name; otherwise '
        f"{PROJECTION_HINT}",
    )


def _outputs(table, flow, problems) -> tuple[str, ...]:
    known = set(flow.state_names) | set(flow.output_names)
    names = read_outputs(table, flow.state_names, known, problems)
    if not isinstance(flow, ModelExchangeFlow) and set(names) - set(flow.state_names):
        problems.add(
            "output.variables", "a Co-Simulation run can output its states only."
        )
    return names


def _coupled_overrides(spec, parameters, start, problems) -> Mapping:
    """The table with `component.variable` overrides put into its components."""
    system = {k: v for k, v in parameters.items() if "." not in k}
    spec = {**spec, "parameters": {**spec.get("parameters", {}), **system}}
    by_component: dict[str, dict[str, dict]] = {}
    for key, values in (("parameters", parameters), ("start", start)):
        for name, value in values.items():
            component, dot, variable = name.partition(".")
            if dot:
                by_component.setdefault(component, {}).setdefault(key, {})
                by_component[component][key][variable] = value
            elif key == "start":
                problems.add("start", f"override {name!r} must be `component.state`.")
    if not by_component:
        return spec
    items = spec.get("components")
    if not isinstance(items, list):
        problems.add("components", "overrides of component values need [[components]].")
        return spec
    names = {item.get("name") for item in items if isinstance(item, Mapping)}
    for component in sorted(set(by_component) - names):
        problems.add(
            "components", f"an override names unknown component {component!r}."
        )
    return {**spec, "components": [_merged(i, by_component) for i in items]}


def _merged(item, by_component):
    if not isinstance(item, Mapping) or item.get("name") not in by_component:
        return item
    extra = by_component[item["name"]]
    return {**item, **{k: {**item.get(k, {}), **v} for k, v in extra.items()}}


def _communication(table: object, problems: Problems) -> Communication | None:
    if not isinstance(table, Mapping):
        problems.add("coupling", "must be a table with scheme, inputs and order.")
        return None
    problems.unknown_keys(table, COUPLING_KEYS, "coupling.")
    known = {k: v for k, v in table.items() if k in COUPLING_KEYS}
    return problems.check("coupling", Communication, **known)


def _open_coupled(path, spec, interface, parameters, start, problems):
    """Open and couple the components; return (flow, the table overridden)."""
    problems.unknown_keys(spec, COUPLED_KEYS)
    spec = _coupled_overrides(spec, parameters, start, problems)
    if ("ssp" in spec) == ("components" in spec):
        problems.add("components", "give either [[components]] or `ssp`, not both.")
    communication = _communication(spec.get("coupling", {}), problems)
    system_parameters = problems.numbers(spec.get("parameters", {}), "parameters")
    problems.raise_if_any()
    spec = {**spec, "parameters": system_parameters}
    try:
        if "ssp" in spec:
            ssp = (path.parent / str(spec["ssp"])).resolve()
            flow, structure = open_ssp(
                ssp,
                interface=interface or spec.get("interface"),
                communication=communication,
            )
            stop = structure.stop_time  # the default of the file's t_end
            default = {} if stop is None else {"t_end": stop}
            # the run starts at the SSD's startTime, as `ssp_system`'s does (a
            # file cannot give "t0": it is not one of COUPLED_KEYS)
            return flow, {**default, **spec, "t0": structure.start_time}
        parts = _components(path, spec, interface, problems)
        connections = _connections(spec.get("connections", []), problems)
        if problems.items:
            for part in parts.values():
                part.close()
            problems.raise_if_any()
        return couple(parts, connections, communication=communication), spec
    except AdapterError:
        raise
    except FmibridgeError as exc:
        raise AdapterError(f"{path}: {exc}") from None


def _components(path, spec, interface, problems) -> dict:
    table = spec.get("components")
    if not isinstance(table, list) or not all(isinstance(c, Mapping) for c in table):
        problems.add("components", "must be an array of tables ([[components]]).")
        return {}
    if not table:
        problems.add("components", "lists no component; give at least one FMU.")
        return {}
    parts: dict = {}
    with contextlib.ExitStack() as opened:  # closes them on an interrupt
        for k, item in enumerate(table):
            where = f"components[{k}]"
            problems.unknown_keys(item, COMPONENT_KEYS, f"{where}.")
            name, fmu = str(item.get("name", "")), item.get("fmu")
            if not name or not isinstance(fmu, str) or name in parts:
                problems.add(where, "needs a unique `name` and an `fmu` path.")
                continue
            fmu = (path.parent / fmu).resolve()
            if not fmu.is_file():
                problems.add(f"{where}.fmu", f"{fmu} does not exist; {BUILD_HINT}")
                continue
            chosen = interface or item.get("interface", spec.get("interface", "me"))
            values = {
                key: problems.numbers(item.get(key, {}), f"{where}.{key}")
                for key in ("parameters", "start")
            }
            key = f"{where} ({name})"
            parts[name] = problems.check(key, open_fmu, fmu, chosen, **values)
            if parts[name] is not None:  # None: it failed to open
                opened.enter_context(parts[name])
        opened.pop_all()
    return {name: part for name, part in parts.items() if part is not None}


def _connections(table, problems) -> list[tuple[str, str]]:
    if not isinstance(table, list) or not all(isinstance(c, Mapping) for c in table):
        problems.add("connections", "must be an array of tables ([[connections]]).")
        return []
    for k, item in enumerate(table):
        if set(item) != {"from", "to"}:
            problems.add(
                f"connections[{k}]",
                f"needs exactly `from` and `to` (`component.variable`), got "
                f"{sorted(item)}.",
            )
    return [(str(c["from"]), str(c["to"])) for c in table if set(c) == {"from", "to"}]


def _build_coupled(path, spec, flow, problems, name, options, t_end):
    parameters = {**flow.parameter_values, **spec["parameters"]}
    known = set(flow.variables(0.0, flow.x0)) | set(parameters) | {"t"}
    flows = mode_flows({"edges": spec.get("edges", [])}, flow, problems)
    constraint = _coupled_constraint(
        path, spec.get("constraint"), flow, known, parameters, problems
    )
    table = spec.get("edges", [])
    edges = read_edges(table, flows, parameters, known, constraint, problems)
    method = read_method(spec.get("method", {}), name, options, problems)
    outputs = read_outputs(
        spec.get("output", {}), flow.state_names, known - set(parameters), problems
    )
    if isinstance(flow, CoupledCoSimulation) and not flow.recorded_names:
        # read after each step: FMUs that step themselves are not put back at a
        # sample after the run (a reset and re-initialisation each)
        flow.record([n for n in outputs if n not in flow.state_names])
    t0 = spec.get("t0", 0.0)
    end = t_end if t_end is not None else spec.get("t_end", 1.0)
    end = problems.check("t_end", check_span, t0, end)
    problems.raise_if_any()
    own = flow.event_edges if isinstance(flow, CoupledModelExchange) else lambda m: ()
    modes = [
        Mode(m, f, tuple(e for src, e in edges if src == m) + own(m))
        for m, f in flows.items()
    ]
    system = HybridSystem(
        modes,
        edges[0][0] if edges else next(iter(flows)),
        flow.x0,
        t0=t0,
        parameters=parameters,
        constraint=constraint,
        name=str(spec.get("name", path.stem)),
    )
    return Adapter(path, system, method, end, outputs)


def _coupled_constraint(path, table, flow, known, parameters, problems):
    """The [constraint]: named variables, a Contact through `forces`, else projected."""
    if table is None:
        return None
    spec = table if isinstance(table, Mapping) else {}
    gap = spec.get("gap")
    projected = PROJECTION_KEYS & set(spec) or (
        isinstance(gap, str) and gap not in known
    )
    if "forces" not in spec and not projected:
        names = known - {"t"}  # the time is no gap, nor a gap's rate
        fields = constraint_fields(table, parameters, problems, known=names)
        if fields is None:
            return None
        return problems.check("constraint", UnilateralConstraint, *fields)
    extra = {"forces"} if "forces" in spec else PROJECTION_KEYS
    fields = constraint_fields(table, parameters, problems, extra_keys=extra)
    gap, velocity = parse_constraint(table, known, problems)
    if "forces" not in spec:
        if fields is None or gap is None or velocity is None:
            return None
        lacking = (
            "no `forces` are given (each body's free force input). Add "
            '`forces = ["<body>.<its input>", ...]` if the bodies have them'
        )
        args = (flow, gap, velocity, fields[2], table, lacking, parameters, problems)
        return projected_constraint(*args, str(path))
    gap, velocity = (
        state_function(e, flow, parameters, f"{path}: [constraint.{key}]") if e else e
        for key, e in (("gap", gap), ("velocity", velocity))
    )
    forces = table["forces"]
    if not _is_forces(forces):
        problems.add(
            "constraint.forces",
            'must list the bodies\' force inputs, ["ball.lam", "table.lam"], or '
            'give each its scale, { "ball.lam" = 1.0, "table.F" = -1.0 }.',
        )
        return None
    if fields is None or gap is None or velocity is None:
        return None
    args = (flow, gap, velocity, fields[2])
    return problems.check("constraint", coupled_contact, *args, forces=forces)


def _is_forces(forces) -> bool:
    """A list of input names, or a table of name = number."""
    if isinstance(forces, list):
        return all(isinstance(f, str) for f in forces)
    return isinstance(forces, Mapping) and all(map(is_number, forces.values()))
