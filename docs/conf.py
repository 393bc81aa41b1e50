"""Sphinx configuration of the fmibridge documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html``; the test
suite does the same (tests/test_docs.py), so a warning fails CI.
"""

from importlib.metadata import version as _version

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
exclude_patterns = ["_build", "measure.py"]
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
numpydoc_validation_exclude = {r"\.__\w+__$", r"\._\w+$"}

html_theme = "alabaster"
html_title = f"fmibridge {release}"


def _skip_imported(app, what, name, obj, skip, options):
    """Skip names a module imports (typing's Callable, functools' helpers)."""
    module = getattr(obj, "__module__", None)
    if what == "module" and isinstance(module, str):
        return skip or not module.startswith("fmibridge")
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_imported)
