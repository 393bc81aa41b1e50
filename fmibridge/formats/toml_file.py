"""Reading a TOML file (an adapter file, a sweep spec) with one clear error
naming the file: missing, a folder, not UTF-8, not TOML, or too deep.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..core.errors import FmibridgeError
from ..core.limits import MAX_TOML_DEPTH


def read_toml(
    path: Path, what: str, error: type[FmibridgeError] = FmibridgeError
) -> dict[str, Any]:
    """Return the table of the TOML file `path`, a `what` ("adapter file"); raise
    `error` naming the file and what is wrong with it."""
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
        table = tomllib.loads(text)
        key = _too_deep(table)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}.") from None
    except RecursionError:  # Python's reader recurses into each nested value
        key = "a value"
    if key is not None:
        raise error(
            f"{path}: {key} nests tables or arrays more than {MAX_TOML_DEPTH} levels "
            f"deep; fmibridge's files need a few."
        )
    return table


def _too_deep(table: dict[str, Any]) -> str | None:
    """The first key whose value nests deeper than MAX_TOML_DEPTH, or None."""
    stack = [(key, value, 1) for key, value in table.items()]
    while stack:  # each value is visited once
        key, value, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            return f"`{key.split('.')[0].split('[')[0]}`"
        if isinstance(value, dict):
            stack += [(f"{key}.{k}", v, depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(f"{key}[{i}]", v, depth + 1) for i, v in enumerate(value)]
    return None
