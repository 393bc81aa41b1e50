"""Temporary folders named by their process (``fmibridge_<pid>_...``), so the
folders of a process killed outright (SIGKILL, out of memory) are removed by
the next one to make a folder of that prefix.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_SWEPT: set[tuple[str, str]] = set()  # (temporary folder, prefix) swept already


def new_folder(prefix: str) -> Path:
    """Make and return a temporary folder ``<prefix><pid>_...``, after removing
    (once per process) those of `prefix` whose process has ended."""
    parent = tempfile.gettempdir()
    if (parent, prefix) not in _SWEPT:
        _SWEPT.add((parent, prefix))
        remove_stale(Path(parent), prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}_"))


def remove_stale(parent: Path, prefix: str) -> None:
    """Remove the folders ``<prefix><pid>_...`` in `parent` whose process no
    longer runs."""
    with os.scandir(parent) as entries:
        for entry in entries:  # a shared temporary folder holds many others'
            pid = entry.name[len(prefix) :].partition("_")[0]
            if not (entry.name.startswith(prefix) and pid.isdigit()):
                continue
            if entry.is_dir(follow_symlinks=False) and not is_running(int(pid)):
                shutil.rmtree(entry.path, ignore_errors=True)


def is_running(pid: int) -> bool:
    """True if process `pid` exists (always on Windows: signal 0 would end it)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
