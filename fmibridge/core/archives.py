"""Zip archives (FMUs, SSPs) opened within bounds, before anything is unpacked.

`open_checked` refuses an archive beyond the limits (`core.limits`) or with a
member outside its folder; the readers count the bytes actually written
(declared sizes may lie). Errors name archive and member (``a.ssp!b.fmu``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath

from . import limits
from .errors import FmibridgeError

CHUNK = 2**20  # bytes copied per read while unpacking


def open_checked(path: Path, kind: str) -> zipfile.ZipFile:
    """Return the zip archive `path` (a `kind`: "FMU", "SSP") open, its members
    checked (`limits`); the caller closes it. Raise naming the file if it is
    missing, a folder, not a zip, corrupt or beyond the limits."""
    if path.is_dir():
        raise FmibridgeError(
            f"{path}: is a folder, not an {kind} file; an {kind} is a zip archive "
            f"(zip the folder's contents, or give the .{kind.lower()} file)."
        )
    if not path.is_file():
        raise FmibridgeError(f"{path}: no such {kind} file.")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        if not zipfile.is_zipfile(path):  # asked only here: it reads the file again
            raise FmibridgeError(
                f"{path}: not an {kind} (not a zip archive); rebuild or re-export it."
            ) from None
        raise FmibridgeError(f"{path}: corrupt {kind} archive: {exc}") from None
    try:
        _check_members(path, archive.infolist(), kind)
    except BaseException:
        archive.close()
        raise
    return archive


def _check_members(path: Path, members: list[zipfile.ZipInfo], kind: str) -> None:
    """Refuse too many members or bytes, a zip bomb or a member outside the folder."""
    if len(members) > limits.MAX_MEMBERS:
        raise FmibridgeError(
            f"{path}: {len(members)} files in the archive, more than the limit "
            f"{limits.MAX_MEMBERS}; this is not an {kind}."
        )
    declared = sum(m.file_size for m in members)
    if declared > limits.MAX_UNPACKED_BYTES:
        biggest = max(members, key=lambda m: m.file_size)
        raise FmibridgeError(
            f"{path}: unpacks to {declared} bytes ({biggest.filename!r} alone "
            f"{biggest.file_size}), more than the limit of "
            f"{limits.MAX_UNPACKED_BYTES} bytes; set FMIBRIDGE_MAX_FMU_BYTES to "
            f"allow a larger {kind}."
        )
    for member in members:
        member_path(path, member.filename, kind)
        if member.file_size > member_limit(member):
            raise FmibridgeError(
                f"{path}!{member.filename}: unpacks to {member.file_size} bytes "
                f"from {member.compress_size}, more than "
                f"{limits.MAX_COMPRESSION_RATIO} times its compressed size (a zip "
                f"bomb?); set FMIBRIDGE_MAX_COMPRESSION_RATIO to allow it."
            )


def member_limit(member: zipfile.ZipInfo) -> int:
    """Return the bytes `member` may unpack to."""
    ratio_bound = limits.MAX_COMPRESSION_RATIO * member.compress_size
    return max(limits.RATIO_FLOOR_BYTES, ratio_bound)


def member_path(path: Path, name: str, kind: str = "FMU") -> PurePosixPath:
    """Return a member's relative path; refuse one that leaves the folder."""
    parts = PurePosixPath(name.replace("\\", "/"))
    if parts.is_absolute() or ".." in parts.parts or ":" in name:
        raise FmibridgeError(
            f"{path}: archive member {name!r} would be written outside the {kind}'s "
            f"folder; the {kind} is malformed."
        )
    return parts


def read_member(
    archive: zipfile.ZipFile, name: str, limit: int, where: Path | str
) -> bytes:
    """Return member `name` of `archive` (the file `where`), at most `limit`
    bytes; else, or if corrupt, raise."""
    size = archive.getinfo(name).file_size
    if size > limit:
        raise FmibridgeError(
            f"{where}!{name}: {size} bytes, more than the limit of {limit} bytes "
            f"for a file read whole."
        )
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise FmibridgeError(f"{where}!{name}: corrupt archive member: {exc}") from None


def extract_member(
    archive: zipfile.ZipFile, name: str, target: Path, where: Path | str
) -> Path:
    """Copy member `name` to the file `target`, within MAX_UNPACKED_BYTES."""
    target.parent.mkdir(parents=True, exist_ok=True)
    budget = min(limits.MAX_UNPACKED_BYTES, member_limit(archive.getinfo(name)))
    try:
        with archive.open(name) as source, open(target, "wb") as sink:
            _copy(source, sink, budget, f"{where}!{name}")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise FmibridgeError(f"{where}!{name}: corrupt archive member: {exc}") from None
    return target


def unpack(
    archive: zipfile.ZipFile,
    path: Path,
    folder: Path,
    only: tuple[str, ...],
    kind: str = "FMU",
) -> None:
    """Unpack the members of `archive` (the file `path`) whose names start with
    one of the prefixes `only` into `folder`, within MAX_UNPACKED_BYTES."""
    budget = limits.MAX_UNPACKED_BYTES
    try:
        for member in archive.infolist():
            name = member.filename.replace("\\", "/")  # as `member_path` reads it
            if not name.startswith(only):
                continue
            target = folder.joinpath(*member_path(path, member.filename).parts)
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            limit = min(budget, member_limit(member))
            with archive.open(member) as source, open(target, "wb") as sink:
                budget -= _copy(source, sink, limit, f"{path}!{member.filename}")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise FmibridgeError(f"{path}: corrupt {kind} archive: {exc}") from None


def _copy(source, sink, budget: int, where: str) -> int:
    """Copy at most `budget` bytes; return how many."""
    copied = 0
    while chunk := source.read(CHUNK):
        copied += len(chunk)
        if copied > budget:
            raise FmibridgeError(
                f"{where}: unpacks to more than {budget} bytes, its share of the "
                f"limit of {limits.MAX_UNPACKED_BYTES} bytes or "
                f"{limits.MAX_COMPRESSION_RATIO} times its compressed size; set "
                f"FMIBRIDGE_MAX_FMU_BYTES or FMIBRIDGE_MAX_COMPRESSION_RATIO to "
                f"allow more."
            )
        sink.write(chunk)
    return copied
