"""SSP archives (1.0, 2.0): an SSD and its FMUs, read into a coupled flow.

Nested systems are flattened (component `plant` of system `stage` in `drive`
becomes `drive_stage_plant`); connections through system connectors resolve to
one source and its inputs, with one unit along each signal; ParameterBindings
(inline or .ssv, an outer system's winning) set parameters. Whatever else would
change the system's meaning is refused with an error naming it (docs/coupled.md
lists the subset).

References
----------
Modelica Association, System Structure and Parameterization 2.0, Sec. 3, 5, 6.
"""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

from ..core import limits
from ..core.archives import extract_member, open_checked, read_member
from ..core.errors import AdapterError, FmibridgeError
from ..core.system import Experiment, HybridSystem, Mode
from ..core.units import BASE_UNITS, Definitions, UnitDefinition, described, same_unit
from ..flows.cosim_master import Communication
from ..flows.coupled import CoupledModelExchange, couple
from ..flows.coupling import Connection
from ..flows.fmu import INTERFACE_NAMES, interface_type, open_fmu
from ..flows.fmu_archive import FmuArchive

SSP1 = "http://ssp-standard.org/SSP1/"
NS = {
    "ssd": SSP1 + "SystemStructureDescription",
    "ssc": SSP1 + "SystemStructureCommon",
    "ssv": SSP1 + "SystemStructureParameterValues",
}
SSD_ENTRY = "SystemStructure.ssd"
TIMES = ("startTime", "stopTime")  # the DefaultExperiment's
VERSIONS = ("1.0", "2.0")
FMU_TYPE = "application/x-fmu-sharedlibrary"
IMPLEMENTATIONS = {"any": None, "ModelExchange": "me", "CoSimulation": "cs"}
REAL_TAGS = ("Real", "Float64", "Float32")
INTEGER_TAGS = ("Integer", *(f"{u}Int{n}" for n in (8, 16, 32, 64) for u in ("", "U")))
Bound = tuple[float, str | None]  # a parameter's value, and its unit where given
UNSUPPORTED = {  # element under a System -> what it would have meant
    "ssd:Elements/ssd:SignalDictionaryReference": "signal dictionary references",
    "ssd:SignalDictionaries": "signal dictionaries",
}


class SspError(AdapterError):
    """An SSP archive is malformed or uses what fmibridge does not support."""


@dataclass(frozen=True)
class SspComponent:
    """One FMU of the system: its archive entry, connectors and parameters."""

    name: str  # flattened: the names of the systems around it, then its own
    source: str
    implementation: str | None  # "me", "cs" or None (any)
    connectors: Mapping[str, tuple[str, str | None]]  # name -> (kind, unit)
    parameters: dict[str, float] = field(default_factory=dict)
    system: str = ""  # the system it is an element of, `root.sub.subsub`
    units: dict[str, str | None] = field(default_factory=dict)  # of `parameters`

    def bind(self, name: str, bound: Bound) -> None:
        """Set parameter `name` to a (value, unit) of a ParameterBinding."""
        self.parameters[name], self.units[name] = bound


@dataclass(frozen=True)
class SystemStructure:
    """What fmibridge reads from a SystemStructure.ssd, nested systems flattened."""

    name: str
    version: str
    components: tuple[SspComponent, ...]
    connections: tuple[tuple[str, str], ...]  # `component.connector` pairs
    start_time: float = 0.0
    stop_time: float | None = None
    systems: tuple[str, ...] = ()  # every system, `root.sub.subsub`, outer first
    units: Definitions = field(default_factory=dict)  # the SSD's Units, by name


def read_ssd(root: ET.Element, where: str) -> SystemStructure:
    """Read the subset of a parsed SSD (module docstring); errors name `where`."""
    if root.tag != f"{{{NS['ssd']}}}SystemStructureDescription":
        raise SspError(
            f"{where}: the root element must be ssd:SystemStructureDescription "
            f"(namespace {NS['ssd']}), got {root.tag!r}."
        )
    version = root.get("version")
    if version not in VERSIONS:
        raise SspError(f"{where}: SSP version {version!r}; fmibridge reads {VERSIONS}.")
    system = root.find("ssd:System", NS)
    if system is None:
        raise SspError(f"{where}: no ssd:System element.")
    units = _units(root, where)
    flat = _Flat(where, units)
    flat.add_system(system, (system.get("name", ""),))
    if not flat.components:
        raise SspError(f"{where}: the system has no ssd:Component, no FMU to run.")
    experiment = root.find("ssd:DefaultExperiment", NS)
    times = {} if experiment is None else experiment.attrib
    try:
        start, stop = (float(times[k]) if k in times else None for k in TIMES)
    except ValueError:
        raise SspError(f"{where}: DefaultExperiment times must be numbers.") from None
    return SystemStructure(
        root.get("name", ""),
        version,
        tuple(flat.components),
        tuple(flat.signals()),
        start or 0.0,
        stop,
        tuple(".".join(path) for path in flat.elements),
        units,
    )


def _units(root: ET.Element, where: str) -> dict[str, UnitDefinition]:
    """The SSD's ssd:Units by name (one without ssc:BaseUnit stays undefined)."""
    units = {}
    for unit in root.findall("ssd:Units/ssc:Unit", NS):
        name, base = unit.get("name", ""), unit.find("ssc:BaseUnit", NS)
        if base is None:
            continue
        try:
            units[name] = UnitDefinition(
                tuple(int(base.get(b, "0")) for b in BASE_UNITS),
                float(base.get("factor", "1")),
                float(base.get("offset", "0")),
            )
        except ValueError:
            raise SspError(
                f"{where}: unit {name!r}: its BaseUnit exponents must be integers "
                f"and its factor and offset numbers, got {dict(base.attrib)}."
            ) from None
    return units


_CONNECTIONS = "ssd:Connections/ssd:Connection"
Node = tuple[str, tuple[str, ...], str]  # ("component", (name,), connector) or
# ("system", path of system names, connector)


class _BoundedBuilder(ET.TreeBuilder):
    """A TreeBuilder that refuses a DTD and elements deeper than MAX_XML_DEPTH."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self._depth = 0

    def doctype(self, name: str, pubid: str | None, system: str | None) -> None:
        raise SspError(
            f"{self.where}: has a DTD (<!DOCTYPE {name} ...>); SSP files are plain "
            f"XML without one (its entities could expand without bound)."
        )

    def start(self, tag, attrs) -> ET.Element:
        self._depth += 1
        if self._depth > limits.MAX_XML_DEPTH:
            raise SspError(
                f"{self.where}: elements nest more than {limits.MAX_XML_DEPTH} "
                f"levels deep (at {tag.rpartition('}')[2]} "
                f"{attrs.get('name', '')!r}); flatten the nested systems."
            )
        return super().start(tag, attrs)

    def end(self, tag) -> ET.Element:
        self._depth -= 1
        return super().end(tag)


def parse_xml(text: str | bytes, where: str) -> ET.Element:
    """Parse an SSD or .ssv file: one SspError for malformed XML or a DTD."""
    parser = ET.XMLParser(target=_BoundedBuilder(where))
    try:
        parser.feed(text)
        return parser.close()
    except ET.ParseError as exc:
        raise SspError(f"{where}: not valid XML: {exc}.") from None


class _Flat:
    """The components, systems and connections of an SSD, nested systems flattened."""

    def __init__(self, where: str, units: Definitions) -> None:
        self.where, self.units = where, units
        self.components: list[SspComponent] = []
        self.elements: dict[tuple[str, ...], dict[str, SspComponent | tuple]] = {}
        self.kinds: dict[Node, tuple[str, str | None]] = {}  # connector: kind, unit
        self.links: list[tuple[Node, Node]] = []

    def add_system(self, system: ET.Element, path: tuple[str, ...]) -> None:
        """Add a system's elements, connectors, connections and bindings."""
        where = f"{self.where}: system {'.'.join(path)!r}"
        _refuse_unsupported(system, where)
        elements = self.elements[path] = {}
        prefix = "".join(f"{name}_" for name in path[1:])
        for element in system.findall("ssd:Elements/*", NS):
            tag, name = element.tag.rpartition("}")[2], element.get("name", "")
            if tag == "System":
                elements[name] = (*path, name)
                self.add_system(element, (*path, name))
            elif tag == "Component":
                component = _component(element, where, prefix, ".".join(path))
                elements[name] = component
                self._add_component(component)
        for connector in system.findall("ssd:Connectors/ssd:Connector", NS):
            node = ("system", path, connector.get("name", ""))
            self.kinds[node] = (connector.get("kind", ""), _unit(connector))
        for connection in system.findall(_CONNECTIONS, NS):
            ends = [self._node(connection, which, path) for which in ("start", "end")]
            self.links.append((ends[0], ends[1]))
        for binding in system.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
            for name, value in _binding(binding, where).items():
                self._bind(path, name, value)

    def _add_component(self, component: SspComponent) -> None:
        if any(c.name == component.name for c in self.components):
            raise SspError(
                f"{self.where}: two components flatten to the name "
                f"{component.name!r}; rename one of them."
            )
        self.components.append(component)
        for connector, kind_unit in component.connectors.items():
            self.kinds[("component", (component.name,), connector)] = kind_unit

    def _node(self, connection: ET.Element, which: str, path) -> Node:
        """The connector an end of a connection names, in the system at `path`."""
        element = connection.get(f"{which}Element")
        connector = connection.get(f"{which}Connector", "")
        target = path if element is None else self.elements[path].get(element)
        if target is None:
            raise SspError(
                f"{self.where}: system {'.'.join(path)!r}: a connection names "
                f"element {element!r}; its elements are "
                f"{sorted(self.elements[path])}."
            )
        node: Node = (
            ("component", (target.name,), connector)
            if isinstance(target, SspComponent)
            else ("system", target, connector)
        )
        if node[0] == "system" and node not in self.kinds:
            raise SspError(
                f"{self.where}: a connection in system {'.'.join(path)!r} uses "
                f"connector {connector!r} of system {'.'.join(node[1])!r}, which "
                f"that system does not declare."
            )
        return node

    def _bind(self, path: tuple[str, ...], name: str, value: Bound) -> None:
        """Set `name` on its component; others are ignored (SSP 2.0, 5.3.3)."""
        head, dot, rest = name.partition(".")
        target = self.elements[path].get(head) if dot else None
        if isinstance(target, SspComponent):
            target.bind(rest, value)
        elif isinstance(target, tuple):
            self._bind(target, rest, value)

    def signals(self) -> list[tuple[str, str]]:
        """The connections as `component.connector` pairs, from one source each."""
        direct = [(a, b) for a, b in self.links if a[0] == b[0] == "component"]
        signals = [(_name(a), _name(b)) for a, b in direct]
        for group in _groups([link for link in self.links if link not in direct]):
            ends = [n for n in group if n[0] == "component"]
            sources = [n for n in ends if self.kinds.get(n, ("",))[0] != "input"]
            if len(sources) > 1:
                raise SspError(
                    f"{self.where}: {_name(sources[0])} and {_name(sources[1])} "
                    f"are joined into one signal through system connectors; a "
                    f"signal has one source (an output)."
                )
            self._check_units(group)
            signals += [
                (_name(sources[0]), _name(n))
                for n in ends
                if sources and n != sources[0]
            ]
        return signals

    def _check_units(self, group: list[Node]) -> None:
        """The units declared along one signal must be one unit (`same_unit`)."""
        declared = [(n, u) for n in group if (u := self.kinds.get(n, ("", None))[1])]
        for node, unit in declared[1:]:
            first, first_unit = declared[0]
            if other := _other_unit(first_unit, unit, self.units, self.units):
                raise SspError(
                    f"{self.where}: unit mismatch along one signal, {_name(first)} "
                    f"is in {first_unit!r} and {_name(node)} in {other}."
                )


def _other_unit(unit, own, units: Definitions, fmu_units: Definitions) -> str:
    """'' where `unit` is `own` (or one is not given), else `own` and why it is not."""
    if not (unit and own) or same_unit(unit, own, units, fmu_units):
        return ""
    return f"{own!r}{described(unit, own, units, fmu_units)}"


def _groups(links: list[tuple[Node, Node]]) -> list[list[Node]]:
    """The connected groups of connectors, in the order links first name them."""
    group_of: dict[Node, list[Node]] = {}
    for a, b in links:
        group_a, group_b = group_of.setdefault(a, [a]), group_of.setdefault(b, [b])
        if group_a is not group_b:
            group_a.extend(group_b)
            group_of.update(dict.fromkeys(group_b, group_a))
    return list({id(group): group for group in group_of.values()}.values())


def _name(node: Node) -> str:
    kind, path, connector = node
    where = path[0] if kind == "component" else f"system {'.'.join(path)}"
    return f"{where}.{connector}"


def _refuse_unsupported(system: ET.Element, where: str) -> None:
    for path, meaning in UNSUPPORTED.items():
        if system.find(path, NS) is not None:
            raise SspError(
                f"{where}: {meaning} are not supported; connect the connectors "
                f"directly."
            )
    geometry = f"{{{NS['ssd']}}}ConnectionGeometry"
    for connection in system.findall(_CONNECTIONS, NS):
        if any(child.tag != geometry for child in connection):
            raise SspError(
                f"{where}: the connection from {_end(connection, 'start')} to "
                f"{_end(connection, 'end')} has a transformation, which is not "
                f"supported."
            )


def _end(connection: ET.Element, which: str) -> str:
    element = connection.get(f"{which}Element")
    connector = connection.get(f"{which}Connector")
    return f"{element}.{connector}" if element else f"system connector {connector!r}"


def _component(
    element: ET.Element, where: str, prefix: str, system: str
) -> SspComponent:
    """A component element, named `prefix` + its name (flattened)."""
    name = element.get("name", "")
    kind = element.get("type", FMU_TYPE)
    if kind != FMU_TYPE:
        raise SspError(
            f"{where}: component {name!r} has type {kind!r}; fmibridge runs FMUs "
            f"({FMU_TYPE})."
        )
    source = element.get("source")
    if source is None:
        raise SspError(f"{where}: component {name!r} has no source (no FMU).")
    implementation = element.get("implementation", "any")
    if implementation not in IMPLEMENTATIONS:
        raise SspError(
            f"{where}: component {name!r} asks for implementation "
            f"{implementation!r}; fmibridge offers {sorted(IMPLEMENTATIONS)}."
        )
    connectors = {
        c.get("name", ""): (c.get("kind", ""), _unit(c))
        for c in element.findall("ssd:Connectors/ssd:Connector", NS)
    }
    component = SspComponent(
        prefix + name, source, IMPLEMENTATIONS[implementation], connectors, {}, system
    )
    for binding in element.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        for key, bound in _binding(binding, f"{where}: component {name!r}").items():
            component.bind(key, bound)
    return component


def _unit(connector: ET.Element) -> str | None:
    typed = (connector.find(f"ssc:{tag}", NS) for tag in REAL_TAGS)
    return next((t.get("unit") for t in typed if t is not None), None)


def _binding(binding: ET.Element, where: str) -> dict[str, Bound]:
    """The values of one inline ParameterBinding, with its prefix."""
    if binding.find("ssd:ParameterMapping", NS) is not None:
        raise SspError(f"{where}: parameter mappings are not supported.")
    if binding.get("source") is not None:
        raise SspError(
            f"{where}: parameter binding source {binding.get('source')!r} could "
            f"not be read; give the values inline or as an .ssv in the archive."
        )
    parameter_set = binding.find("ssd:ParameterValues/ssv:ParameterSet", NS)
    if parameter_set is None:
        return {}
    prefix = binding.get("prefix", "")
    return {prefix + k: v for k, v in parameter_values(parameter_set, where).items()}


def parameter_values(parameter_set: ET.Element, where: str) -> dict[str, Bound]:
    """Return {name: (value, unit)} of an ssv:ParameterSet (numbers and Booleans;
    the unit None where not given)."""
    values = {}
    for parameter in parameter_set.findall("ssv:Parameters/ssv:Parameter", NS):
        name = parameter.get("name", "")
        typed = next(iter(parameter), None)
        tag = "" if typed is None else typed.tag.rpartition("}")[2]
        text = "" if typed is None else typed.get("value", "")
        unit = None if typed is None else typed.get("unit")
        try:
            if tag in REAL_TAGS or tag in INTEGER_TAGS:
                values[name] = (float(text), unit)
            elif tag == "Boolean" and text in ("true", "false", "1", "0"):
                values[name] = (float(text in ("true", "1")), None)
            else:
                raise ValueError
        except ValueError:
            raise SspError(
                f"{where}: parameter {name!r} has type {tag or 'none'} and value "
                f"{text!r}; fmibridge sets numbers and Booleans."
            ) from None
    return values


def read_ssp(path: str | Path) -> SystemStructure:
    """Read an .ssp archive's SystemStructure.ssd, with its .ssv files inlined;
    an SspError names what is missing, malformed or unsupported."""
    path = Path(path)
    with _archive(path) as archive:
        return _structure(archive, path)


def _structure(archive: zipfile.ZipFile, path: Path) -> SystemStructure:
    """The structure of the open archive `path` (`read_ssp`)."""
    names = set(archive.namelist())
    if SSD_ENTRY not in names:
        raise SspError(f"{path}: no {SSD_ENTRY} at the archive's root.")
    where = f"{path}!{SSD_ENTRY}"
    root = parse_xml(read_member(archive, SSD_ENTRY, limits.MAX_XML_BYTES, path), where)
    _inline_ssv(archive, root, path)
    structure = read_ssd(root, where)
    for component in structure.components:
        if _entry(component.source, path, component.name) not in names:
            raise SspError(
                f"{path}: component {component.name!r} references "
                f"{component.source}, which is not in the archive."
            )
    return structure


@contextlib.contextmanager
def _archive(path: Path) -> Iterator[zipfile.ZipFile]:
    """The archive, open; an FmibridgeError of reading it becomes an SspError."""
    try:
        with open_checked(path, "SSP") as archive:
            yield archive
    except SspError:
        raise
    except FmibridgeError as exc:
        raise SspError(str(exc)) from None


def _entry(source: str, path: Path, component: str) -> str:
    """The archive entry of a relative URI, refusing absolute and '..' paths."""
    entry = posixpath.normpath(source)
    if "://" in source or entry.startswith(("/", "..")) or source.startswith("/"):
        raise SspError(
            f"{path}: component {component!r} has source {source!r}; fmibridge "
            f"reads relative URIs inside the archive (resources/...)."
        )
    return entry


def _inline_ssv(archive: zipfile.ZipFile, root: ET.Element, path: Path) -> None:
    """Replace each ParameterBinding source (an .ssv in the archive) by its values."""
    for binding in root.iter(f"{{{NS['ssd']}}}ParameterBinding"):
        source = binding.get("source")
        if source is None:
            continue
        entry = _entry(source, path, "parameter binding")
        if entry not in archive.namelist():
            raise SspError(f"{path}: parameter binding source {source!r} is missing.")
        del binding.attrib["source"]
        values = ET.SubElement(binding, f"{{{NS['ssd']}}}ParameterValues")
        text = read_member(archive, entry, limits.MAX_XML_BYTES, path)
        values.append(parse_xml(text, f"{path}!{entry}"))


def open_ssp(
    path: str | Path,
    *,
    interface: str | None = None,
    communication: Communication | None = None,
):
    """Open the FMUs of an .ssp and couple them; return (flow, structure).

    `interface` ('me' or 'cs', default Model Exchange where offered) applies to
    every component, and is refused where the SSD asks for the other
    `implementation`; `communication` configures the co-simulation master.
    """
    path = Path(path)
    with _unpacked(path, interface) as (structure, fmus):
        with contextlib.ExitStack() as opened:  # closes them on an error
            flows = {}
            for c in structure.components:
                flow = _open(fmus[c.name], c, interface, path, structure.units)
                flows[c.name] = opened.enter_context(flow)
            connections = _directed(structure, path)
            opened.pop_all()
        try:
            flow = couple(
                flows,
                connections,
                communication=communication,
                t0=structure.start_time,
                units=structure.units,
            )
        except AdapterError:
            raise
        except FmibridgeError as exc:
            raise SspError(f"{path}: {exc}") from None
    return flow, structure


@contextlib.contextmanager
def ssp_fmus(path: str | Path) -> Iterator[tuple[SystemStructure, dict]]:
    """Yield an .ssp's structure and {component: FmuArchive} (`fmibridge info`)."""
    with _unpacked(Path(path)) as (structure, fmus):
        yield structure, {name: FmuArchive(fmu) for name, fmu in fmus.items()}


@contextlib.contextmanager
def _unpacked(
    path: Path, interface: str | None = None
) -> Iterator[tuple[SystemStructure, dict[str, Path]]]:
    """Yield the structure (`interface` checked) and {component: its FMU, copied}."""
    try:
        wanted = None if interface is None else interface_type(interface)
    except FmibridgeError as exc:  # an SspError, as every problem of an SSP run
        raise SspError(f"{path}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="fmibridge_ssp_") as tmp:
        with _archive(path) as archive:
            structure = _structure(archive, path)
            for c in structure.components:
                chosen = INTERFACE_NAMES.get(c.implementation or "")
                if wanted and chosen and chosen != wanted:
                    raise SspError(
                        f"{path}: interface {interface!r} ({wanted}): component "
                        f"{c.name!r} has implementation {chosen!r} in the SSD; drop "
                        f"the interface or change the SSD."
                    )
            fmus = {}
            for c in structure.components:
                entry = _entry(c.source, path, c.name)
                fmus[c.name] = extract_member(archive, entry, Path(tmp, entry), path)
        yield structure, fmus


def _open(
    fmu: Path,
    component: SspComponent,
    interface: str | None,
    path: Path,
    units: Definitions,
):
    """Open a component's FMU and check its connectors against its variables."""
    chosen = component.implementation or interface
    try:
        archive = FmuArchive(fmu)  # SSP 5.3.3: names it does not declare are ignored
        fmu_units = {**units, **archive.unit_definitions}  # the FMU's first
        bound = component.parameters.items()
        parameters = {k: v for k, v in bound if k in archive.variables}
        for name in parameters:  # fmibridge sets values as given: 1000 in mm is 1000 m
            unit, own = component.units.get(name), archive.variables[name].unit
            if other := _other_unit(unit, own, units, fmu_units):
                raise FmibridgeError(
                    f"parameter {name!r} is given in {unit!r} but the FMU's variable "
                    f"is in {other}; fmibridge does not convert units: give the "
                    f"value in {own!r}."
                )
        flow = open_fmu(archive, chosen, parameters=parameters)
    except FmibridgeError as exc:  # named as the archive's member, not the copy
        message = str(exc).replace(str(fmu), f"{path}!{component.source}")
        raise SspError(f"{path}: component {component.name!r}: {message}") from None
    variables = flow.archive.variables
    for name, (kind, unit) in component.connectors.items():
        problem = None
        if name not in variables:
            problem = f"is not a variable of {component.source}"
        elif kind != variables[name].causality:
            problem = (
                f"has kind {kind!r} but the FMU's variable has causality "
                f"{variables[name].causality!r}"
            )
        elif other := _other_unit(unit, variables[name].unit, units, fmu_units):
            problem = f"has unit {unit!r} but the FMU's variable {other}"
        if problem:
            flow.close()
            raise SspError(
                f"{path}: component {component.name!r}: connector {name!r} {problem}."
            )
    return flow


def _directed(structure: SystemStructure, path: Path) -> list[Connection]:
    """Each connection from its output end to its input end."""
    kinds = {
        f"{c.name}.{name}": kind
        for c in structure.components
        for name, (kind, _) in c.connectors.items()
    }
    for start, end in structure.connections:
        for name in (start, end):
            if name not in kinds:
                component, _, connector = name.partition(".")
                raise SspError(
                    f"{path}: the connection {start} - {end} uses connector "
                    f"{connector!r}, which component {component!r} does not declare."
                )
    return [
        Connection(b, a) if kinds[a] == "input" else Connection(a, b)
        for a, b in structure.connections
    ]


def ssp_system(
    path: str | Path,
    *,
    interface: str | None = None,
    communication: Communication | None = None,
    outputs: Sequence[str] | None = None,
) -> HybridSystem:
    """Return an .ssp as a one-mode HybridSystem; its edges are the Model
    Exchange FMUs' event indicators, its `outputs` (default: every connector that
    is not a state) are recorded."""
    flow, structure = open_ssp(path, interface=interface, communication=communication)
    if outputs is None:
        connectors = [
            f"{c.name}.{n}" for c in structure.components for n in c.connectors
        ]
        outputs = [n for n in connectors if n not in flow.state_names]
    try:
        flow.record(outputs)
    except FmibridgeError as exc:
        flow.close()
        raise SspError(f"{path}: {exc}") from None
    edges = flow.event_edges("model") if isinstance(flow, CoupledModelExchange) else ()
    return HybridSystem(
        [Mode("model", flow, edges)],
        "model",
        flow.x0,
        t0=structure.start_time,
        name=structure.name or Path(path).stem,
        experiment=Experiment(structure.start_time, structure.stop_time),
    )


def pack_ssp(ssd: str | Path, fmu_dir: str | Path, out: str | Path) -> Path:
    """Write an .ssp of the SSD and the FMUs (`fmu_dir`/NAME.fmu) it references.

    Entries are sorted and dated 1980-01-01, so packing is reproducible; an
    identical archive is left alone, a new one replaces it atomically.
    """
    ssd, fmu_dir, out = Path(ssd), Path(fmu_dir), Path(out)
    entries = {SSD_ENTRY: ssd.read_bytes()}
    root = parse_xml(entries[SSD_ENTRY], str(ssd))
    for component in root.iter(f"{{{NS['ssd']}}}Component"):  # nested systems too
        name = component.get("name", "")
        entry = _entry(component.get("source", ""), ssd, name)
        fmu = fmu_dir / posixpath.basename(entry)
        if not fmu.is_file():
            raise SspError(
                f"{ssd}: component {name!r} needs {fmu}; build the FMUs "
                f"(`python fmus/build.py` in a clone)."
            )
        entries[entry] = fmu.read_bytes()
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):  # a ZipInfo is dated 1980-01-01
            archive.writestr(zipfile.ZipInfo(name), entries[name], zipfile.ZIP_DEFLATED)
    if not (out.is_file() and out.read_bytes() == packed.getvalue()):
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, delete=False) as tmp:
            tmp.write(packed.getvalue())
        os.replace(tmp.name, out)
    return out
