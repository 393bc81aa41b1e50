"""Temporary folders named by their process (``fmibridge_<pid>_...``), kept in
fmibridge's own folder of the temporary directory (`own_folder`), so the
folders of a process killed outright (SIGKILL, out of memory) are removed by
the next one to make a folder of that prefix, which reads that folder only,
not a shared temporary directory of thousands of others' entries.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import FmibridgeError

_SWEPT: set[tuple[Path, str]] = set()  # (own folder, prefix) swept already


def new_folder(prefix: str) -> Path:
    """Make and return a temporary folder ``<prefix><pid>_...`` in `own_folder`,
    after removing (once per process) those of `prefix` whose process has ended."""
    parent = own_folder()
    if (parent, prefix) not in _SWEPT:
        _SWEPT.add((parent, prefix))
        remove_stale(parent, prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}_", dir=parent))


def own_folder() -> Path:
    """fmibridge's folder in the temporary directory, ``fmibridge-<uid>``: made
    with mode 0o700, and refused unless it is a folder this user owns (not a
    link), so that another user cannot plant or read what is unpacked there."""
    uid = os.getuid() if hasattr(os, "getuid") else None  # Windows: none, per user
    name = "fmibridge" if uid is None else f"fmibridge-{uid}"
    folder = Path(tempfile.gettempdir()) / name
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or (uid is not None and info.st_uid != uid):
        raise FmibridgeError(
            f"{folder}: fmibridge's temporary folder is not a folder of this user's "
            f"(uid {uid}); remove it, or set TMPDIR to a folder of your own."
        )
    if uid is not None and stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)  # this user's own, made wider than it should be
    return folder


def remove_stale(parent: Path, prefix: str) -> None:
    """Remove the folders ``<prefix><pid>_...`` in `parent` whose process no
    longer runs."""
    with os.scandir(parent) as entries:
        for entry in entries:
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
