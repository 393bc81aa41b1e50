"""An FMU file: checked, described and unpacked within limits, and always removed.

`FmuArchive` reads the model description without unpacking, refuses what it
cannot run before any file is written (`core.archives`, `core.limits`), and
unpacks into one temporary folder that `cleanup()`, interpreter exit and
SIGTERM remove (`_Folders`).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import io
import itertools
import math
import os
import re
import shutil
import signal
import sys
import threading
import warnings
import zipfile
from collections.abc import Callable
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core import limits
from ..core.archives import open_checked, read_member, unpack
from ..core.errors import FmibridgeError, FmibridgeWarning
from ..core.numbers import finite, positive
from ..core.outputs import new_folder
from ..core.system import EXPERIMENT_VALUES, Experiment

if TYPE_CHECKING:
    from ..core.units import UnitDefinition

Feedthrough = frozenset[str] | None  # the inputs an output depends on (None: all)

PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a C identifier, as FMI asks
# The fmiVersion strings fmibridge runs: 1.0, 2.0 and 2.0.x, 3.x and 3.x.y (FMI
# 3.0, Sec. 2.6: minor versions add only ignorable content, patches only text).
FMI_VERSION = re.compile(r"1\.0|2\.0(?:\.[0-9]+)?|3\.[0-9]+(?:\.[0-9]+)?")
DESCRIPTION = "modelDescription.xml"
# the DefaultExperiment's attributes, in the order of EXPERIMENT_VALUES
EXPERIMENT = {
    "startTime": finite,
    "stopTime": finite,
    "stepSize": positive,
    "tolerance": positive,
}
# fmpy's XML schemas (under fmpy/schema) by FMI major version, as fmpy chooses
SCHEMAS = {
    "1": "fmi1/fmiModelDescription.xsd",
    "2": "fmi2/fmi2ModelDescription.xsd",
    "3": "fmi3/fmi3ModelDescription.xsd",
}
BUILD_DESCRIPTION = "sources/buildDescription.xml"
BUILD_SCHEMA = "fmi3/fmi3BuildDescription.xsd"
_SCHEMA_LOCK = threading.Lock()
# s: how long after SIGTERM the main thread has to run its handler before the
# watcher ends the process (Python runs it at the next bytecode)
SIGTERM_GRACE_S = 1.5
# the signals the watcher thread blocks, so that they reach the main thread
WATCHER_BLOCKS = {signal.SIGINT, signal.SIGTERM}
# What of an FMU a run reads (binaries, resources, the model description); the
# rest (sources, documentation, extra/) stays packed, as FMPy's simulate_fmu does
RUN_NEEDS = ("binaries/", "resources/", DESCRIPTION)
INTERFACE_TITLES = {  # every interface type, by its element's name
    "ModelExchange": "Model Exchange",
    "CoSimulation": "Co-Simulation",
    "ScheduledExecution": "Scheduled Execution",
}
VR_MAX = 0xFFFFFFFF  # a value reference is a C unsigned int (32 bits)
ALIAS_TYPES = {"Enumeration": "Integer"}  # FMI 2.0: one fmi2SetInteger for both
INTS = tuple(f"{s}Int{n}" for s in ("", "U") for n in (8, 16, 32, 64))  # FMI 3.0's
NUMERIC_TYPES = {  # FMI type -> True if integer-valued
    **dict.fromkeys(("Real", "Float64", "Float32"), False),
    **dict.fromkeys(("Integer", "Enumeration", "Boolean", *INTS), True),
}


class Variable(NamedTuple):
    """One FMU variable as the model description declares it (`start`: the
    numeric start of a scalar, else None; `start_text`: as written)."""

    name: str
    vr: int
    type: str
    causality: str
    variability: str
    start: float | None
    start_text: str | None = None
    unit: str | None = None
    shape: tuple[int, ...] = ()

    @property
    def is_numeric(self) -> bool:
        """True for the types fmibridge reads and sets (reals, integers, Booleans)."""
        return self.type in NUMERIC_TYPES

    @property
    def size(self) -> int:
        """Number of scalar values (1 for a scalar)."""
        return math.prod(self.shape)

    @property
    def element_names(self) -> tuple[str, ...]:
        """Names of the scalar values: `y`, or `y[1]`, ... (1-based, row-major,
        `A[1,2]` for a matrix)."""
        if not self.shape:
            return (self.name,)
        indices = itertools.product(*(range(1, d + 1) for d in self.shape))
        return tuple(f"{self.name}[{','.join(map(str, k))}]" for k in indices)


class FmuArchive:
    """An FMU file, checked and described at once, unpacked on first use.

    `declared_version` is the fmiVersion as declared (``"3.0.1"``),
    `fmi_version` the standard whose classes run it (``"1.0"``, ``"2.0"``,
    ``"3.0"``), `is_validated` the `validate` it was read with, `root` the model
    description's root element (lxml) as declared, for what fmpy's reading leaves
    out (FMI 1.0 DirectDependency, the Jacobian flags).

    Parameters
    ----------
    path : path
        The .fmu file.
    validate : bool
        Refuse a model description that fails fmpy's validation (True, FMPy's
        default); False reads it regardless with one warning.

    Raises
    ------
    FmibridgeError
        Naming the file: not a zip archive, beyond the limits, an unreadable
        or (with `validate`) invalid model description, an FMI version it does
        not run, a `modelIdentifier` that is not a plain name.
    """

    def __init__(self, path: str | Path, *, validate: bool = True) -> None:
        self.path = Path(path)
        self._unzip_dir: Path | None = None
        # kept open until unpacked: what is unpacked is what was checked
        self._zip: zipfile.ZipFile | None = open_checked(self.path, "FMU")
        try:
            self._describe(self._zip, validate)
        except BaseException:
            self._close_zip()
            raise

    def _describe(self, archive: zipfile.ZipFile, validate: bool) -> None:
        from lxml import etree

        try:  # within MAX_XML_BYTES
            self.root = root = etree.fromstring(
                read_member(archive, DESCRIPTION, limits.MAX_XML_BYTES, self.path)
            )
        except (KeyError, etree.XMLSyntaxError) as exc:
            raise _unreadable(self.path, exc) from None
        self.declared_version = root.get("fmiVersion") or ""
        if not FMI_VERSION.fullmatch(self.declared_version):
            raise FmibridgeError(
                f"{self.path}: FMI {self.declared_version!r} is not supported; "
                f"fmibridge runs FMI 1.0, 2.0 (and 2.0.x) and 3 (3.0, 3.0.x, "
                f"3.x): export one of them."
            )
        self.fmi_version = f"{self.declared_version[0]}.0"  # its classes' standard
        _check_value_references(self.path, root, self.fmi_version)
        self.is_validated = validate
        self.description = _read_description(self.path, archive, root, validate)
        for interface in self.interfaces:
            identifier = self.part(interface).modelIdentifier or ""
            if not PLAIN_NAME.fullmatch(identifier):
                raise FmibridgeError(
                    f"{self.path}: {interface} modelIdentifier {identifier!r} is not "
                    f"a plain name (letters, digits, '_'); the FMU is malformed."
                )
        self.variables = {v.name: _variable(v) for v in self.description.modelVariables}

    @property
    def state_names(self) -> tuple[str, ...]:
        """The continuous states, in the order of the FMU's state vector: the
        ModelStructure's derivatives, or (FMI 1.0) the `der(x)` variables."""
        if self.fmi_version != "1.0":
            return tuple(
                d.variable.derivative.name for d in self.description.derivatives
            )
        derivatives = [
            name[4:-1]
            for name in self.variables
            if name.startswith("der(") and name.endswith(")")
        ]
        return tuple(n for n in derivatives if n in self.variables)

    @property
    def interfaces(self) -> tuple[str, ...]:
        """Every interface type the FMU offers, Scheduled Execution included."""
        return tuple(i for i in INTERFACE_TITLES if self.part(i) is not None)

    def part(self, interface: str):
        """Return the model description's element of `interface` (None if absent)."""
        attribute = interface[0].lower() + interface[1:]
        return getattr(self.description, attribute, None)

    @property
    def fixed_internal_step(self) -> float | None:
        """The Co-Simulation fixedInternalStepSize (FMI 3.0), or None."""
        fixed = getattr(self.part("CoSimulation"), "fixedInternalStepSize", None)
        return None if fixed is None else float(fixed)

    def capability(self, interface: str, flag: str) -> bool:
        """Return the capability `flag` (canGetAndSetFMUstate, ...) of `interface`."""
        return bool(getattr(self.part(interface), flag, False))

    @cached_property
    def experiment(self) -> Experiment:
        """The DefaultExperiment (None where not given); a bad value becomes an
        error naming it, raised where a run reads it (`Experiment.invalid`)."""
        d = self.description.defaultExperiment
        read = [self._number(d, name, check) for name, check in EXPERIMENT.items()]
        invalid = {f: p for f, (_, p) in zip(EXPERIMENT_VALUES, read, strict=True) if p}
        (start, _), (stop, _), (step, _), (tolerance, _) = read
        return Experiment(start, stop, step, tolerance, invalid=invalid)

    def _number(
        self, d: object, name: str, check: Callable[[str, object], float]
    ) -> tuple[float | None, str | None]:
        text = getattr(d, name, None)  # None: no DefaultExperiment, or not given
        if text is None:
            return None, None
        try:
            return check(name, float(text)), None
        except (ValueError, OverflowError):  # FmibridgeError is a ValueError
            rule = "a finite number > 0" if check is positive else "a finite number"
            return None, (
                f'{self.path}: <DefaultExperiment {name}="{text}"> in '
                f"modelDescription.xml must be {rule}; the FMU is malformed "
                f"(export it again with a valid {name}, or without it)."
            )

    def check_interface(self, interface: str) -> None:
        """Raise FmibridgeError unless fmibridge can run `interface` of this FMU
        (not with clocks: fmibridge does not activate them)."""
        runnable = [i for i in self.interfaces if i != "ScheduledExecution"]
        clocks = [v.name for v in self.variables.values() if v.type == "Clock"]
        if interface in runnable and clocks:
            raise FmibridgeError(
                f"{self.path}: the FMU has clocks ({', '.join(clocks)}); fmibridge "
                f"does not activate clocks, so its clocked variables would never "
                f"change in {INTERFACE_TITLES[interface]}. Run it with an importer "
                f"that supports FMI 3 clocks, or export it without them."
            )
        if interface in runnable:
            return
        if not runnable:
            offered = " and ".join(INTERFACE_TITLES[i] for i in self.interfaces)
            raise FmibridgeError(
                f"{self.path}: the FMU offers {offered or 'no interface'} only, "
                f"neither Model Exchange nor Co-Simulation, which fmibridge runs "
                f"(Scheduled Execution needs a clock-driven scheduler, which "
                f"fmibridge does not have)."
            )
        raise FmibridgeError(
            f"{self.path}: the FMU offers {INTERFACE_TITLES[runnable[0]]}, not "
            f"{INTERFACE_TITLES.get(interface, interface)}; choose "
            f"{'me' if runnable[0] == 'ModelExchange' else 'cs'} as interface."
        )

    def unzipped(self) -> Path:
        """Return the folder the FMU is unpacked in (unpacking it on first call)."""
        if self._unzip_dir is None:
            archive = self._zip or open_checked(self.path, "FMU")  # after cleanup()
            self._zip = None
            self._unzip_dir = _FOLDERS.new()
            try:
                with archive:
                    unpack(archive, self.path, self._unzip_dir, RUN_NEEDS)
            except BaseException:
                self.cleanup()
                raise
        return self._unzip_dir

    def cleanup(self) -> None:
        """Remove the unpacked folder and close the archive; safe to call twice."""
        self._close_zip()
        folder, self._unzip_dir = self._unzip_dir, None
        if folder is not None:
            _FOLDERS.remove(folder)

    def _close_zip(self) -> None:
        archive, self._zip = self._zip, None
        if archive is not None:
            archive.close()

    def instantiate(self, interface: str):
        """Return a new instance of `interface` (see `fmi.instantiate`)."""
        from .fmi import instantiate  # the instances use this module, not vice versa

        return instantiate(self, interface)

    @cached_property
    def unit_definitions(self) -> dict[str, UnitDefinition]:
        """The FMU's UnitDefinitions that give a BaseUnit, by name."""
        from ..core.units import BASE_UNITS, UnitDefinition

        return {
            unit.name: UnitDefinition(
                tuple(int(getattr(unit.baseUnit, b)) for b in BASE_UNITS),
                float(unit.baseUnit.factor),
                float(unit.baseUnit.offset),
            )
            for unit in self.description.unitDefinitions
            if unit.baseUnit is not None
        }

    def feedthrough(self, output: str) -> Feedthrough:
        """Return the inputs `output` depends on directly (ModelStructure, FMI 1.0
        DirectDependency); None where none are declared: every input."""
        return self._feedthrough.get(output)

    @cached_property
    def _feedthrough(self) -> dict[str, Feedthrough]:
        if self.fmi_version == "1.0":  # fmpy does not read DirectDependency
            return _direct_dependencies(self.root)
        return {
            u.variable.name: None
            if u.dependencies is None
            else frozenset(v.name for v in u.dependencies if v.causality == "input")
            for u in self.description.outputs
        }


def _unreadable(path: Path, exc: Exception) -> FmibridgeError:
    return FmibridgeError(f"{path}: unreadable {DESCRIPTION}: {exc}")


def _source(path: Path, root: Any) -> tuple[str | io.BytesIO, Any]:
    """fmpy's source and root: the FMU, or for fmiVersion 2.0.x one saying 2.0."""
    declared = root.get("fmiVersion") or ""
    if declared == "2.0" or not declared.startswith("2.0"):
        return str(path), root
    from lxml import etree

    root = copy.deepcopy(root)  # the archive keeps the root as declared
    root.set("fmiVersion", "2.0")
    text = etree.tostring(root, encoding="UTF-8")
    memory = io.BytesIO()
    with zipfile.ZipFile(memory, "w") as fmu:
        fmu.writestr(DESCRIPTION, text)
    memory.seek(0)
    return memory, etree.fromstring(text)


def _check_value_references(path: Path, root: Any, fmi_version: str) -> None:
    """Refuse bad or (FMI 3.0) shared valueReferences; warn of FMI 2.0 alias starts."""
    seen: dict[tuple[str, int], Any] = {}  # (type or "", vr) -> first element
    for element in root.iterfind("ModelVariables/*"):
        name, text = element.get("name"), element.get("valueReference")
        try:
            vr = int(text or "")  # xs:unsignedInt: an optional sign, spaces
        except ValueError:
            vr = -1
        if not 0 <= vr <= VR_MAX:
            raise FmibridgeError(
                f"{path}: variable {name!r} has valueReference {text!r}; it "
                f"must be an integer from 0 to {VR_MAX} (the FMU is malformed)."
            )
        if fmi_version == "1.0":
            continue  # FMI 1.0 aliases say so in their own `alias` attribute
        typed = element.find("*") if fmi_version == "2.0" else None  # Real, ...
        if typed is not None and (
            typed.get("start") is None or element.get("variability") == "constant"
        ):
            continue  # an FMI 2.0 alias without a start value, or a constant
        kind = "" if typed is None else ALIAS_TYPES.get(typed.tag, typed.tag)
        first = seen.setdefault((kind, vr), element)
        if first is element:
            continue
        shared = (
            f"{path}: variables {first.get('name')!r} and {name!r} share "
            f"valueReference {vr}"
        )
        if typed is None:
            raise FmibridgeError(
                f"{shared}; a get of one reads the other (the FMU is malformed)."
            )
        warnings.warn(
            f"{shared} and both have a start value (FMI 2.0 allows one per alias "
            f"set): a get of one reads the other; check the FMU's export.",
            FmibridgeWarning,
            stacklevel=2,
        )


def _read_description(
    path: Path, archive: zipfile.ZipFile, root: Any, validate: bool
) -> Any:
    """fmpy's model description, checked as fmpy validates it (else a warning)."""
    from fmpy.validation import validate_model_description
    from lxml import etree

    source, root = _source(path, root)
    version = root.get("fmiVersion") or ""
    problems = _schema_problems(SCHEMAS[version[:1]], root)
    description = None if problems else _fmpy_description(path, source)
    if description is not None and version.startswith("3."):
        if BUILD_DESCRIPTION in archive.namelist():
            with archive.open(BUILD_DESCRIPTION) as xml:
                found = _schema_problems(BUILD_SCHEMA, etree.parse(xml).getroot())
            problems = [f"{BUILD_DESCRIPTION}: {problem}" for problem in found]
    if description is not None and not problems:
        problems = validate_model_description(description)
    if not problems:
        return description
    joined = "; ".join(problems)
    if validate:
        raise FmibridgeError(
            f"{path}: {DESCRIPTION} fails fmpy's validation: {joined}. Fix the "
            f"FMU, or run it regardless with validate=False (FMPy's keyword)."
        )
    warnings.warn(
        f"{path}: {DESCRIPTION} fails fmpy's validation ({joined}); read "
        f"regardless, as validate=False asks.",
        FmibridgeWarning,
        stacklevel=4,  # FmuArchive's caller: above __init__ and _describe
    )
    if description is None:  # not read yet: the schema refused it
        description = _fmpy_description(path, source)
    return description


def _schema_problems(name: str, root: Any) -> list[str]:
    schema = _schema(name)
    with _SCHEMA_LOCK:  # a schema keeps the log of its last validation
        if schema.validate(root):
            return []
        return [
            f"{e.level_name} (line {e.line}, column {e.column}): {e.message}"
            for e in schema.error_log
        ]


@cache
def _schema(name: str) -> Any:
    """fmpy's XML schema `name` (under fmpy's schema folder), built once."""
    import fmpy
    from lxml import etree

    return etree.XMLSchema(file=str(Path(fmpy.__file__).parent / "schema" / name))


def _fmpy_description(path: Path, source: str | io.BytesIO) -> Any:
    import fmpy

    try:
        return fmpy.read_model_description(source, validate=False)
    except Exception as exc:  # noqa: BLE001 - fmpy raises bare exceptions on bad XML
        raise _unreadable(path, exc) from None


def _direct_dependencies(root: Any) -> dict[str, Feedthrough]:
    """FMI 1.0: each output's `DirectDependency` (None: every input)."""
    found: dict[str, Feedthrough] = {}
    for variable in root.iter("ScalarVariable"):
        if variable.get("causality") == "output":
            element = variable.find("DirectDependency")
            found[variable.get("name", "")] = (
                None
                if element is None
                else frozenset((n.text or "").strip() for n in element.iter("Name"))
            )
    return found


def _variable(v) -> Variable:
    start = None
    if v.start is not None and v.type in NUMERIC_TYPES and not v.shape:
        text = str(v.start).strip().lower()
        with contextlib.suppress(TypeError, ValueError):  # not a number: None
            start = float({"true": 1.0, "false": 0.0}.get(text, text))
    unit = v.unit or getattr(v.declaredType, "unit", None)
    return Variable(
        v.name,
        int(v.valueReference),
        v.type,
        v.causality,
        v.variability,
        start,
        None if v.start is None else str(v.start),
        unit,
        tuple(v.shape or ()),
    )


class _Folders:
    """The unpacked folders alive in this process; removed at exit and on SIGTERM."""

    def __init__(self) -> None:
        self._live: set[Path] = set()
        self._armed = False
        self._handled = threading.Event()  # the SIGTERM handler has run
        self._wakeup = -1  # the write end of the watcher's pipe, if it watches

    def new(self) -> Path:
        if not self._armed:  # with the first folder: removed at exit and on SIGTERM
            self._armed = True
            atexit.register(self.remove_all)
            if hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=self._rewatch)
            is_main = threading.current_thread() is threading.main_thread()
            if is_main and signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, self._exit_on_sigterm)
                self._watch()
        folder = new_folder("fmibridge_")  # a killed process's: removed here
        self._live.add(folder)
        return folder

    def remove(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        self._live.discard(folder)

    def remove_all(self) -> None:
        for folder in list(self._live):
            self.remove(folder)

    def _exit_on_sigterm(self, signum: int, frame: object) -> None:
        self._handled.set()
        raise SystemExit(128 + signum)

    def _watch(self) -> None:
        """Start the watcher, woken by `signal.set_wakeup_fd` (if no other is set)."""
        if not hasattr(signal, "pthread_sigmask"):  # Windows: no SIGTERM to send
            return
        read, write = os.pipe()
        os.set_blocking(write, False)  # as set_wakeup_fd asks
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        if previous != -1:
            signal.set_wakeup_fd(previous)
            os.close(read)
            os.close(write)
            return
        self._wakeup = write
        watcher = threading.Thread(
            target=self._watcher, args=(read,), name="fmibridge-sigterm", daemon=True
        )
        held = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHER_BLOCKS)
        try:  # started with them blocked: the main thread's mask decides
            watcher.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)

    def _watcher(self, read: int) -> None:
        """On SIGTERM, end the process where the main thread stays in a C call."""
        while True:
            woken = os.read(read, 64)  # one byte per signal, its number
            if signal.SIGTERM not in woken:
                continue
            where = _main_thread_at()
            if self._handled.wait(SIGTERM_GRACE_S) or _main_thread_at() != where:
                continue
            if signal.getsignal(signal.SIGTERM) == self._exit_on_sigterm:
                self.remove_all()
                os._exit(128 + signal.SIGTERM)

    def _rewatch(self) -> None:
        """In a forked child: leave the parent's folders and pipe; watch anew."""
        self._live = set()
        if self._wakeup != -1 and signal.set_wakeup_fd(-1) == self._wakeup:
            self._watch()


def _main_thread_at() -> tuple[object, int]:
    """The main thread's innermost frame and last instruction."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    return frame, -1 if frame is None else frame.f_lasti


_FOLDERS = _Folders()
