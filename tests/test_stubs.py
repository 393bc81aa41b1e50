"""The .pyi stubs beside the compiled modules agree with the modules.

mypy reads a compiled module's names and signatures from its hand-written stub
(`.ci/run` runs mypy), so a stub that drifts from its .pyx misleads the type check
silently. mypy's stubtest imports each module and compares: every name of the stub
exists with the same kind, every public name the module defines is in the stub,
and the signatures of Cython's functions (binding=True, Cython 3's default)
agree. The exceptions are listed, each with why, in stubtest_allowlist.txt.

A cdef class's `__init__` and `__call__` are slot wrappers without a signature,
which stubtest skips; the signature Cython embeds in their docstrings
(setup.py: ``embedsignature``) is compared here instead, by parameter names.
"""

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUBS = sorted((ROOT / "fmibridge").rglob("*.pyi"))
ALLOWLIST = Path(__file__).with_name("stubtest_allowlist.txt")


def module_of(stub: Path) -> str:
    return ".".join(stub.relative_to(ROOT).with_suffix("").parts)


def test_every_compiled_module_has_a_stub():
    assert sorted(p.with_suffix(".pyi") for p in ROOT.glob("fmibridge/**/*.pyx")) == (
        STUBS
    )


def test_the_stubs_match_the_compiled_modules(tmp_path):
    pytest.importorskip("mypy", reason="install the test tools: pip install '.[test]'")
    # pyproject's [tool.mypy] (its overrides for untyped libraries), with the
    # cache in tmp_path, not the repository
    config = tmp_path / "pyproject.toml"
    config.write_text(
        (ROOT / "pyproject.toml")
        .read_text()
        .replace(
            "[tool.mypy]\n", f"[tool.mypy]\ncache_dir = {str(tmp_path / 'cache')!r}\n"
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "--concise",
            "--allowlist",
            str(ALLOWLIST),
            "--mypy-config-file",
            str(config),
            # PEP 800 marks (no class inherits two compiled classes): not kept
            "--ignore-disjoint-bases",
            *map(module_of, STUBS),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]


def embedded_names(doc: str | None) -> list[str] | None:
    """The parameter names of the signature on the first line of `doc`, as
    Cython embeds it (`Name(Py_ssize_t n, x, f=None, *, int k=5)`), or None."""
    line = (doc or "").partition("\n")[0]
    if "(" not in line or not line.endswith(")"):
        return None
    inside, depth, parts, part = line[line.index("(") + 1 : -1], 0, [], ""
    for char in inside + ",":
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            parts.append(part.split("=")[0].removesuffix(" not None").strip())
            part = ""
        else:
            part += char
    return [p.split()[-1].lstrip("*") for p in parts if p and p != "*"]


def stub_names(node: ast.FunctionDef) -> list[str]:
    args = node.args
    listed = [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs]
    return [a.arg for a in [*listed, args.kwarg] if a is not None]


def unintrospectable() -> list[tuple[str, str, ast.FunctionDef]]:
    """(module, class, stub method) for each stub method whose compiled one has
    no signature inspect can read."""
    found = []
    for stub in STUBS:
        for node in ast.parse(stub.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name in (
                    "__init__",
                    "__call__",
                ):
                    found.append((module_of(stub), node.name, method))
    return found


@pytest.mark.parametrize(
    "module, cls, method",
    unintrospectable(),
    ids=lambda v: getattr(v, "name", v),
)
def test_slot_signatures_match_the_embedded_ones(module, cls, method):
    """Class(...) for `__init__`, Class.__call__(...) for `__call__`."""
    runtime = getattr(importlib.import_module(module), cls)
    slot = getattr(runtime, method.name)
    try:
        names = list(inspect.signature(slot).parameters)
        if names[-2:] == ["args", "kwargs"]:  # object's: read the docstring
            raise ValueError
    except ValueError:
        doc = runtime.__doc__ if method.name == "__init__" else slot.__doc__
        names = embedded_names(doc)
        assert names is not None, f"{module}.{cls}.{method.name}: no signature"
    assert [n for n in names if n != "self"] == stub_names(method)[1:]
