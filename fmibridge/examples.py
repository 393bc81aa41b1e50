"""The README's examples for an installed package: `fmibridge examples DIR`.

A wheel holds no FMUs: they are compiled here, from C. The package carries the
project's adapter files and the sources of its FMUs (``fmibridge/_examples``,
copied in by setup.py's build); in a source checkout they are the repository's
own ``adapters/`` and ``fmus/``. `write_examples` lays them out in a folder as
the repository does (``adapters/*.toml``, ``fmus/<Model>/`` and
``fmus/build/*.fmu``, ``*.ssp``), so the README's commands run from there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .build import build_fmus, repository_folder
from .core.outputs import check_output_folder

PACKAGED = Path(__file__).resolve().parent / "_examples"  # a wheel's copy


def example_sources() -> Path:
    """Return the folder that holds ``adapters/`` and ``fmus/``: the package's
    copy, else the source checkout (or the working directory) as `build` finds
    it."""
    if (PACKAGED / "fmus").is_dir():
        return PACKAGED
    return repository_folder("fmus").parent


def write_examples(folder: str | Path, *, force: bool = False) -> dict[str, Path]:
    """Write the example adapter files and build the FMUs they run into `folder`.

    Parameters
    ----------
    folder : path
        A new or empty folder (its parent must exist).
    force : bool
        Write into a folder that has files (those of the same name are
        replaced).

    Returns
    -------
    dict
        Each adapter file's and each FMU's or SSP's stem to its path.

    Raises
    ------
    FmibridgeError
        If `folder` cannot take them, or the sources are not found.
    BuildError
        If gcc fails (with gcc's message).
    """
    folder = check_output_folder(folder, force=force, what="examples DIR")
    folder.mkdir(exist_ok=True)
    sources = example_sources()
    shutil.copytree(
        sources / "fmus",
        folder / "fmus",
        ignore=shutil.ignore_patterns("build", "__pycache__"),
        dirs_exist_ok=True,
    )
    written = {}
    (folder / "adapters").mkdir(exist_ok=True)
    for adapter in sorted((sources / "adapters").glob("*.toml")):
        written[adapter.stem] = Path(shutil.copy2(adapter, folder / "adapters"))
    out = folder / "fmus" / "build"
    built = build_fmus(folder / "fmus", out)  # the SSPs too, from fmus/systems
    return {**written, **built, **{p.stem: p for p in sorted(out.glob("*.ssp"))}}
