"""The compiled FMU kernels on a cold start: run in Python, compile in the background.

numba compiles the kernels of the FMU loops (`fmu_kernels`, with `_kernels`
and `program_kernels`) once per machine into its cache, about 15-25 s of CPU
on a fresh installation. So that no run waits for that, a Model Exchange
flow asks `ready()` before it takes a compiled path. Where the cache is not
known to hold the kernels, the run takes the Python path (the same steps,
bit for bit: `fmu_kernels` follows it operation by operation) and one
background process compiles the kernels (``python -m
fmibridge.flows.kernel_cache``); once it has written its stamp, runs take
the compiled loop, a running one from its next step on. Provenance records
the path each run took (`describe`).

The stamp sits beside numba's cache (NUMBA_CACHE_DIR, else the package's
__pycache__) and names the numba cache folders it filled and a fingerprint
of the kernels' sources, numba and Python: a change of any, or an emptied
cache folder, makes the cache cold again.

The environment variable FMIBRIDGE_KERNELS chooses: "auto" (the default, as
above), "compiled" (always compiled: the first run compiles in-process) or
"python" (never compiled).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ..core.errors import FmibridgeError

ENVIRONMENT = "FMIBRIDGE_KERNELS"
MODES = ("auto", "compiled", "python")
# The kernels' sources: numba's cache entries depend on each (edits invalidate).
SOURCES = (
    "core/bracket.py",
    "core/dense.py",
    "flows/_kernels.py",
    "flows/programs.py",
    "flows/program_kernels.py",
    "flows/fmu_kernels.py",
)
WARMED = ("_kernels", "program_kernels", "fmu_kernels")
# A run looks for the stamp at most this often (s of wall time) while it waits.
CHECK_S = 1.0
# A warm-up that holds its lock longer than this (s) died: another may start.
STALE_S = 900.0

_state = {"ready": False, "next_check": 0.0, "started": False}


def mode() -> str:
    """Return FMIBRIDGE_KERNELS (default "auto").

    Raises
    ------
    FmibridgeError
        If it is set to anything but one of MODES.
    """
    value = os.environ.get(ENVIRONMENT, "auto")
    if value not in MODES:
        raise FmibridgeError(
            f"The environment variable {ENVIRONMENT} must be one of {list(MODES)}, "
            f"got {value!r}."
        )
    return value


def ready() -> bool:
    """Return True if the FMU loops may run compiled now (module docstring).

    In "auto" mode with a cold cache, starts the background warm-up (once)
    and looks for its stamp again after CHECK_S.
    """
    chosen = mode()
    if chosen != "auto":
        return chosen == "compiled"
    if _state["ready"]:
        return True
    now = time.monotonic()
    if now < _state["next_check"]:
        return False
    _state["next_check"] = now + CHECK_S
    if is_warm():
        _state["ready"] = True
        return True
    if not _state["started"]:
        _state["started"] = True
        start_warming()
    return False


def describe(paths: list[tuple[float, str]]) -> str:
    """Return the provenance entry of a run's kernel paths, each (t, path) the
    time from which a path ran: "compiled", "python" or "python, compiled
    from t = T s"."""
    first = paths[0][1]
    if len(paths) == 1:
        return first
    return f"{first}, {paths[1][1]} from t = {paths[1][0]:.6g} s"


def stamp_path() -> Path:
    """Where the stamp lives: beside numba's cache of the kernels."""
    name = f"fmibridge-kernels.{sys.implementation.cache_tag}.json"
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if folder:
        return Path(folder) / name
    package = Path(__file__).resolve().parent
    if os.access(package, os.W_OK):
        return package / "__pycache__" / name
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return home / "fmibridge" / name


def fingerprint() -> dict[str, object]:
    """The sources' sizes and times, numba's and Python's versions."""
    root = Path(__file__).resolve().parent.parent
    sources = {}
    for name in SOURCES:
        info = (root / name).stat()
        sources[name] = [info.st_size, info.st_mtime_ns]
    return {
        "sources": sources,
        "numba": importlib.metadata.version("numba"),
        "python": sys.version,
    }


def is_warm() -> bool:
    """Return True if the stamp is current and its cache folders exist."""
    try:
        stamp = json.loads(stamp_path().read_text())
    except (OSError, ValueError):
        return False
    folders = stamp.get("cache_folders", [])
    return (
        stamp.get("fingerprint") == fingerprint()
        and bool(folders)
        and all(Path(folder).is_dir() for folder in folders)
    )


def start_warming() -> bool:
    """Start the warm-up process unless one runs (its lock); True if started."""
    lock = stamp_path().with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if time.time() - lock.stat().st_mtime > STALE_S:
            lock.unlink()
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    subprocess.Popen(  # noqa: S603 - this interpreter, this module
        [sys.executable, "-m", __name__],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C on the run leaves it compiling
    )
    return True


def warm() -> Path:
    """Compile the kernels into numba's cache and write the stamp; return it."""
    import importlib

    folders = set()
    for name in WARMED:
        module = importlib.import_module(f"{__package__}.{name}")
        for value in vars(module).values():
            stats = getattr(value, "stats", None)  # a numba function's
            if stats is not None and getattr(stats, "cache_path", None):
                folders.add(str(stats.cache_path))
    path = stamp_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    stamp = {"fingerprint": fingerprint(), "cache_folders": sorted(folders)}
    partial.write_text(json.dumps(stamp))
    os.replace(partial, path)
    return path


if __name__ == "__main__":  # the warm-up process of `start_warming`
    warm()  # if it fails, its lock stays: no other starts before STALE_S
    with contextlib.suppress(OSError):
        stamp_path().with_suffix(".lock").unlink()
