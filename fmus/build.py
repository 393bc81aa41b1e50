"""Build the FMUs in ``fmus/`` from their C sources with gcc.

The builder is part of the example FMUs' sources, not of the fmibridge package: it
sits beside the models it builds and builds that folder by default. Contributors run
it from a clone (``python fmus/build.py [--force] [MODEL ...]``); a wheel carries it
with the sources (``fmibridge/_examples/fmus``), and ``fmibridge examples DIR``
copies both into DIR and builds there. Python code loads it from a file path with
`fmibridge.examples.load_builder`, since ``fmus/`` is no package.

Each model directory ``fmus/<Model>/`` holds ``model.toml`` (the variable table, the
single source of truth for value references), ``<Model>.c`` (the equations) and
``<Model>.mo`` (the Modelica source). From the table this module generates both the
C header ``model_table.h`` and ``modelDescription.xml``, so the two cannot disagree.

Naming: ``<Model>.fmu`` is FMI 2.0 and ``<Model>_fmi3.fmu`` is FMI 3.0; both hold Model
Exchange and Co-Simulation. FMI 1.0 gives each interface its own FMU:
``<Model>_fmi1me.fmu`` (Model Exchange) and ``<Model>_fmi1cs.fmu`` (Co-Simulation).
A model with ``bare_cosimulation = true`` in its table is also built as
``<Model>_cs_bare.fmu`` and ``<Model>_fmi3_cs_bare.fmu``: Co-Simulation only, without
state saving (canGetAndSetFMUstate false) and refusing fmiReset, as tools often export.
Value references: 0 is ``time``, then the table's variables in file order, then
``cs_substep``, then ``der(<state>)`` in state order.
Builds are incremental (a SHA-256 of every input is kept beside each FMU) and
deterministic (fixed timestamps, sorted zip entries).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import tomllib
import warnings
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from fmibridge.core.errors import FmibridgeError
from fmibridge.formats.ssp import pack_ssp

__all__ = [
    "BuildError",
    "BuildWarning",
    "build_fmus",
    "build_systems",
    "c_header",
    "model_description",
    "read_table",
]

HERE = Path(__file__).resolve().parent  # the fmus/ folder this builder sits in
GENERATION_DATE = "2024-01-01T00:00:00Z"  # fixed, so that builds are reproducible
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip entry can carry
CS_SUBSTEP = 1e-4  # s; default RK4 substep of Co-Simulation, fine for these models
GCC_FLAGS = (
    "-shared",
    "-fPIC",
    "-O2",
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-fvisibility=hidden",
)
CORE_SOURCES = ("instance.c", "modes.c", "cosim.c", "snapshot.c")
KINDS = (
    "state",
    "parameter",
    "input",
    "output",
    "integer_parameter",
    "integer_input",
    "discrete",
)
KIND_PREFIX = {
    "state": "X",
    "parameter": "P",
    "input": "U",
    "output": "Y",
    "integer_parameter": "I",
    "integer_input": "I",
    "discrete": "D",
}
KIND_VK = {
    "state": "VK_STATE",
    "parameter": "VK_PARAM",
    "input": "VK_INPUT",
    "output": "VK_OUTPUT",
    "integer_parameter": "VK_INT_PARAM",
    "integer_input": "VK_INT_INPUT",
    "discrete": "VK_DISCRETE",
    "derivative": "VK_DERIVATIVE",
    "time": "VK_TIME",
}


@dataclass(frozen=True)
class Target:
    """One FMU the builder makes of every model."""

    version: int  # FMI major version
    layer: str  # the FMI layer's C file in fmus/common/
    platform: str  # binaries/<platform>/
    suffix: str  # the FMU is <Model><suffix>.fmu
    interface: str | None = None  # FMI 1.0: one interface per FMU; None: both
    defines: tuple[str, ...] = ()  # gcc -D flags besides MODEL_IDENTIFIER

    @property
    def bare(self) -> bool:
        """A CS-only FMU without state saving and fmiReset (`bare_cosimulation`)."""
        return BARE in self.defines


BARE = "BARE_COSIMULATION"
TARGETS = (
    Target(2, "fmi2.c", "linux64", ""),
    Target(3, "fmi3.c", "x86_64-linux", "_fmi3"),
    Target(1, "fmi1.c", "linux64", "_fmi1me", "ModelExchange"),
    Target(1, "fmi1.c", "linux64", "_fmi1cs", "CoSimulation", ("FMI1_COSIMULATION",)),
    Target(2, "fmi2.c", "linux64", "_cs_bare", "CoSimulation", (BARE,)),
    Target(3, "fmi3.c", "x86_64-linux", "_fmi3_cs_bare", "CoSimulation", (BARE,)),
)


class BuildError(FmibridgeError):
    """A model could not be built; the message names the model and the cause."""


class BuildWarning(UserWarning):
    """gcc printed warnings while compiling a model."""


@dataclass(frozen=True)
class Variable:
    """One row of a model's variable table, with its value reference."""

    name: str
    kind: str
    vr: int
    index: int  # position in its C array (x, p, u, y or i)
    start: float | int | None = None
    unit: str = ""
    description: str = ""
    derivative_of: Variable | None = None
    depends_on: tuple[str, ...] | None = None  # knowns of an output; None: all


@dataclass(frozen=True)
class ModelTable:
    """A model's variables, read from ``model.toml``."""

    name: str
    description: str
    stop_time: float
    variables: tuple[Variable, ...]
    event_indicators: tuple[Variable, ...]
    # the C gives model_jacobian: the FMU provides directional derivatives (ME)
    has_jacobian: bool = False
    # seconds of CPU each get FMU state spends (a large model's save, for tests)
    state_save_cost: float = 0.0
    # also built as a bare Co-Simulation FMU (no state saving, no fmiReset)
    bare_cosimulation: bool = False

    def of_kind(self, *kinds: str) -> list[Variable]:
        """Return the variables of the given kinds, in value-reference order."""
        return [v for v in self.variables if v.kind in kinds]

    @property
    def token(self) -> str:
        """Return the GUID / instantiation token, derived from the table."""
        digest = hashlib.sha256(repr(self).encode()).hexdigest()
        parts = (digest[:8], digest[8:12], digest[12:16], digest[16:20], digest[20:32])
        return "{" + "-".join(parts) + "}"


def build_fmus(
    source_dir: Path | str | None = None,
    out_dir: Path | str | None = None,
    models: list[str] | None = None,
    force: bool = False,
    *,
    models_dir: Path | str | None = None,
) -> dict[str, Path]:
    """Compile every model in `source_dir` into FMI 2.0, 3.0 and 1.0 FMUs.

    Parameters
    ----------
    source_dir : path, optional
        The ``fmus/`` directory (default: the one this file is in).
    out_dir : path, optional
        Where the FMUs go (default: ``source_dir / "build"``).
    models : list of str, optional
        Model directory names to build (default: all with a ``model.toml``).
    force : bool
        Rebuild even if the inputs are unchanged.
    models_dir : path, optional
        Where the model directories are (default: `source_dir`); the FMI
        framework (``common/``, ``include/``) always comes from `source_dir`.
        The tests build their faulty FMUs from ``tests/fmus`` so.

    Returns
    -------
    dict
        FMU stem (``"BouncingBall"``, ``"BouncingBall_fmi3"``,
        ``"BouncingBall_fmi1me"``, ``"BouncingBall_fmi1cs"``) to its path.

    Raises
    ------
    BuildError
        A model is unknown, its table is invalid, or gcc fails (with gcc's message).
    """
    source_dir = Path(source_dir) if source_dir else HERE
    if not (source_dir / "common").is_dir():
        raise BuildError(
            f"{source_dir}: no fmus/ sources here (expected {source_dir / 'common'}); "
            f"pass the fmus/ folder."
        )
    out_dir = Path(out_dir) if out_dir else source_dir / "build"
    out_dir.mkdir(parents=True, exist_ok=True)
    built = {}
    for model_dir in _model_dirs(Path(models_dir or source_dir), models):
        table = read_table(model_dir / "model.toml")
        for target in TARGETS:
            if target.bare and not table.bare_cosimulation:
                continue
            fmu = _build_one(source_dir, model_dir, table, target, out_dir, force)
            built[fmu.stem] = fmu
    if models is None:
        build_systems(source_dir, out_dir)
    return built


def build_systems(source_dir: Path, out_dir: Path) -> dict[str, Path]:
    """Pack each fmus/systems/NAME.ssd with its FMUs into out_dir/NAME.ssp.

    Returns
    -------
    dict
        System name to its .ssp path.
    """
    return {
        ssd.stem: pack_ssp(ssd, out_dir, out_dir / f"{ssd.stem}.ssp")
        for ssd in sorted((Path(source_dir) / "systems").glob("*.ssd"))
    }


def _model_dirs(source_dir: Path, models: list[str] | None) -> list[Path]:
    """Return the model directories to build, checking requested names."""
    found = sorted(p.parent for p in source_dir.glob("*/model.toml"))
    if models is None:
        return found
    names = {p.name: p for p in found}
    unknown = [m for m in models if m not in names]
    if unknown:
        raise BuildError(
            f"{source_dir}: unknown model(s) {unknown}; known: {sorted(names)}."
        )
    return [names[m] for m in models]


def read_table(path: Path) -> ModelTable:
    """Read and check a ``model.toml`` variable table, assigning value references."""
    data = tomllib.loads(path.read_text())
    rows = data.get("variable", [])
    for row in rows:
        if row.get("kind") not in KINDS:
            raise BuildError(
                f"{path}: variable `{row.get('name')}` has kind "
                f"{row.get('kind')!r}; use one of {KINDS}."
            )
    rows = rows + [
        {
            "name": "cs_substep",
            "kind": "parameter",
            "start": float(data.get("cs_substep", CS_SUBSTEP)),
            "unit": "s",
            "description": "Co-Simulation RK4 substep",
        }
    ]
    variables = _number_variables(rows)
    by_name = {v.name: v for v in variables}
    _check_dependencies(path, variables)
    missing = [n for n in data.get("event_indicators", []) if n not in by_name]
    if missing:
        raise BuildError(f"{path}: event indicator(s) {missing} are not variables.")
    return ModelTable(
        data["name"],
        data.get("description", ""),
        float(data.get("stop_time", 1.0)),
        variables,
        tuple(by_name[n] for n in data.get("event_indicators", [])),
        _flag(path, data, "jacobian"),
        _state_save_cost(path, data),
        _flag(path, data, "bare_cosimulation"),
    )


def _state_save_cost(path: Path, data: dict) -> float:
    """Return the table's `state_save_cost` in seconds (0 if absent)."""
    value = data.get("state_save_cost", 0.0)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (0.0 <= value <= 1.0)
    ):
        raise BuildError(
            f"{path}: `state_save_cost` must be a number of seconds in [0, 1], got "
            f"{value!r}."
        )
    return float(value)


def _flag(path: Path, data: dict, key: str) -> bool:
    """Return the table's boolean `key` (false if absent)."""
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise BuildError(f"{path}: `{key}` must be true or false, got {value!r}.")
    return value


def _number_variables(rows: list[dict]) -> tuple[Variable, ...]:
    """Give each row its value reference and C index; append the derivatives."""
    counters = dict.fromkeys(KIND_PREFIX.values(), 0)
    variables = []
    for vr, row in enumerate(rows, start=1):
        prefix = KIND_PREFIX[row["kind"]]
        variables.append(
            Variable(
                row["name"],
                row["kind"],
                vr,
                counters[prefix],
                row.get("start"),
                row.get("unit", ""),
                row.get("description", ""),
                depends_on=_depends_on(row),
            )
        )
        counters[prefix] += 1
    states = [v for v in variables if v.kind == "state"]
    for k, state in enumerate(states):
        variables.append(
            Variable(
                f"der({state.name})",
                "derivative",
                len(rows) + 1 + k,
                k,
                None,
                _derivative_unit(rows, state.name),
                f"Time derivative of {state.name}",
                state,
            )
        )
    return tuple(variables)


def _depends_on(row: dict) -> tuple[str, ...] | None:
    """Return the knowns an output depends on: a state itself, an output's
    `depends_on` list (None if absent: every input and state)."""
    if row["kind"] == "state":
        return (row["name"],)
    return tuple(row["depends_on"]) if "depends_on" in row else None


def _check_dependencies(path: Path, variables: tuple[Variable, ...]) -> None:
    """Check that only outputs declare `depends_on`, naming states and inputs."""
    knowns = {v.name for v in variables if v.kind in ("state", "input")}
    for var in variables:
        if var.depends_on is None or var.kind == "state":
            continue
        unknown = sorted(set(var.depends_on) - knowns)
        if var.kind != "output" or unknown:
            raise BuildError(
                f"{path}: `depends_on` of `{var.name}` must be on an output and name "
                f"states or inputs; got kind {var.kind!r} and unknown {unknown}."
            )


def _derivative_unit(rows: list[dict], name: str) -> str:
    """Return the derivative unit declared for state `name` (``derivative_unit``)."""
    return next(r.get("derivative_unit", "") for r in rows if r["name"] == name)


def _build_one(
    source_dir: Path,
    model_dir: Path,
    table: ModelTable,
    target: Target,
    out_dir: Path,
    force: bool,
) -> Path:
    """Build one FMU unless its inputs are unchanged; return its path."""
    fmu = out_dir / f"{table.name}{target.suffix}.fmu"
    sources = [source_dir / "common" / f for f in (*CORE_SOURCES, target.layer)]
    sources += sorted(model_dir.glob("*.c"))
    digest = _input_digest(source_dir, model_dir, target)
    stamp = fmu.with_suffix(".fmu.sha256")
    if not force and fmu.exists() and stamp.exists() and stamp.read_text() == digest:
        return fmu
    (out_dir / ".work").mkdir(exist_ok=True)
    # A private work directory and atomic renames: concurrent builds (parallel test
    # sessions) never see, or load, a half-written FMU.
    with tempfile.TemporaryDirectory(dir=out_dir / ".work", prefix=fmu.stem) as tmp:
        work = Path(tmp)
        (work / "model_table.h").write_text(c_header(table))
        binary = work / f"{table.name}.so"
        include_dirs = [source_dir / "include", source_dir / "common", work]
        defines = (f"MODEL_IDENTIFIER={table.name}", *target.defines)
        _compile(table.name, sources, include_dirs, defines, binary)
        description = model_description(table, target.version, target.interface)
        entries = {
            "modelDescription.xml": description.encode(),
            f"binaries/{target.platform}/{table.name}.so": binary.read_bytes(),
        }
        _write_zip(work / fmu.name, entries)
        (work / stamp.name).write_text(digest)
        os.replace(work / fmu.name, fmu)
        os.replace(work / stamp.name, stamp)
    return fmu


def _input_digest(source_dir: Path, model_dir: Path, target: Target) -> str:
    """Return a SHA-256 over every file that goes into an FMU, and the flags."""
    files = sorted(
        [
            *(source_dir / "common").iterdir(),
            *(source_dir / "include").iterdir(),
            *model_dir.iterdir(),
            Path(__file__),
        ]
    )
    digest = hashlib.sha256(f"{target} {GCC_FLAGS}".encode())
    for path in files:
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _compile(
    name: str,
    sources: list[Path],
    include_dirs: list[Path],
    defines: tuple[str, ...],
    binary: Path,
) -> None:
    """Run gcc; raise BuildError with its message on failure."""
    command = [
        "gcc",
        *GCC_FLAGS,
        *(f"-D{d}" for d in defines),
        *(f"-I{d}" for d in include_dirs),
        *map(str, sources),
        "-o",
        str(binary),
        "-lm",
    ]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise BuildError(f"Model `{name}`: gcc was not found; install gcc.") from error
    if result.returncode != 0:
        raise BuildError(f"Model `{name}`: gcc failed:\n{result.stderr.strip()}")
    if result.stderr.strip():
        warnings.warn(
            f"Model `{name}`: gcc warnings:\n{result.stderr.strip()}",
            BuildWarning,
            stacklevel=3,
        )


def _write_zip(fmu: Path, entries: dict[str, bytes]) -> None:
    """Write a zip with sorted entries and fixed timestamps."""
    with zipfile.ZipFile(fmu, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            archive.writestr(info, entries[name])


# ---- model_table.h ----


def c_header(table: ModelTable) -> str:
    """Return the C header with sizes, index names and the variable table."""
    counts = {
        "STATES": table.of_kind("state"),
        "REAL_PARAMS": table.of_kind("parameter"),
        "REAL_INPUTS": table.of_kind("input"),
        "OUTPUTS": table.of_kind("output"),
        "INTEGERS": table.of_kind("integer_parameter", "integer_input"),
        "DISCRETES": table.of_kind("discrete"),
        "EVENT_INDICATORS": table.event_indicators,
    }
    lines = [
        "/* Generated by fmus/build.py from model.toml; do not edit. */",
        "#ifndef MODEL_TABLE_H",
        "#define MODEL_TABLE_H",
        f'#define MODEL_TOKEN "{table.token}"',
        f"#define HAS_JACOBIAN {int(table.has_jacobian)}",
        f"#define STATE_SAVE_COST {table.state_save_cost!r}",
    ]
    for key, members in counts.items():
        lines.append(f"#define N_{key} {len(members)}")
        lines.append(f"#define N_{key}_ALLOC {max(len(members), 1)}")
    for var in table.variables:
        if var.kind in KIND_PREFIX:
            lines.append(f"#define {KIND_PREFIX[var.kind]}_{var.name} {var.index}")
    rows = ['{0, "time", VK_TIME, 0}'] + [
        f'{{{v.vr}, "{v.name}", {KIND_VK[v.kind]}, {v.index}}}' for v in table.variables
    ]
    lines.append("#define MODEL_VARIABLES { " + ", ".join(rows) + " }")
    lines += [
        _start_macro("START_STATES", counts["STATES"]),
        _start_macro("START_REAL_PARAMS", counts["REAL_PARAMS"]),
        _start_macro("START_REAL_INPUTS", counts["REAL_INPUTS"]),
        _start_macro("START_INTEGERS", counts["INTEGERS"]),
        _start_macro("START_DISCRETES", counts["DISCRETES"]),
    ]
    refs = [f"{{{KIND_VK[v.kind]}, {v.index}}}" for v in table.event_indicators]
    lines.append("#define EVENT_INDICATOR_VARIABLES { " + ", ".join(refs) + " }")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def _start_macro(name: str, variables: Sequence[Variable]) -> str:
    """Return an initializer macro of start values (one 0 if there are none)."""
    values = [repr(v.start) for v in variables] or ["0"]
    return f"#define {name} {{ {', '.join(values)} }}"


# ---- modelDescription.xml ----


def model_description(
    table: ModelTable, version: int, interface: str | None = None
) -> str:
    """Return modelDescription.xml for FMI `version` (2 or 3; 1 with `interface`,
    'ModelExchange' or 'CoSimulation', since an FMI 1.0 FMU offers one)."""
    if version == 1:
        return _xml(_fmi1_description(table, interface or "ModelExchange"))
    bare = interface == "CoSimulation"  # FMI 2 and 3: both interfaces, or bare CS
    root = _root(table, version, bare)
    _add_units(root, table)
    ET.SubElement(
        root,
        "DefaultExperiment",
        startTime="0",
        stopTime=repr(table.stop_time),
        stepSize="0.001",
    )
    variables = ET.SubElement(root, "ModelVariables")
    (_fmi2_variables if version == 2 else _fmi3_variables)(variables, table)
    (_fmi2_structure if version == 2 else _fmi3_structure)(root, table)
    return _xml(root)


def _xml(root: ET.Element) -> str:
    ET.indent(root)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
    )


def _common_attributes(table: ModelTable) -> dict[str, str]:
    return {
        "modelName": table.name,
        "description": table.description,
        # the tool's name in every FMU, kept when the builder left the package
        # for fmus/ so that the FMUs stay byte for byte as before
        "generationTool": "fmibridge.build",
        "generationDateAndTime": GENERATION_DATE,
        "variableNamingConvention": "structured",
    }


def _root(table: ModelTable, version: int, bare: bool) -> ET.Element:
    """The fmiModelDescription element with its interfaces (a bare build: CS
    only, without state saving), as FMI `version` spells them."""
    if version == 2:
        identity = {"fmiVersion": "2.0", "guid": table.token}
        counts = {"numberOfEventIndicators": str(len(table.event_indicators))}
        state_flag, jacobian_flag = "FMUstate", "providesDirectionalDerivative"
    else:
        identity = {"fmiVersion": "3.0", "instantiationToken": table.token}
        counts = {}
        state_flag, jacobian_flag = "FMUState", "providesDirectionalDerivatives"
    root = ET.Element(
        "fmiModelDescription", {**identity, **_common_attributes(table), **counts}
    )
    saves = "false" if bare else "true"
    state = {f"canGetAndSet{state_flag}": saves, f"canSerialize{state_flag}": saves}
    jacobian = {jacobian_flag: "true"} if table.has_jacobian else {}
    if not bare:
        ET.SubElement(
            root, "ModelExchange", {"modelIdentifier": table.name, **state, **jacobian}
        )
    ET.SubElement(
        root,
        "CoSimulation",
        {
            "modelIdentifier": table.name,
            "canHandleVariableCommunicationStepSize": "true",
            **state,
        },
    )
    return root


def _add_units(root: ET.Element, table: ModelTable) -> None:
    units = sorted({"s", *(v.unit for v in table.variables if v.unit)})
    definitions = ET.SubElement(root, "UnitDefinitions")
    for unit in units:
        ET.SubElement(definitions, "Unit", name=unit)


def _causality(var: Variable) -> dict[str, str]:
    """Return causality, variability and initial of a variable (same in FMI 2 and 3)."""
    return {
        "state": {
            "causality": "output",
            "variability": "continuous",
            "initial": "exact",
        },
        "parameter": {
            "causality": "parameter",
            "variability": "fixed",
            "initial": "exact",
        },
        "input": {"causality": "input", "variability": "continuous"},
        "output": {"causality": "output", "variability": "continuous"},
        "integer_parameter": {
            "causality": "parameter",
            "variability": "fixed",
            "initial": "exact",
        },
        "integer_input": {"causality": "input", "variability": "discrete"},
        "discrete": {
            "causality": "local",
            "variability": "discrete",
            "initial": "exact",
        },
        "derivative": {"causality": "local", "variability": "continuous"},
    }[var.kind]


def _is_integer(var: Variable) -> bool:
    return var.kind in ("integer_parameter", "integer_input")


def _fmi2_variables(parent: ET.Element, table: ModelTable) -> None:
    time = ET.SubElement(
        parent,
        "ScalarVariable",
        name="time",
        valueReference="0",
        causality="independent",
        variability="continuous",
        description="Simulation time",
    )
    ET.SubElement(time, "Real", unit="s")
    for var in table.variables:
        element = ET.SubElement(
            parent,
            "ScalarVariable",
            {
                "name": var.name,
                "valueReference": str(var.vr),
                "description": var.description,
                **_causality(var),
            },
        )
        type_attributes = {}
        if var.unit:
            type_attributes["unit"] = var.unit
        if var.derivative_of is not None:
            type_attributes["derivative"] = str(_fmi2_index(table, var.derivative_of))
        if var.start is not None:
            type_attributes["start"] = repr(var.start)
        ET.SubElement(
            element, "Integer" if _is_integer(var) else "Real", {**type_attributes}
        )


def _fmi2_index(table: ModelTable, var: Variable) -> int:
    """Return the 1-based ScalarVariable index (``time`` is 1)."""
    return table.variables.index(var) + 2


def _fmi2_structure(root: ET.Element, table: ModelTable) -> None:
    structure = ET.SubElement(root, "ModelStructure")
    outputs = ET.SubElement(structure, "Outputs")
    for var in table.of_kind("state", "output"):
        ET.SubElement(
            outputs,
            "Unknown",
            {
                "index": str(_fmi2_index(table, var)),
                **_dependencies(table, var, lambda v: _fmi2_index(table, v)),
            },
        )
    derivatives = ET.SubElement(structure, "Derivatives")
    for var in table.of_kind("derivative"):
        ET.SubElement(derivatives, "Unknown", index=str(_fmi2_index(table, var)))
    initial = ET.SubElement(structure, "InitialUnknowns")
    for var in table.of_kind("output", "derivative"):
        ET.SubElement(initial, "Unknown", index=str(_fmi2_index(table, var)))


def _dependencies(
    table: ModelTable, var: Variable, number: Callable[[Variable], int]
) -> dict[str, str]:
    """Return the `dependencies` attribute of an output (none if undeclared):
    the knowns it depends on directly, numbered by `number` in ascending order."""
    if var.depends_on is None:
        return {}
    by_name = {v.name: v for v in table.variables}
    numbers = sorted(number(by_name[name]) for name in var.depends_on)
    return {"dependencies": " ".join(map(str, numbers))}


def _fmi3_variables(parent: ET.Element, table: ModelTable) -> None:
    ET.SubElement(
        parent,
        "Float64",
        name="time",
        valueReference="0",
        causality="independent",
        variability="continuous",
        description="Simulation time",
        unit="s",
    )
    for var in table.variables:
        attributes = {
            "name": var.name,
            "valueReference": str(var.vr),
            "description": var.description,
            **_causality(var),
        }
        if var.unit:
            attributes["unit"] = var.unit
        if var.derivative_of is not None:
            attributes["derivative"] = str(var.derivative_of.vr)
        if var.start is not None:
            attributes["start"] = repr(var.start)
        ET.SubElement(
            parent, "Int32" if _is_integer(var) else "Float64", {**attributes}
        )


def _fmi3_structure(root: ET.Element, table: ModelTable) -> None:
    structure = ET.SubElement(root, "ModelStructure")
    for var in table.of_kind("state", "output"):
        ET.SubElement(
            structure,
            "Output",
            {
                "valueReference": str(var.vr),
                **_dependencies(table, var, lambda v: v.vr),
            },
        )
    for tag, variables in (
        ("ContinuousStateDerivative", table.of_kind("derivative")),
        ("InitialUnknown", table.of_kind("output", "derivative")),
        ("EventIndicator", table.event_indicators),
    ):
        for var in variables:
            ET.SubElement(structure, tag, valueReference=str(var.vr))


# ---- FMI 1.0 modelDescription.xml ----

FMI1_KINDS = {  # kind -> (causality, variability) in FMI 1.0's words
    "state": ("output", "continuous"),
    "parameter": ("internal", "parameter"),
    "integer_parameter": ("internal", "parameter"),
    "input": ("input", "continuous"),
    "integer_input": ("input", "discrete"),
    "output": ("output", "continuous"),
    "discrete": ("internal", "discrete"),
    "derivative": ("internal", "continuous"),
}
FMI1_CAPABILITIES = {  # Co-Simulation: what our doStep can do (no FMU state in 1.0)
    "canHandleVariableCommunicationStepSize": "true",
    "canHandleEvents": "true",
    "canRejectSteps": "false",
    "canInterpolateInputs": "false",
    "maxOutputDerivativeOrder": "0",
    "canRunAsynchronuously": "false",
    "canSignalEvents": "false",
    "canBeInstantiatedOnlyOncePerProcess": "false",
    "canNotUseMemoryManagementFunctions": "true",
}


def _fmi1_description(table: ModelTable, interface: str) -> ET.Element:
    """FMI 1.0: states are named by their derivatives `der(x)`, and a
    Co-Simulation FMU says so with an Implementation element."""
    root = ET.Element(
        "fmiModelDescription",
        {
            "fmiVersion": "1.0",
            "modelIdentifier": table.name,
            "guid": table.token,
            **_common_attributes(table),
            "numberOfContinuousStates": str(len(table.of_kind("state"))),
            "numberOfEventIndicators": str(len(table.event_indicators)),
        },
    )
    units = ET.SubElement(root, "UnitDefinitions")
    for unit in sorted({"s", *(v.unit for v in table.variables if v.unit)}):
        ET.SubElement(units, "BaseUnit", unit=unit)
    ET.SubElement(
        root, "DefaultExperiment", startTime="0", stopTime=repr(table.stop_time)
    )
    variables = ET.SubElement(root, "ModelVariables")
    for var in table.variables:
        causality, variability = FMI1_KINDS[var.kind]
        element = ET.SubElement(
            variables,
            "ScalarVariable",
            name=var.name,
            valueReference=str(var.vr),
            description=var.description,
            variability=variability,
            causality=causality,
        )
        attributes = {"unit": var.unit} if var.unit else {}
        if var.start is not None:
            attributes["start"] = repr(var.start)
        ET.SubElement(
            element, "Integer" if _is_integer(var) else "Real", {**attributes}
        )
        _fmi1_direct_dependency(element, table, var)
    if interface == "CoSimulation":
        implementation = ET.SubElement(root, "Implementation")
        standalone = ET.SubElement(implementation, "CoSimulation_StandAlone")
        ET.SubElement(standalone, "Capabilities", {**FMI1_CAPABILITIES})
    return root


def _fmi1_direct_dependency(
    element: ET.Element, table: ModelTable, var: Variable
) -> None:
    """An output's DirectDependency: the inputs it depends on directly (none
    for a state, an output in FMI 1.0; an output without `depends_on` gets no
    element, which FMI 1.0 reads as every input)."""
    if var.kind not in ("output", "state") or (
        var.kind == "output" and var.depends_on is None
    ):
        return
    inputs = {v.name for v in table.of_kind("input", "integer_input")}
    dependency = ET.SubElement(element, "DirectDependency")
    for name in var.depends_on or ():
        if name in inputs:
            ET.SubElement(dependency, "Name").text = name


def main(argv: Sequence[str] | None = None) -> int:
    """Build the FMUs and SSPs of this folder (the development entry point)."""
    parser = argparse.ArgumentParser(
        prog="python fmus/build.py",
        description="Compile the models beside this file into FMUs (gcc) and "
        "pack the SSPs of systems/, into build/.",
    )
    parser.add_argument(
        "models", nargs="*", help="model folders to build (default: all, and the SSPs)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild everything")
    args = parser.parse_args(argv)
    try:
        built = build_fmus(models=args.models or None, force=args.force)
    except FmibridgeError as error:  # a BuildError, or an SSD the packer refuses
        print(f"fmus/build.py: error: {error}", file=sys.stderr)
        return 2
    systems = sorted(HERE.joinpath("build").glob("*.ssp")) if not args.models else []
    for name, path in [*sorted(built.items()), *((p.stem, p) for p in systems)]:
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
