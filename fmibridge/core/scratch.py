"""Temporary folders named by the process that owns them, so that the folders of
a process that was killed (SIGKILL, an out-of-memory kill) are removed by the
next one.

A process removes its folders itself when it ends or is told to (atexit,
SIGTERM, `finally`), but a process killed outright cannot: its unpacked FMUs
stayed in the temporary folder for good. Each folder's name carries its
owner's process id (``fmibridge_<pid>_...``); the first folder a process makes
with a prefix removes the folders of that prefix whose owner no longer runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_SWEPT: set[tuple[str, str]] = set()  # (temporary folder, prefix) swept already


def new_folder(prefix: str) -> Path:
    """Make a new temporary folder ``<prefix><pid>_...`` and return it, after
    removing (once per process) those of `prefix` whose process has ended."""
    parent = tempfile.gettempdir()
    if (parent, prefix) not in _SWEPT:
        _SWEPT.add((parent, prefix))
        remove_stale(Path(parent), prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}_"))


def remove_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders ``<prefix><pid>_...`` in `parent` whose process no
    longer runs; return them."""
    removed = []
    with os.scandir(parent) as entries:
        for entry in entries:  # a shared temporary folder holds many others'
            if not entry.name.startswith(prefix):
                continue
            pid = entry.name[len(prefix) :].partition("_")[0]
            if not pid.isdigit():
                continue
            if entry.is_dir(follow_symlinks=False) and not is_running(int(pid)):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    return removed


def is_running(pid: int) -> bool:
    """True if process `pid` exists (another user's included); on Windows,
    where signal 0 would end the process, always True."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
