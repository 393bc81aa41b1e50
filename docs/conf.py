"""Sphinx configuration of the fmibridge documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html``; the test
suite does the same (tests/test_docs.py), so a warning fails CI.
"""

import contextlib
import io
import os
import runpy
import sys
from importlib.metadata import version as _version
from pathlib import Path

# Sphinx's autodoc imports a compiled module's .pyi stub in its place when it is
# the first to import it (fmibridge.core.events.pyi, say): the compiled modules
# that cimport it then find a stub without their C functions, and every import
# of fmibridge fails for the rest of the build. Which module autodoc imports first
# follows set order, so the build failed in about one run of eight. Autodoc reads
# this variable at each import: the stubs stay for type checkers only.
os.environ["SPHINX_AUTODOC_IGNORE_NATIVE_MODULE_TYPE_STUBS"] = "1"

project = "fmibridge"
author = "the fmibridge developers"
copyright = "the fmibridge developers"  # noqa: A001 - Sphinx's name
release = _version("fmibridge")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "measure.py", "gallery/*.py"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's Parameters sections say it
autodoc_default_options = {
    "members": True,
    "undoc-members": True,  # so that GL08 finds every public name without a docstring
    "show-inheritance": True,
}
numpydoc_show_class_members = False  # autodoc lists them, once
numpydoc_xref_param_type = False
# Every documented public name needs a docstring: GL08 ("The object does not
# have a docstring") is a warning, and the build runs with -W.
numpydoc_validation_checks = {"GL08"}
# The fields of the compiled records (and of events.End) are said in each class's
# docstring, as a Python dataclass's are (Cython gives their descriptors no
# docstring of their own).
numpydoc_validation_exclude = {
    r"\.__\w+__$",
    r"\._\w+$",
    r"^fmibridge\.core\.records\.(Event|State|Rated|Waiting|Step)\.\w+$",
    r"^fmibridge\.core\.events\.End\.\w+$",
}

html_theme = "alabaster"
html_title = f"fmibridge {release}"


def _skip_imported(app, what, name, obj, skip, options):
    """Skip names a module imports (typing's Callable, functools' helpers)."""
    module = getattr(obj, "__module__", None)
    if what == "module" and isinstance(module, str):
        return skip or not module.startswith("fmibridge")
    return skip


GALLERY = Path(__file__).parent / "gallery"


def _run_gallery(app):
    """Run each docs/gallery/*.py: its figure and the line it prints go to
    _generated/gallery/, where gallery.md shows them, so every figure of the
    site comes from a run of this build. A script that fails fails the build."""
    out = Path(app.srcdir) / "_generated" / "gallery"
    out.mkdir(parents=True, exist_ok=True)
    argv = sys.argv
    for script in sorted(GALLERY.glob("*.py")):
        said = io.StringIO()
        sys.argv = [str(script), str(out)]
        try:
            with contextlib.redirect_stdout(said):
                runpy.run_path(str(script), run_name="__main__")
        finally:
            sys.argv = argv
        (out / f"{script.stem}.txt").write_text(said.getvalue())


def _write_cli_help(app):
    """Write `fmibridge --help` and each command's help to _generated/cli/, which
    cli.md includes: the reference is the parser itself."""
    import os

    from fmibridge.cli import _parser

    out = Path(app.srcdir) / "_generated" / "cli"
    out.mkdir(parents=True, exist_ok=True)
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps to the terminal's width
    try:
        parser = _parser()
        (out / "fmibridge.txt").write_text(parser.format_help())
        (commands,) = (a for a in parser._actions if a.dest == "command")
        for name, command in commands.choices.items():
            (out / f"{name}.txt").write_text(command.format_help())
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def setup(app):
    app.connect("autodoc-skip-member", _skip_imported)
    app.connect("builder-inited", _run_gallery)
    app.connect("builder-inited", _write_cli_help)
