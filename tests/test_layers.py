"""The package's layers, read from its imports: lower layers never import higher ones.

Bottom to top: core -> flows -> methods -> models -> formats -> front doors
(sweep, validation, benchmarks, build) -> cli. Every import counts, also those
inside functions; only imports under ``if TYPE_CHECKING:`` are exempt (they never
run).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fmibridge"
LAYERS = {  # top-level part of fmibridge -> layer, bottom = 0
    "core": 0,
    "flows": 1,
    "methods": 2,
    "models": 3,
    "formats": 4,
    "sweep": 5,
    "validation": 5,
    "benchmarks": 5,
    "build": 5,
    "simulation": 5,
    "fmpy_keywords": 5,
    "fmpy_api": 5,
    "examples": 5,
    "cli": 6,
}
LAZY = ("pandas", "scipy", "numba", "dask", "distributed", "matplotlib", "fmpy", "tqdm")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> set[str]:
    """Return the fmibridge modules `path` imports, resolved to absolute names."""
    tree = ast.parse(path.read_text(), str(path))
    exempt = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fmibridge")}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if target.startswith("fmibridge"):
                found |= {target} | {f"{target}.{a.name}" for a in node.names}
    return found


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_point_down(path):
    """A module imports only its own layer and those below; nothing imports cli."""
    own = layer_of(module_name(path))
    if own is None:  # the package root: its public names load lazily, by name
        return
    upward = sorted(
        m
        for m in runtime_imports(path)
        if (layer_of(m) or 0) > own or (m.startswith("fmibridge.cli") and own < 6)
    )
    assert not upward, f"{module_name(path)} (layer {own}) imports {upward}"


def test_every_module_has_a_layer():
    """A new top-level module or package must be given a layer here."""
    tops = {
        module_name(p).split(".")[1] for p in MODULES if module_name(p) != "fmibridge"
    }
    assert tops - {"_moved"} <= set(LAYERS), sorted(tops - set(LAYERS))


def test_every_package_says_what_it_holds_and_may_import():
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "import" in doc, (
            f"{module_name(init)}: its docstring names no layer rule"
        )


def test_import_fmibridge_loads_nothing_heavy():
    """`import fmibridge` defers pandas, scipy, numba, Dask, matplotlib and fmpy."""
    code = "import sys, fmibridge; print(' '.join(sys.modules))"
    modules = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert sorted({m.split(".")[0] for m in modules} & set(LAZY)) == []


def test_an_fmu_run_loads_only_what_it_needs(fmu_dir):
    """`fmibridge.simulate` on an FMU loads fmpy and its method, not the SSP
    reader, the other methods, pandas, scipy or the package metadata."""
    fmu = fmu_dir / "BouncingBallEvents.fmu"
    code = (
        "import sys, fmibridge\n"
        f"result = fmibridge.simulate({str(fmu)!r}, stop_time=1.0)\n"
        "print(result.status.name, len(result.events), ' '.join(sys.modules))"
    )
    status, n_events, *modules = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert status == "REACHED_END" and int(n_events) > 0
    assert "fmpy" in modules and "fmibridge.methods.halving" in modules
    unused = {
        "fmibridge.formats.ssp",
        "fmibridge.methods.completion",
        "fmibridge.methods.relaxation",
        "fmibridge.methods.unilateral",
        "importlib.metadata",
        "pandas",
        "scipy",
    }
    assert sorted(unused & set(modules)) == []


def test_moved_module_paths_still_import_with_a_warning():
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "try:\n    import fmibridge.system\n"
        "except DeprecationWarning as w:\n    print(w)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "fmibridge.core.system" in out
    import fmibridge.core.system as new

    with pytest.warns(DeprecationWarning, match="fmibridge.models.or_ames"):
        from fmibridge.lagrangian_models import sine_ball  # noqa: F401
    assert (
        sys.modules["fmibridge.lagrangian_models"]
        is sys.modules["fmibridge.models.or_ames"]
    )
    assert new.HybridSystem.__module__ == "fmibridge.core.system"


def test_the_recorder_moved_out_of_result_still_imports_with_a_warning():
    """Recorder, recording() and the sample budget moved to core.recorder; the
    old names in core.result forward there for one release, and say so."""
    import fmibridge.core.recorder as recorder

    with pytest.warns(DeprecationWarning, match="fmibridge.core.recorder.recording"):
        from fmibridge.core.result import recording
    assert recording is recorder.recording
    with pytest.raises(ImportError):
        from fmibridge.core.result import no_such_name  # noqa: F401
