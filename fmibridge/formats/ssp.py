"""SSP archives: the structure of a coupled system, read into `flows.coupled.couple`.

An SSP (System Structure and Parameterization, 1.0 or 2.0) is a zip archive
with a SystemStructure.ssd and, under resources/, the FMUs it references.
fmibridge reads this subset of it:

* the root System's Elements: Components of type application/x-fmu-sharedlibrary
  whose source is a relative URI inside the archive, with an optional
  `implementation` (any, ModelExchange, CoSimulation);
* each component's Connectors (name, kind, Real/Float64 type and unit), checked
  against the FMU's variables;
* Connections between connectors of two components (the data flows from the
  output to the input, whichever end the SSD names first);
* ParameterBindings with inline ParameterValues or an .ssv file in the
  archive (Real, Float64, Float32, integer and Boolean values, optional prefix),
  on components and on the root system (names `component.variable`; a system
  binding wins over a component's);
* the DefaultExperiment's startTime and stopTime.

Anything else that changes the system's meaning (nested systems, system
connectors, signal dictionaries, parameter mappings, connection
transformations) is refused with an error that names it, never ignored, as
are a system without components, two components of one name, XML with a
DTD, and archive members beyond the limits of `core.limits` (checked before
anything is read or unpacked; errors name ``file.ssp!member``).

References
----------
Modelica Association, System Structure and Parameterization 2.0, Sec. 3
(packaging), 5 (SSD: Component, Connector, Connection, ParameterBindings),
6 (SSV).
"""

from __future__ import annotations

import io
import os
import posixpath
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

from ..core import limits
from ..core.archives import checked_members, extract_member, read_member
from ..core.errors import AdapterError, FmibridgeError
from ..core.system import Experiment, HybridSystem, Mode
from ..flows.cosim_master import Communication
from ..flows.coupled import CoupledModelExchange, couple
from ..flows.coupling import Connection
from ..flows.fmu import INTERFACE_NAMES, open_fmu
from ..flows.fmu_archive import FmuArchive

SSP1 = "http://ssp-standard.org/SSP1/"
NS = {
    "ssd": SSP1 + "SystemStructureDescription",
    "ssc": SSP1 + "SystemStructureCommon",
    "ssv": SSP1 + "SystemStructureParameterValues",
}
SSD_ENTRY = "SystemStructure.ssd"
VERSIONS = ("1.0", "2.0")
FMU_TYPE = "application/x-fmu-sharedlibrary"
IMPLEMENTATIONS = {"any": None, "ModelExchange": "me", "CoSimulation": "cs"}
REAL_TAGS = ("Real", "Float64", "Float32")
INTEGER_TAGS = ("Integer", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32")
INTEGER_TAGS += ("Int64", "UInt64")
UNSUPPORTED = {  # element under a System -> what it would have meant
    "ssd:Elements/ssd:System": "nested systems",
    "ssd:Elements/ssd:SignalDictionaryReference": "signal dictionary references",
    "ssd:SignalDictionaries": "signal dictionaries",
}


class SspError(AdapterError):
    """An SSP archive is malformed or uses what fmibridge does not support."""


@dataclass(frozen=True)
class SspComponent:
    """One FMU of the system: its archive entry, connectors and parameters."""

    name: str
    source: str
    implementation: str | None  # "me", "cs" or None (any)
    connectors: Mapping[str, tuple[str, str | None]]  # name -> (kind, unit)
    parameters: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemStructure:
    """What fmibridge reads from a SystemStructure.ssd."""

    name: str
    version: str
    components: tuple[SspComponent, ...]
    connections: tuple[tuple[str, str], ...]  # `component.connector` pairs
    start_time: float = 0.0
    stop_time: float | None = None


def read_ssd(text: str | bytes, where: str) -> SystemStructure:
    """Read the subset of an SSD described in the module docstring.

    Parameters
    ----------
    text : str or bytes
        The SSD's XML.
    where : str
        The file, for error messages.

    Raises
    ------
    SspError
        Naming the file, the element and what is wrong or unsupported.
    """
    root = parse_xml(text, where)
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
    _refuse_unsupported(system, where)
    components = [_component(e, where) for e in system.findall(_path("Component"), NS)]
    names = [c.name for c in components]
    if not names:
        raise SspError(f"{where}: the system has no ssd:Component, no FMU to run.")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SspError(
            f"{where}: component name(s) {twice} used twice; each component needs a "
            f"name of its own."
        )
    _apply_system_bindings(system, components, where)
    experiment = root.find("ssd:DefaultExperiment", NS)
    start, stop = (None, None) if experiment is None else _times(experiment, where)
    return SystemStructure(
        root.get("name", ""),
        version,
        tuple(components),
        tuple(_connection(c, where) for c in system.findall(_CONNECTIONS, NS)),
        start or 0.0,
        stop,
    )


_CONNECTIONS = "ssd:Connections/ssd:Connection"


class _NoDoctype(ET.TreeBuilder):
    """An ElementTree builder that refuses a DTD before its entities expand."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where

    def doctype(self, name: str, pubid: str | None, system: str | None) -> None:
        raise SspError(
            f"{self.where}: has a DTD (<!DOCTYPE {name} ...>); SSP files are plain "
            f"XML without one (its entities could expand without bound)."
        )


def parse_xml(text: str | bytes, where: str) -> ET.Element:
    """Parse an SSD or .ssv file: one SspError for XML that is malformed or has
    a DTD."""
    parser = ET.XMLParser(target=_NoDoctype(where))
    try:
        parser.feed(text)
        return parser.close()
    except ET.ParseError as exc:
        raise SspError(f"{where}: not valid XML: {exc}.") from None


def _path(tag: str) -> str:
    return f"ssd:Elements/ssd:{tag}"


def _refuse_unsupported(system: ET.Element, where: str) -> None:
    for path, meaning in UNSUPPORTED.items():
        if system.find(path, NS) is not None:
            raise SspError(f"{where}: {meaning} are not supported; flatten the system.")
    for connection in system.findall(_CONNECTIONS, NS):
        if len(connection.findall("*")) > len(
            connection.findall("ssd:ConnectionGeometry", NS)
        ):
            raise SspError(
                f"{where}: the connection from {_end(connection, 'start')} to "
                f"{_end(connection, 'end')} has a transformation, which is not "
                f"supported."
            )


def _end(connection: ET.Element, which: str) -> str:
    element = connection.get(f"{which}Element")
    connector = connection.get(f"{which}Connector")
    return f"{element}.{connector}" if element else f"system connector {connector!r}"


def _component(element: ET.Element, where: str) -> SspComponent:
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
        c.get("name"): (c.get("kind"), _unit(c))
        for c in element.findall("ssd:Connectors/ssd:Connector", NS)
    }
    parameters: dict[str, float] = {}
    for binding in element.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        parameters.update(_binding(binding, f"{where}: component {name!r}"))
    return SspComponent(
        name, source, IMPLEMENTATIONS[implementation], connectors, parameters
    )


def _unit(connector: ET.Element) -> str | None:
    for tag in REAL_TAGS:
        typed = connector.find(f"ssc:{tag}", NS)
        if typed is not None:
            return typed.get("unit")
    return None


def _binding(binding: ET.Element, where: str) -> dict[str, float]:
    """The values of one ParameterBinding (inline; .ssv files are inlined by
    `read_ssp` before this runs), with its prefix."""
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


def parameter_values(parameter_set: ET.Element, where: str) -> dict[str, float]:
    """Return {name: value} of an ssv:ParameterSet (numbers and Booleans)."""
    values = {}
    for parameter in parameter_set.findall("ssv:Parameters/ssv:Parameter", NS):
        name = parameter.get("name", "")
        typed = next(iter(parameter), None)
        tag = "" if typed is None else typed.tag.rpartition("}")[2]
        text = "" if typed is None else typed.get("value", "")
        try:
            if tag in REAL_TAGS or tag in INTEGER_TAGS:
                values[name] = float(text)
            elif tag == "Boolean" and text in ("true", "false", "1", "0"):
                values[name] = float(text in ("true", "1"))
            else:
                raise ValueError
        except ValueError:
            raise SspError(
                f"{where}: parameter {name!r} has type {tag or 'none'} and value "
                f"{text!r}; fmibridge sets numbers and Booleans."
            ) from None
    return values


def _apply_system_bindings(system, components: list[SspComponent], where) -> None:
    """System-level bindings name `component.variable` and win (SSP 5.3.3)."""
    by_name = {c.name: c for c in components}
    for binding in system.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        for name, value in _binding(binding, f"{where}: system").items():
            component, dot, variable = name.partition(".")
            if dot and component in by_name:
                by_name[component].parameters[variable] = value


def _connection(element: ET.Element, where: str) -> tuple[str, str]:
    ends = []
    for which in ("start", "end"):
        component = element.get(f"{which}Element")
        if component is None:
            raise SspError(
                f"{where}: the connection {_end(element, 'start')} - "
                f"{_end(element, 'end')} uses a system connector; connect "
                f"components directly."
            )
        ends.append(f"{component}.{element.get(f'{which}Connector')}")
    return ends[0], ends[1]


def _times(experiment: ET.Element, where: str) -> tuple[float | None, float | None]:
    try:
        return tuple(
            None if experiment.get(k) is None else float(experiment.get(k))
            for k in ("startTime", "stopTime")
        )
    except ValueError:
        raise SspError(f"{where}: DefaultExperiment times must be numbers.") from None


# -- the archive -------------------------------------------------------------


def read_ssp(path: str | Path) -> SystemStructure:
    """Read an .ssp archive's SystemStructure.ssd, with its .ssv files inlined.

    Raises
    ------
    SspError
        If the file is no zip archive, has no SystemStructure.ssd, or its SSD
        is malformed or unsupported, or names an FMU the archive lacks.
    """
    path = Path(path)
    with _archive(path) as archive:
        names = set(archive.namelist())
        if SSD_ENTRY not in names:
            raise SspError(f"{path}: no {SSD_ENTRY} at the archive's root.")
        text = _inline_ssv(archive, _read(archive, SSD_ENTRY, path), path)
        structure = read_ssd(text, f"{path}!{SSD_ENTRY}")
        for component in structure.components:
            entry = _entry(component.source, path, component.name)
            if entry not in names:
                raise SspError(
                    f"{path}: component {component.name!r} references "
                    f"{component.source}, which is not in the archive."
                )
    return structure


def _archive(path: Path) -> zipfile.ZipFile:
    try:
        checked_members(path, "SSP")
        return zipfile.ZipFile(path)
    except FmibridgeError as exc:
        raise SspError(str(exc)) from None


def _read(archive: zipfile.ZipFile, entry: str, path: Path) -> bytes:
    """An XML member of the archive, within MAX_XML_BYTES."""
    try:
        return read_member(archive, entry, limits.MAX_XML_BYTES, path)
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


def _inline_ssv(archive: zipfile.ZipFile, text: bytes, path: Path) -> bytes:
    """Replace each ParameterBinding source (an .ssv in the archive) by its values."""
    root = parse_xml(text, f"{path}!{SSD_ENTRY}")
    for binding in root.iter(f"{{{NS['ssd']}}}ParameterBinding"):
        source = binding.get("source")
        if source is None:
            continue
        entry = _entry(source, path, "parameter binding")
        if entry not in archive.namelist():
            raise SspError(f"{path}: parameter binding source {source!r} is missing.")
        del binding.attrib["source"]
        values = ET.SubElement(binding, f"{{{NS['ssd']}}}ParameterValues")
        values.append(parse_xml(_read(archive, entry, path), f"{path}!{entry}"))
    return ET.tostring(root)


def open_ssp(
    path: str | Path,
    *,
    interface: str | None = None,
    communication: Communication | None = None,
):
    """Open the FMUs of an .ssp and couple them; return (flow, structure).

    Parameters
    ----------
    interface : {'me', 'cs'}, optional
        For components whose implementation is 'any' (default: Model
        Exchange where the FMU offers it).
    communication : Communication, optional
        The co-simulation master's options (Co-Simulation components).

    Raises
    ------
    SspError, FmibridgeError
        Naming the component and connector or variable.
    """
    path = Path(path)
    structure = read_ssp(path)
    with tempfile.TemporaryDirectory(prefix="fmibridge_ssp_") as tmp:
        with _archive(path) as archive:
            flows = {}
            try:
                for c in structure.components:
                    entry = _entry(c.source, path, c.name)
                    fmu = extract_member(archive, entry, Path(tmp, entry), path)
                    flows[c.name] = _open(fmu, c, interface, path)
                connections = _directed(structure, flows, path)
            except BaseException:
                for flow in flows.values():
                    flow.close()
                raise
        try:
            flow = couple(
                flows, connections, communication=communication, t0=structure.start_time
            )
        except AdapterError:
            raise
        except FmibridgeError as exc:
            raise SspError(f"{path}: {exc}") from None
    return flow, structure


def _open(fmu: Path, component: SspComponent, interface: str | None, path: Path):
    chosen = component.implementation or interface
    try:
        known = FmuArchive(fmu).variables  # SSP 5.3.3: other names are ignored
        parameters = {k: v for k, v in component.parameters.items() if k in known}
        flow = open_fmu(fmu, chosen, parameters=parameters)
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
        elif unit and variables[name].unit and unit != variables[name].unit:
            problem = (
                f"has unit {unit!r} but the FMU's variable {variables[name].unit!r}"
            )
        if problem:
            flow.close()
            raise SspError(
                f"{path}: component {component.name!r}: connector {name!r} {problem}."
            )
    return flow


def _directed(structure: SystemStructure, flows, path: Path) -> list[Connection]:
    """Each connection from its output end to its input end."""
    declared = {c.name: c.connectors for c in structure.components}
    connections = []
    for start, end in structure.connections:
        for end_name in (start, end):
            component, _, connector = end_name.partition(".")
            if component not in declared:
                raise SspError(
                    f"{path}: a connection names component {component!r}; the "
                    f"components are {sorted(declared)}."
                )
            if connector not in declared[component]:
                raise SspError(
                    f"{path}: the connection {start} - {end} uses connector "
                    f"{connector!r}, which component {component!r} does not declare."
                )
        start_kind = declared[start.partition(".")[0]][start.partition(".")[2]][0]
        connections.append(
            Connection(end, start) if start_kind == "input" else Connection(start, end)
        )
    return connections


def ssp_system(
    path: str | Path,
    *,
    interface: str | None = None,
    communication: Communication | None = None,
) -> HybridSystem:
    """Return an .ssp as a one-mode HybridSystem (its `experiment` from the
    SSD's DefaultExperiment).

    The Model Exchange FMUs' own event indicators are its edges (their own
    `when` clauses); there are no other guards, since SSP has no hybrid part
    (an adapter file adds it: `ssp = "..."`).
    """
    if interface is not None and interface not in INTERFACE_NAMES:
        raise SspError(f"`interface` must be 'me' or 'cs', got {interface!r}.")
    flow, structure = open_ssp(path, interface=interface, communication=communication)
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
    """Write an .ssp: the SSD as SystemStructure.ssd and the FMUs it references.

    Each component source resources/NAME.fmu is taken from `fmu_dir`/NAME.fmu.
    Entries are sorted and dated 1980-01-01, so packing twice gives the same
    bytes; an archive already holding them is left alone, and a new one
    replaces the old atomically (concurrent builds never see half of one).
    """
    ssd, fmu_dir, out = Path(ssd), Path(fmu_dir), Path(out)
    root = parse_xml(ssd.read_bytes(), str(ssd))
    entries = {SSD_ENTRY: ssd.read_bytes()}
    for component in root.iterfind(f"ssd:System/{_path('Component')}", NS):
        name = component.get("name", "")
        entry = _entry(component.get("source", ""), ssd, name)
        fmu = fmu_dir / posixpath.basename(entry)
        if not fmu.is_file():
            raise SspError(
                f"{ssd}: component {name!r} needs {fmu}; build the FMUs "
                f"(`fmibridge build-fmus`)."
            )
        entries[entry] = fmu.read_bytes()
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, entries[name])
    if not (out.is_file() and out.read_bytes() == packed.getvalue()):
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, delete=False) as tmp:
            tmp.write(packed.getvalue())
        os.replace(tmp.name, out)
    return out
