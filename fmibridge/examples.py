"""The README's examples for an installed package: `fmibridge examples DIR`.

A wheel holds the adapter files and the FMUs' C sources (``_examples``), a
checkout its ``adapters/`` and ``fmus/``; `write_examples` lays them out as the
repository does and builds the FMUs with ``fmus/build.py`` (`load_builder`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

from .core.errors import FmibridgeError
from .core.outputs import check_output_folder

PACKAGED = Path(__file__).resolve().parent / "_examples"  # a wheel's copy
# the repository's root in a source checkout (editable installs)
SOURCE_TREE = Path(__file__).resolve().parent.parent


def repository_folder(name: str) -> Path:
    """Return the repository's folder `name`: beside the package in a checkout,
    else in the working directory."""
    beside = SOURCE_TREE / name
    return beside if beside.is_dir() else Path.cwd() / name


def load_builder(fmus: str | Path | None = None) -> ModuleType:
    """Return the FMU builder ``build.py`` of the sources in `fmus`, as a module.

    Parameters
    ----------
    fmus : path, optional
        A ``fmus/`` folder (default: the repository's, `repository_folder`).

    Returns
    -------
    module
        ``fmus/build.py``, loaded once per file (`build_fmus`, `BuildError`, ...).

    Raises
    ------
    FmibridgeError
        If `fmus` holds no ``build.py``.
    """
    path = Path(fmus or repository_folder("fmus")).resolve() / "build.py"
    if not path.is_file():
        raise FmibridgeError(
            f"{path}: no FMU builder here; run from a clone of the repository or "
            f"from a folder `fmibridge examples DIR` wrote."
        )
    # one name per file, so that each builder's classes (BuildError) stay one
    name = "_fmus_build_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None  # a .py file
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before it runs: its dataclasses look it up
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def write_examples(folder: str | Path, *, force: bool = False) -> dict[str, Path]:
    """Write the example adapter files and build the FMUs they run into `folder`.

    Parameters
    ----------
    folder : path
        A new or empty folder (its parent must exist).
    force : bool
        Write into a folder that has files.

    Returns
    -------
    dict
        Each adapter file's and each FMU's or SSP's stem to its path.

    Raises
    ------
    FmibridgeError
        If `folder` cannot take them, or the sources are not found.
    BuildError
        The builder's, if gcc fails.
    """
    folder = check_output_folder(folder, force=force, what="examples DIR")
    folder.mkdir(exist_ok=True)
    packaged = (PACKAGED / "fmus").is_dir()  # else the checkout's
    sources = PACKAGED if packaged else repository_folder("fmus").parent
    shutil.copytree(
        sources / "fmus",
        folder / "fmus",
        ignore=shutil.ignore_patterns("build", "__pycache__"),
        dirs_exist_ok=True,
    )
    (folder / "adapters").mkdir(exist_ok=True)
    written = {
        adapter.stem: Path(shutil.copy2(adapter, folder / "adapters"))
        for adapter in sorted((sources / "adapters").glob("*.toml"))
    }
    out = folder / "fmus" / "build"
    # the copied builder builds its own folder: the SSPs too, from fmus/systems
    built = load_builder(folder / "fmus").build_fmus()
    return {**written, **built, **{p.stem: p for p in sorted(out.glob("*.ssp"))}}
