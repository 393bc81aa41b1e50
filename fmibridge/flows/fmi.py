"""The lower FMI layer: one FMU instance, fmpy calls, statuses as FMUError.

The FMI version and interface type are chosen once, by class:
`Fmi2Model`, `Fmi3Model` (Model Exchange) and `Fmi2Slave`, `Fmi3Slave`
(Co-Simulation) share one vocabulary (`set_reals`, `get_state`, ...), so the
upper layer (`fmu.py`) never asks which version it drives.
"""

from __future__ import annotations

import ctypes
import functools
import math
import platform
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import FmibridgeError, FMUError

STATUS_LABELS = ("ok", "warning", "discard", "error", "fatal", "pending")


def _fmi_call(method: Callable) -> Callable:
    """Turn fmpy's FMICallException into FMUError naming the function and file."""
    from fmpy.fmi1 import FMICallException  # imported once, not on every call

    @functools.wraps(method)
    def call(self: FmiInstance, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except FMICallException as exc:
            raise _status_error(self, exc.function, exc.status) from None

    return call


def _status_error(instance: FmiInstance, function: str, status: int) -> FMUError:
    label = STATUS_LABELS[status] if status in range(6) else str(status)
    return FMUError(function, label, instance.path, instance.log_tail())


FMI_WARNING = 1  # fmi2Warning = fmi3Warning: statuses above it are failures


@dataclass(frozen=True)
class Variable:
    """One FMU variable as the model description declares it."""

    name: str
    vr: int
    type: str
    causality: str
    variability: str
    start: float | None


_INSTANCES: dict[str, FmiInstance] = {}  # live instances by name, for FMI 2 log routing
_FMI2_LOGGER = None


def _route_fmi2_message(env, instance_name, status, category, message) -> None:
    """Give an FMI 2 log message to its instance; print those of other FMUs."""
    text = message.decode("utf-8", "replace") if message else ""
    instance = _INSTANCES.get(
        instance_name.decode("utf-8", "replace") if instance_name else ""
    )
    if instance is not None:
        instance._log(text)
    else:
        label = STATUS_LABELS[status] if status in range(6) else str(status)
        print(f"[{label.upper()}] {text}")


def _fmi2_logger():
    """Return the one permanent FMI 2 logger callback (created on first use)."""
    global _FMI2_LOGGER
    if _FMI2_LOGGER is None:
        from fmpy.fmi2 import fmi2CallbackLoggerTYPE

        _FMI2_LOGGER = fmi2CallbackLoggerTYPE(_route_fmi2_message)
    return _FMI2_LOGGER


class FmiInstance:
    """One instantiated FMU. Subclasses bind one FMI version and interface."""

    interface: str = ""  # "ModelExchange" or "CoSimulation"

    def __init__(self, path: Path, description, unzip_dir: Path) -> None:
        self.path = str(path)
        self.description = description
        self.name = f"fmibridge-{id(self):x}"  # unique: routes this instance's log
        self._messages: list[str] = []
        self._fmu = self._create(description, unzip_dir)
        _INSTANCES[self.name] = self
        self._instantiate()
        self._bind()

    def _log(self, text: str) -> None:
        self._messages = (self._messages + [text])[-20:]  # keep the last few for errors

    def log_tail(self) -> str:
        return f"FMU log: {' | '.join(self._messages[-3:])}" if self._messages else ""

    def free(self) -> None:
        """Terminate and free the instance; safe to call twice."""
        fmu, self._fmu = self._fmu, None
        if fmu is None:
            return
        try:
            fmu.terminate()
        except Exception:  # noqa: BLE001 - freeing must go on whatever the FMU says
            pass
        fmu.freeInstance()
        _INSTANCES.pop(self.name, None)

    def _bind(self) -> None:
        """Prepare fast per-step calls after instantiation (Model Exchange)."""

    def _set_start(self, reals: dict[int, float], ints: dict[int, int]) -> None:
        """Set start values (or discrete inputs), reals and integers."""
        if reals:
            self.set_reals(list(reals), list(reals.values()))
        if ints:
            self.set_ints(list(ints), list(ints.values()))

    @_fmi_call
    def reset(self) -> None:
        self._fmu.reset()

    def c_address(self, function: str) -> int:
        """Return the address of the FMU's C function `function` (compiled loops)."""
        return ctypes.cast(self._fmu._functions[function], ctypes.c_void_p).value

    def real_ports(self, vrs: Sequence[int]) -> RealPorts:
        """Return fast get and set of the Real variables `vrs` (`RealPorts`)."""
        return RealPorts(self, vrs)

    # -- implemented per version ------------------------------------------------
    def _create(self, description, unzip_dir: Path): ...
    def _instantiate(self) -> None: ...


class _Fmi2:
    """FMI 2.0 calls shared by Model Exchange and Co-Simulation."""

    real_functions = ("fmi2GetReal", "fmi2SetReal")
    counts_values = False  # fmi2GetReal takes no nValues argument

    def _logger(self):
        from fmpy.fmi2 import defaultCallbacks, fmi2CallbackFunctions
        from fmpy.logging import addLoggerProxy

        callbacks = fmi2CallbackFunctions()
        callbacks.logger = _fmi2_logger()
        callbacks.allocateMemory = defaultCallbacks.allocateMemory
        callbacks.freeMemory = defaultCallbacks.freeMemory
        # fmpy's native proxy formats the printf-style arguments; it keeps ONE
        # process-wide logger, so ours is a permanent module-level function that
        # routes each message to its instance by name (see _route_fmi2_message).
        addLoggerProxy(ctypes.byref(callbacks))
        self._callbacks = callbacks  # keep alive while the instance lives
        return callbacks

    @_fmi_call
    def _instantiate(self) -> None:
        self._fmu.instantiate(callbacks=self._logger(), loggingOn=True)

    @_fmi_call
    def initialize(
        self, t0: float, reals: dict[int, float], ints: dict[int, int]
    ) -> None:
        self._fmu.setupExperiment(startTime=t0)
        self._set_start(reals, ints)
        self._fmu.enterInitializationMode()
        self._fmu.exitInitializationMode()

    @_fmi_call
    def set_reals(self, vrs: Sequence[int], values: Sequence[float]) -> None:
        self._fmu.setReal(list(vrs), list(values))

    @_fmi_call
    def get_reals(self, vrs: Sequence[int]) -> list[float]:
        return self._fmu.getReal(list(vrs))

    @_fmi_call
    def set_ints(self, vrs: Sequence[int], values: Sequence[int]) -> None:
        self._fmu.setInteger(list(vrs), list(values))

    @_fmi_call
    def get_state(self):
        return self._fmu.getFMUstate()

    @_fmi_call
    def set_state(self, state) -> None:
        self._fmu.setFMUstate(state)

    def free_state(self, state) -> None:
        if self._fmu is not None:
            self._fmu.freeFMUstate(state)


class _Fmi3:
    """FMI 3.0 calls shared by Model Exchange and Co-Simulation."""

    real_functions = ("fmi3GetFloat64", "fmi3SetFloat64")
    counts_values = True  # fmi3GetFloat64(..., values, nValues)

    def _logger(self):
        def log(env, status, category, message):
            self._log(message.decode("utf-8", "replace"))

        return log

    @_fmi_call
    def initialize(
        self, t0: float, reals: dict[int, float], ints: dict[int, int]
    ) -> None:
        self._set_start(reals, ints)
        self._fmu.enterInitializationMode(startTime=t0)
        self._fmu.exitInitializationMode()

    @_fmi_call
    def set_reals(self, vrs: Sequence[int], values: Sequence[float]) -> None:
        self._fmu.setFloat64(list(vrs), list(values))

    @_fmi_call
    def get_reals(self, vrs: Sequence[int]) -> list[float]:
        return self._fmu.getFloat64(list(vrs))

    @_fmi_call
    def set_ints(self, vrs: Sequence[int], values: Sequence[int]) -> None:
        self._fmu.setInt32(list(vrs), list(values))

    @_fmi_call
    def get_state(self):
        return self._fmu.getFMUState()

    @_fmi_call
    def set_state(self, state) -> None:
        self._fmu.setFMUState(state)

    def free_state(self, state) -> None:
        if self._fmu is not None:
            self._fmu.freeFMUState(state)


class RealPorts:
    """Get and set one fixed list of Real variables of an instance, fast.

    The FMI get and set functions are bound to the component, the value
    references and one buffer, as `_ModelExchange._bind` binds the per-step
    calls: fmpy's wrappers build their arrays on every call. A coupled system
    reads and writes its connections through these at every stage.
    """

    def __init__(self, instance: FmiInstance, vrs: Sequence[int]) -> None:
        n = len(vrs)
        self._instance, self._names = instance, instance.real_functions
        self.values = np.zeros(n)
        self._vrs = (ctypes.c_uint32 * max(n, 1))(*vrs)
        pointer = self.values.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        count = (ctypes.c_size_t(n),) if instance.counts_values else ()
        fmu = instance._fmu
        get, set_ = (fmu._functions[name] for name in self._names)
        bound = (fmu.component, self._vrs, ctypes.c_size_t(n), pointer, *count)
        self._get = functools.partial(get, *bound) if n else None
        self._set = functools.partial(set_, *bound) if n else None

    def get(self) -> np.ndarray:
        """Return the variables' current values."""
        if self._get is not None:
            status = self._get()
            if status > FMI_WARNING:
                raise _status_error(self._instance, self._names[0], status)
        return self.values.copy()

    def set(self, values: np.ndarray) -> None:
        """Set the variables to `values`."""
        if self._set is not None:
            self.values[...] = values
            status = self._set()
            if status > FMI_WARNING:
                raise _status_error(self._instance, self._names[1], status)


class _ModelExchange(FmiInstance):
    """Model Exchange calls with preallocated ctypes buffers.

    The per-step calls (set time and states, get derivatives and event
    indicators) go straight to the FMU's C functions with the component bound
    and their status checked here: fmpy's Python wrappers around them cost
    more than the calls (fmibridge bench, master overhead).
    """

    interface = "ModelExchange"
    _c_names: tuple[str, str, str, str]  # setTime, setContinuousStates, derivatives, z

    def _buffers(self) -> None:
        nx = self.description.numberOfContinuousStates
        nz = self.description.numberOfEventIndicators
        self.nx, self.nz = nx, nz
        self._x, self._dx, self._z = np.zeros(nx), np.zeros(nx), np.zeros(nz)
        pointer = ctypes.POINTER(ctypes.c_double)
        self._px = self._x.ctypes.data_as(pointer)
        self._pdx = self._dx.ctypes.data_as(pointer)
        self._pz = self._z.ctypes.data_as(pointer)
        self._t = math.nan  # the FMU's time as last set: setTime is skipped if equal

    def _bind(self) -> None:
        """Bind the component, buffer and size to the per-step C functions."""
        functions, component = self._fmu._functions, self._fmu.component
        functions_in_order = [functions[name] for name in self._c_names]
        set_time, set_states, derivatives, indicators = functions_in_order
        nx, nz = ctypes.c_size_t(self.nx), ctypes.c_size_t(self.nz)  # converted once
        self._c_set_time = functools.partial(set_time, component)
        self._c_set_states = functools.partial(set_states, component, self._px, nx)
        self._c_derivatives = functools.partial(derivatives, component, self._pdx, nx)
        self._c_indicators = functools.partial(indicators, component, self._pz, nz)
        # The same four functions and the component as plain addresses, for the
        # compiled loop (`fmu_kernels.fmu_flight`): FMI 2 and 3 declare them alike.
        addresses = [ctypes.cast(f, ctypes.c_void_p).value for f in functions_in_order]
        handle = getattr(component, "value", component)  # c_void_p or int
        self.c_calls = np.array([*addresses, handle], dtype=np.uint64)

    def forget_time(self) -> None:
        """Drop the cached FMU time: call after anything else set it (`c_calls`)."""
        self._t = math.nan

    def set_time_and_states(self, t: float, x: np.ndarray) -> None:
        if t != self._t:  # the RK stages and guards share times (c = 1/2, 1/2; t + h)
            status = self._c_set_time(t)
            if status > FMI_WARNING:
                raise _status_error(self, self._c_names[0], status)
            self._t = t
        self._x[...] = x  # faster than [:] for small arrays (no slice object)
        status = self._c_set_states()
        if status > FMI_WARNING:
            raise _status_error(self, self._c_names[1], status)

    @_fmi_call
    def get_states(self) -> np.ndarray:
        self._fmu.getContinuousStates(self._px, self.nx)
        return self._x.copy()

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return dx/dt at (t, x)."""
        self.set_time_and_states(t, x)
        status = self._c_derivatives()
        if status > FMI_WARNING:
            raise _status_error(self, self._c_names[2], status)
        return self._dx.copy()

    def event_indicators(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return the event indicators at (t, x)."""
        self.set_time_and_states(t, x)
        status = self._c_indicators()
        if status > FMI_WARNING:
            raise _status_error(self, self._c_names[3], status)
        return self._z.copy()

    def reset(self) -> None:
        super().reset()
        self._t = math.nan


class Fmi2Model(_Fmi2, _ModelExchange):
    """An FMI 2.0 Model Exchange instance."""

    _c_names = (
        "fmi2SetTime",
        "fmi2SetContinuousStates",
        "fmi2GetDerivatives",
        "fmi2GetEventIndicators",
    )

    def _create(self, description, unzip_dir):
        from fmpy.fmi2 import FMU2Model

        self._buffers()
        return FMU2Model(
            guid=description.guid,
            unzipDirectory=str(unzip_dir),
            modelIdentifier=description.modelExchange.modelIdentifier,
            instanceName=self.name,
        )

    @_fmi_call
    def event_iteration(
        self, max_iterations: int, ints: dict[int, int] | None = None
    ) -> bool:
        """Enter event mode, set discrete inputs `ints`, update; True if x changed."""
        self._fmu.enterEventMode()
        if ints:
            self._set_start({}, ints)
        changed = self._update(max_iterations)
        self._fmu.enterContinuousTimeMode()
        return changed

    @_fmi_call
    def finish_initialization(self, max_iterations: int) -> None:
        self._update(max_iterations)
        self._fmu.enterContinuousTimeMode()

    def _update(self, max_iterations: int) -> bool:
        changed = False
        for _ in range(max_iterations):
            needed, terminate, _, values_changed, _, _ = self._fmu.newDiscreteStates()
            changed |= values_changed
            if terminate:
                raise FMUError(
                    "fmi2NewDiscreteStates", "terminateSimulation", self.path
                )
            if not needed:
                return changed
        raise FMUError(
            "fmi2NewDiscreteStates",
            "no fixed point",
            self.path,
            f"discrete states still changing after {max_iterations} event iterations",
        )


class Fmi3Model(_Fmi3, _ModelExchange):
    """An FMI 3.0 Model Exchange instance."""

    _c_names = (
        "fmi3SetTime",
        "fmi3SetContinuousStates",
        "fmi3GetContinuousStateDerivatives",
        "fmi3GetEventIndicators",
    )

    def _create(self, description, unzip_dir):
        from fmpy.fmi3 import FMU3Model

        self._buffers()
        return FMU3Model(
            guid=description.guid,
            unzipDirectory=str(unzip_dir),
            modelIdentifier=description.modelExchange.modelIdentifier,
            instanceName=self.name,
        )

    @_fmi_call
    def _instantiate(self) -> None:
        self._fmu.instantiate(loggingOn=True, logMessage=self._logger())

    @_fmi_call
    def event_iteration(
        self, max_iterations: int, ints: dict[int, int] | None = None
    ) -> bool:
        """Enter event mode, set discrete inputs `ints`, update; True if x changed."""
        self._fmu.enterEventMode()
        if ints:
            self._set_start({}, ints)
        changed = self._update(max_iterations)
        self._fmu.enterContinuousTimeMode()
        return changed

    @_fmi_call
    def finish_initialization(self, max_iterations: int) -> None:
        self._update(max_iterations)
        self._fmu.enterContinuousTimeMode()

    def _update(self, max_iterations: int) -> bool:
        changed = False
        for _ in range(max_iterations):
            needed, terminate, _, values_changed, _, _ = (
                self._fmu.updateDiscreteStates()
            )
            changed |= bool(values_changed)
            if terminate:
                raise FMUError(
                    "fmi3UpdateDiscreteStates", "terminateSimulation", self.path
                )
            if not needed:
                return changed
        raise FMUError(
            "fmi3UpdateDiscreteStates",
            "no fixed point",
            self.path,
            f"discrete states still changing after {max_iterations} event iterations",
        )


class Fmi2Slave(_Fmi2, FmiInstance):
    """An FMI 2.0 Co-Simulation instance."""

    interface = "CoSimulation"

    def _create(self, description, unzip_dir):
        from fmpy.fmi2 import FMU2Slave

        return FMU2Slave(
            guid=description.guid,
            unzipDirectory=str(unzip_dir),
            modelIdentifier=description.coSimulation.modelIdentifier,
            instanceName=self.name,
        )

    @_fmi_call
    def do_step(self, t: float, h: float) -> None:
        self._fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)


class Fmi3Slave(_Fmi3, FmiInstance):
    """An FMI 3.0 Co-Simulation instance."""

    interface = "CoSimulation"

    def _create(self, description, unzip_dir):
        from fmpy.fmi3 import FMU3Slave

        return FMU3Slave(
            guid=description.guid,
            unzipDirectory=str(unzip_dir),
            modelIdentifier=description.coSimulation.modelIdentifier,
            instanceName=self.name,
        )

    @_fmi_call
    def _instantiate(self) -> None:
        self._fmu.instantiate(loggingOn=True, logMessage=self._logger())

    @_fmi_call
    def initialize(
        self, t0: float, reals: dict[int, float], ints: dict[int, int]
    ) -> None:
        _Fmi3.initialize.__wrapped__(self, t0, reals, ints)
        self._fmu.enterStepMode()

    @_fmi_call
    def do_step(self, t: float, h: float) -> None:
        _, terminate, _, _ = self._fmu.doStep(t, h)
        if terminate:
            raise FMUError("fmi3DoStep", "terminateSimulation", self.path)


INSTANCE_CLASSES = {
    ("2.0", "ModelExchange"): Fmi2Model,
    ("2.0", "CoSimulation"): Fmi2Slave,
    ("3.0", "ModelExchange"): Fmi3Model,
    ("3.0", "CoSimulation"): Fmi3Slave,
}


def binary_folder(fmi_version: str) -> str:
    """Return this platform's binaries/ folder name for the FMI version."""
    machine = (
        "x86_64" if platform.machine() in ("x86_64", "AMD64") else platform.machine()
    )
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win"}.get(
        platform.system()
    )
    if fmi_version.startswith("2"):
        bits = "64" if machine in ("x86_64", "aarch64") else "32"
        return f"{system}{bits}"
    return f"{machine}-{system}"


class FmuArchive:
    """An FMU file, checked and unpacked once; closed with the last instance."""

    def __init__(self, path: str | Path) -> None:
        import fmpy

        self.path = Path(path)
        if not self.path.is_file():
            raise FmibridgeError(f"{self.path}: no such FMU file.")
        if not zipfile.is_zipfile(self.path):
            raise FmibridgeError(
                f"{self.path}: not an FMU (not a zip archive); rebuild or re-export it."
            )
        try:
            self.description = fmpy.read_model_description(str(self.path))
        except Exception as exc:  # noqa: BLE001 - fmpy raises bare exceptions on bad XML
            raise FmibridgeError(
                f"{self.path}: unreadable modelDescription.xml: {exc}"
            ) from None
        self.fmi_version = self.description.fmiVersion
        if self.fmi_version not in ("2.0", "3.0"):
            raise FmibridgeError(
                f"{self.path}: FMI {self.fmi_version} is not supported; export "
                f"FMI 2.0 or 3.0."
            )
        self.variables = {v.name: _variable(v) for v in self.description.modelVariables}
        self._unzip_dir: Path | None = None

    @property
    def interfaces(self) -> tuple[str, ...]:
        d = self.description
        return tuple(
            name
            for name, part in (
                ("ModelExchange", d.modelExchange),
                ("CoSimulation", d.coSimulation),
            )
            if part is not None
        )

    def capability(self, interface: str, flag: str) -> bool:
        part = (
            self.description.modelExchange
            if interface == "ModelExchange"
            else self.description.coSimulation
        )
        return bool(getattr(part, flag, False))

    def instantiate(self, interface: str) -> FmiInstance:
        """Return a new instance of the given interface type."""
        if interface not in self.interfaces:
            raise FMUError(
                interface,
                "missing",
                str(self.path),
                f"the FMU offers {list(self.interfaces) or 'no interface'}",
            )
        part = (
            self.description.modelExchange
            if interface == "ModelExchange"
            else self.description.coSimulation
        )
        unzip_dir = self._unzipped()
        folder = binary_folder(self.fmi_version)
        library = unzip_dir / "binaries" / folder / f"{part.modelIdentifier}.so"
        if platform.system() == "Linux" and not library.is_file():
            offered = (
                sorted(p.name for p in (unzip_dir / "binaries").glob("*"))
                if (unzip_dir / "binaries").is_dir()
                else []
            )
            raise FMUError(
                "binaries",
                "missing",
                str(self.path),
                f"no binary for this platform "
                f"(binaries/{folder}/{part.modelIdentifier}.so); "
                f"the FMU has {offered or 'no binaries'}",
            )
        return INSTANCE_CLASSES[(self.fmi_version, interface)](
            self.path, self.description, unzip_dir
        )

    def _unzipped(self) -> Path:
        if self._unzip_dir is None:
            self._unzip_dir = Path(tempfile.mkdtemp(prefix="fmibridge_"))
            try:
                with zipfile.ZipFile(self.path) as archive:
                    archive.extractall(self._unzip_dir)
            except zipfile.BadZipFile as exc:
                raise FmibridgeError(
                    f"{self.path}: corrupt FMU archive: {exc}"
                ) from None
        return self._unzip_dir

    def cleanup(self) -> None:
        if self._unzip_dir is not None:
            shutil.rmtree(self._unzip_dir, ignore_errors=True)
            self._unzip_dir = None


def _variable(v) -> Variable:
    start = None
    if v.start is not None and v.type in (
        "Real",
        "Float64",
        "Integer",
        "Int32",
        "Boolean",
    ):
        try:
            start = float(v.start)
        except (TypeError, ValueError):
            start = None
    return Variable(
        v.name, int(v.valueReference), v.type, v.causality, v.variability, start
    )
