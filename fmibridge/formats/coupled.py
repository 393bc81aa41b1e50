"""Coupled adapter files: several FMUs, their connections, and the hybrid part.

`[[components]]` and `[[connections]]` (or `ssp = "..."`) describe a coupled
system (`flows.coupled`); guards, resets, [constraint] and outputs name
`component.variable`, and a contact between components gives each body's
force input (`forces`) or is completed by projection (docs/coupled.md lists
every key). The other tables read as in a one-FMU adapter (`adapter_tables`);
every problem is reported in one AdapterError.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..core.errors import AdapterError, FmibridgeError
from ..core.system import HybridSystem, Mode, UnilateralConstraint
from ..flows.cosim_master import Communication, CoupledCoSimulation
from ..flows.coupled import CoupledModelExchange, couple
from ..flows.fmu import open_fmu
from ..methods.coupled_contact import coupled_contact
from .adapter_tables import (
    BUILD_HINT,
    PROJECTION_KEYS,
    SHARED_KEYS,
    Adapter,
    Problems,
    constraint_fields,
    flatten,
    mode_flows,
    read_edges,
    read_method,
    read_outputs,
    state_function,
)
from .gap_expressions import parse_constraint, projected_constraint
from .ssp import open_ssp

TOP_KEYS = SHARED_KEYS | {"components", "connections", "ssp", "coupling"}
COMPONENT_KEYS = {"name", "fmu", "interface", "parameters", "start"}
COUPLING_KEYS = {"scheme", "inputs", "order"}


def is_coupled(spec: Mapping) -> bool:
    """Return True if an adapter's table describes a coupled system."""
    return "components" in spec or "ssp" in spec


def load_coupled(path: Path, spec: Mapping, overrides: Mapping) -> Adapter:
    """Read a coupled adapter's table (parsed from `path`) into an Adapter.

    `overrides` are `adapters.load_adapter`'s keywords and win over the file;
    `interface` applies to every component, `parameters` and `start` name
    `component.variable` (a parameter without a dot is a system parameter).
    """
    names = ("method", "method_options", "t_end", "interface", "parameters", "start")
    method, options, t_end, interface, parameters, start = map(overrides.get, names)
    problems = Problems(path)
    problems.unknown_keys(spec, TOP_KEYS)
    spec = _overridden(spec, parameters or {}, start or {}, problems)
    if ("ssp" in spec) == ("components" in spec):
        problems.add("components", "give either [[components]] or `ssp`, not both.")
    communication = _communication(spec.get("coupling", {}), problems)
    system_parameters = problems.numbers(spec.get("parameters", {}), "parameters")
    problems.raise_if_any()
    flow, stop_time = _open(path, spec, interface, communication, problems)
    try:
        return _build(
            path, spec, flow, system_parameters, problems,
            method, options or {}, t_end if t_end is not None else stop_time,
        )  # fmt: skip
    except BaseException:
        flow.close()
        raise


def _overridden(spec, parameters, start, problems) -> Mapping:
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
    return problems.check("coupling", lambda: Communication(**table))


def _open(path, spec, interface, communication, problems):
    """Open and couple the components; return (flow, SSP stop time or None)."""
    try:
        if "ssp" in spec:
            ssp = (path.parent / str(spec["ssp"])).resolve()
            flow, structure = open_ssp(
                ssp,
                interface=interface or spec.get("interface"),
                communication=communication,
            )
            return flow, structure.stop_time
        parts = _components(path, spec, interface, problems)
        connections = _connections(spec.get("connections", []), problems)
        if problems.items:
            for part in parts.values():
                part.close()
            problems.raise_if_any()
        return couple(parts, connections, communication=communication), None
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
    try:
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
    except BaseException:
        for part in parts.values():
            part.close()
        raise
    return {name: part for name, part in parts.items() if part is not None}


def _connections(table, problems) -> list[tuple[str, str]]:
    if not isinstance(table, list) or not all(isinstance(c, Mapping) for c in table):
        problems.add("connections", "must be an array of tables ([[connections]]).")
        return []
    connections = []
    for k, item in enumerate(table):
        if set(item) != {"from", "to"}:
            problems.add(
                f"connections[{k}]",
                f"needs exactly `from` and `to` (`component.variable`), got "
                f"{sorted(item)}.",
            )
            continue
        connections.append((str(item["from"]), str(item["to"])))
    return connections


def _build(path, spec, flow, system_parameters, problems, name, options, t_end):
    parameters = {**flow.parameter_values, **system_parameters}
    known = set(flow.variables(0.0, flow.x0)) | set(parameters) | {"t"}
    edges_table = [_flattened(e) for e in spec.get("edges", [])]
    flows = mode_flows({"edges": edges_table}, flow, problems)
    constraint = _constraint(
        path, spec.get("constraint"), flow, known, parameters, problems
    )
    edges = read_edges(edges_table, flows, parameters, known, constraint, problems)
    method = read_method(spec.get("method", {}), name, options, problems)
    outputs = read_outputs(
        spec.get("output", {}), flow.state_names, known - set(parameters), problems
    )
    if isinstance(flow, CoupledCoSimulation) and not flow.recorded_names:
        # read after each step: FMUs that step themselves are not put back at a
        # sample after the run (a reset and re-initialisation each)
        flow.record([n for n in outputs if n not in flow.state_names])
    end = t_end if t_end is not None else spec.get("t_end", 1.0)
    if not isinstance(end, int | float) or isinstance(end, bool) or not end > 0:
        problems.add("t_end", f"must be a number > 0, got {end!r}.")
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
        parameters=parameters,
        constraint=constraint,
        name=str(spec.get("name", path.stem)),
    )
    return Adapter(path, system, method, float(end), outputs)


def _flattened(edge: object) -> object:
    """An edge whose reset's dotted keys TOML nested, flattened."""
    if not isinstance(edge, Mapping) or not isinstance(edge.get("reset"), Mapping):
        return edge
    return {**edge, "reset": flatten(edge["reset"])}


def _constraint(path, table, flow, known, parameters, problems):
    """The [constraint]: on named variables, or with `forces` a Contact between
    bodies (`coupled_contact`); a gap expression, `coordinate` or `mass`
    without `forces` take the projection route (`_projected`)."""
    if table is None:
        return None
    if not isinstance(table, Mapping) or "forces" not in table:
        spec = table if isinstance(table, Mapping) else {}
        gap = spec.get("gap")
        if PROJECTION_KEYS & set(spec) or (isinstance(gap, str) and gap not in known):
            return _projected(path, table, flow, known, parameters, problems)
        names = known - {"t"}  # the time is no gap, nor a gap's rate
        fields = constraint_fields(table, parameters, problems, known=names)
        if fields is None:
            return None
        return problems.check("constraint", UnilateralConstraint, *fields)
    fields = constraint_fields(table, parameters, problems, extra_keys={"forces"})
    parsed = zip(
        ("gap", "velocity"), parse_constraint(table, known, problems), strict=True
    )
    gap, velocity = (
        state_function(e, flow, parameters, f"{path}: [constraint.{key}]") if e else e
        for key, e in parsed
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


def _projected(path, table, flow, known, parameters, problems):
    """A [constraint] completed by projection along its `coordinate` (else the
    state its gap moves), for bodies whose force inputs connections drive."""
    fields = constraint_fields(table, parameters, problems, extra_keys=PROJECTION_KEYS)
    gap, velocity = parse_constraint(table, known, problems)
    if fields is None or gap is None or velocity is None:
        return None
    lacking = (
        "no `forces` are given (each body's free force input). Add "
        '`forces = ["<body>.<its input>", ...]` if the bodies have them'
    )
    return projected_constraint(
        flow, gap, velocity, fields[2], table, lacking, parameters, problems, str(path)
    )


def _is_forces(forces) -> bool:
    """A list of input names, or a table of name = number."""
    if isinstance(forces, list):
        return all(isinstance(f, str) for f in forces)
    return isinstance(forces, Mapping) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in forces.values()
    )
