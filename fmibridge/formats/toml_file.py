"""Reading a TOML file (an adapter file, a sweep spec) with one clear error.

Each way a file can be unreadable (missing, a directory, not UTF-8 as TOML
requires, not TOML) becomes one error naming the file, not a traceback.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..core.errors import FmibridgeError


def read_toml(
    path: Path, what: str, error: type[FmibridgeError] = FmibridgeError
) -> dict[str, Any]:
    """Return the table of the TOML file `path`, a `what` ("adapter file").

    Raises
    ------
    error
        Naming the file and what is wrong with it.
    """
    if path.is_dir():
        raise error(f"{path}: is a folder, not {what}.")
    if not path.is_file():
        raise error(f"{path}: no such {what}.")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
            f"{exc.start}); TOML files must be saved as UTF-8."
        ) from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}.") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}.") from None
