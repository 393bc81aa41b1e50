"""Output files: checked before a run, written whole or not at all; and
temporary folders, named by their process.

`claimed` creates each file empty and locked (flock) for the run, so a second
run on the same path fails before simulating (an unlocked empty claim, a killed
run's, is taken over). A file is written under a temporary name with the
writer's process id, then renamed: a reader never sees half a file. Temporary
folders (``<prefix><pid>_...``) go in fmibridge's own folder of the temporary
directory (`own_folder`); those of a process killed outright are removed by the
next one to make a folder of that prefix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .errors import FmibridgeError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


def check_output(
    path: str | Path, *, force: bool = False, what: str = "output"
) -> Path:
    """Return `path` if a file can be written there now (an existing one only
    with `force`); else raise, naming it as `what` (``"--out"``)."""
    if str(path) == "":
        raise FmibridgeError(f"{what} is empty; give a file name such as run.csv.")
    path = Path(path)
    if path.is_dir():
        raise FmibridgeError(f"{what} {path} is a folder; give a file name in it.")
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise FmibridgeError(f"{what} {path} exists and is not a regular file.")
        if not (force or _is_stale_claim(path)):
            raise FmibridgeError(f"{what} {path} exists; pass --force to replace it.")
    check_folder_writable(path.parent, what)
    return path


def check_output_folder(
    path: str | Path, *, force: bool = False, what: str = "output"
) -> Path:
    """Return `path` if a folder of new files can be made there (an existing
    one empty, or `force`); else raise."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise FmibridgeError(f"{what} {path} exists and is not a folder.")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise FmibridgeError(
            f"{what} {path} is a folder with files in it; pass --force to write "
            f"over them."
        )
    check_folder_writable(path.parent, what)
    return path


def check_folder_writable(folder: Path, what: str = "output") -> None:
    """Raise FmibridgeError unless `folder` exists and takes a new file."""
    if not folder.is_dir():
        raise FmibridgeError(f"{what}: folder {folder} does not exist.")
    probe = _temporary(folder / "probe")
    try:
        probe.open("x").close()
    except OSError as exc:
        raise FmibridgeError(
            f"{what}: cannot write in {folder}: {exc.strerror or exc}."
        ) from None
    probe.unlink()


@contextlib.contextmanager
def claimed(
    path: Path | None, *, force: bool = False, what: str = "output"
) -> Iterator[Path | None]:
    """Create `path` empty and locked for the block (unless `force` or None);
    remove it after unless the block wrote it. Raise if it exists."""
    if path is None or force:
        yield path
        return
    try:
        fd = _claim(path)
    except FileExistsError:
        raise FmibridgeError(
            f"{what} {path} exists (another run may be writing it); pass --force to "
            f"replace it."
        ) from None
    except OSError as exc:
        raise FmibridgeError(f"{what}: cannot write {path}: {exc.strerror}.") from None
    claim = os.fstat(fd).st_ino
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == claim:  # still the empty claim: not written
                os.unlink(path)
        os.close(fd)  # and its lock


def _claim(path: Path) -> int:
    """Create `path` empty and locked, atomically (made under a temporary name,
    then linked; FileExistsError unless a stale claim); return its descriptor."""
    _is_stale_claim(path, remove=True)
    temporary = _temporary(path)
    fd = _locked_new(temporary)
    try:
        os.link(temporary, path)
    except FileExistsError:
        os.close(fd)
        raise
    except OSError:  # a filesystem without hard links: made, then locked
        os.close(fd)
        fd = _locked_new(path)
    finally:
        temporary.unlink(missing_ok=True)
    return fd


def _locked_new(path: Path) -> int:
    """Create the file `path`, locked where flock works; return its descriptor."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    if fcntl is not None:
        with contextlib.suppress(OSError):  # a filesystem without locks
            fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _is_stale_claim(path: Path, *, remove: bool = False) -> bool:
    """True for an empty regular file no process holds locked (without flock:
    never); with `remove`, removed while holding its lock."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size:
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a run holds it
        if remove and os.stat(path).st_ino == found.st_ino:
            os.unlink(path)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # and the lock just taken


def _file_path(path: object) -> Path:
    """`path` as a Path if it names a file (not '' or '.'); else raise."""
    if isinstance(path, str | os.PathLike) and Path(path).name not in ("", "."):
        return Path(path)
    raise FmibridgeError(
        f"Cannot write {path!r}: give a file path such as 'run.csv' (a Result "
        f"writes files; `to_pandas().to_csv()` returns the text)."
    )


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call write(temporary) beside `path`, then rename it to `path`; on
    failure raise, `path` unchanged and no temporary file left."""
    return write_together({path: write})[0]


def write_together(writes: Mapping[str | Path, Callable[[Path], object]]) -> list[Path]:
    """Write several files as a unit: each `write(temporary)` beside its path,
    then all renamed under a lock on their folders, so two writers' files
    never mix and a failure (raised) leaves the old files.
    """
    by_path = {_file_path(p): write for p, write in writes.items()}
    paths = list(by_path)
    for path in paths:
        if not path.parent.is_dir():
            raise FmibridgeError(
                f"Cannot write {path}: folder {path.parent} does not exist."
            )
        for entry in _orphans(path.parent, f".{path.name}.", "."):  # dead writers'
            if entry.name.endswith(".tmp"):
                Path(entry.path).unlink(missing_ok=True)
    temporaries = [_temporary(p) for p in paths]
    current = paths[0]  # the file being written, for the message
    try:
        for current, temporary in zip(paths, temporaries, strict=True):
            temporary.open("x").close()  # exclusive: never another's; umask mode
            by_path[current](temporary)
        with _locked({p.parent for p in paths}):
            for current, temporary in zip(paths, temporaries, strict=True):
                os.replace(temporary, current)
    except OSError as exc:
        raise FmibridgeError(
            f"Cannot write {current}: {exc.strerror or exc}."
        ) from None
    finally:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
    return paths


@contextlib.contextmanager
def _locked(folders: set[Path]) -> Iterator[None]:
    """Hold an exclusive flock on each folder, in a fixed order (if flock works)."""
    with contextlib.ExitStack() as stack:
        if fcntl is not None:  # else (Windows) two writers' renames may interleave
            for folder in sorted(folders):
                fd = os.open(folder, os.O_RDONLY)
                stack.callback(os.close, fd)
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
        yield


def _temporary(path: Path) -> Path:
    """A fresh hidden name beside `path`, with this process's id."""
    import uuid  # only a run that writes a file needs it

    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")


_SWEPT: set[tuple[Path, str]] = set()  # (own folder, prefix) swept already


def new_folder(prefix: str) -> Path:
    """Make and return a temporary folder ``<prefix><pid>_...`` in `own_folder`,
    after removing (once per process) those of `prefix` whose process has ended."""
    parent = own_folder()
    if (parent, prefix) not in _SWEPT:
        _SWEPT.add((parent, prefix))
        for entry in _orphans(parent, prefix, "_"):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
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


def _orphans(parent: Path, prefix: str, end: str) -> Iterator[os.DirEntry]:
    """The entries ``<prefix><pid><end>...`` of `parent` whose process has ended."""
    with os.scandir(parent) as entries:
        for entry in entries:
            pid = entry.name[len(prefix) :].partition(end)[0]
            if entry.name.startswith(prefix) and _has_ended(pid):
                yield entry


def _has_ended(pid: str) -> bool:
    """True if process `pid` no longer runs (never on Windows: signal 0 ends it)."""
    if not pid.isdigit() or os.name == "nt":
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process
        pass
    return False
