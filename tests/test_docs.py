"""The documentation's Python examples run (`.ci/run` builds the docs with -W).

Every ```python block of README.md and docs/**/*.md (but the tutorial's) runs
on its own, in a fresh namespace, in a scratch folder that sees the repository's
fmus/ and adapters/ (so the examples' relative paths work and their files land
outside the tree).
In the Sphinx build (its own step of `.ci/run`), -W makes a broken reference, a
malformed docstring or a public name without one (numpydoc's GL08) fail.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The tutorial's blocks build on its commands: tests/test_tutorial.py runs the
# page in order.
PAGES = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "tutorial.md"),
]
BLOCKS = [
    pytest.param(page, k, block, id=f"{page.relative_to(ROOT)}-{k}")
    for page in PAGES
    for k, block in enumerate(
        re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    )
]


def test_there_are_examples_to_run():
    assert len(BLOCKS) >= 20  # README 2, docs 18 and more


@pytest.mark.parametrize(("page", "k", "block"), BLOCKS)
def test_each_python_example_runs_on_its_own(
    page, k, block, fmu_dir, tmp_path, monkeypatch
):
    import matplotlib

    matplotlib.use("Agg")
    for folder in ("fmus", "adapters", "examples"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": f"example_{k}"}
    exec(compile(block, f"{page.name}, python block {k}", "exec"), scope)  # noqa: S102


@pytest.mark.parametrize(
    "module",
    [
        "fmibridge.simulation",
        "fmibridge.core.output_grid",
        "fmibridge.core.result",
        "fmibridge.core.system",
        "fmibridge.core.guards",
        "fmibridge.flows.input_table",
    ],
)
def test_the_docstring_examples_of_the_front_door_run(module):
    import doctest
    import importlib

    failed, attempted = doctest.testmod(importlib.import_module(module))
    assert attempted > 0 and failed == 0


def test_readme_links_to_the_docs():
    readme = (ROOT / "README.md").read_text()
    assert "[`docs/`](docs/index.md)" in readme
    assert (ROOT / "docs" / "index.md").is_file()
    assert "python -m sphinx -W -b html docs docs/_build/html" in readme


def test_autodoc_imports_the_compiled_modules_not_their_stubs():
    """Autodoc, where it is the first to import a compiled module with a .pyi
    stub beside it, imports the stub in its place unless docs/conf.py says not
    to; the modules that cimport it then fail to import (the flaky docs build)."""
    pytest.importorskip(
        "sphinx", reason="install the docs tools: pip install '.[docs]'"
    )
    stubs = sorted(ROOT.glob("fmibridge/**/*.pyi"))
    names = [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in stubs]
    assert "fmibridge.core.events" in names
    code = (
        "import runpy, sys\n"
        f"runpy.run_path({str(ROOT / 'docs' / 'conf.py')!r})\n"
        "from sphinx.ext.autodoc.importer import import_module\n"
        f"for name in {names!r}:\n"
        "    print(name, import_module(name).__file__)\n"
        "import fmibridge.models, fmibridge.methods\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    files = dict(line.split() for line in done.stdout.splitlines())
    assert set(files) == set(names)
    assert not [f for f in files.values() if f.endswith(".pyi")], files
