"""The package's layers, read from its imports: lower layers never import higher ones.

Bottom to top: core -> flows -> methods -> models -> formats -> front doors
(sweep, validation, examples) -> cli. Every import counts, also those
inside functions; only imports under ``if TYPE_CHECKING:`` are exempt (they never
run). The compiled modules obey the same rule: their `import` and `cimport`
lines (.pyx, .pxd) are read too.
"""

import ast
import re
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


# Cython source: strings (docstrings hold doctests), comments, then one statement
# per logical line (parentheses and backslashes joined).
_STRING = re.compile(
    r'("""|\'\'\')(?:.|\n)*?\1'  # triple-quoted, over lines
    r'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''  # quoted, on one line
)
_COMMENT = re.compile(r"#[^\n]*")
_FROM = re.compile(r"from\s+(\.*)([\w.]*)\s+c?import\s+(.+)", re.S)
_IMPORT = re.compile(r"c?import\s+(.+)", re.S)


def _statements(source: str) -> list[str]:
    """Return the logical lines of Cython `source`, without strings or comments."""
    code = _COMMENT.sub("", _STRING.sub('""', source))
    code = re.sub(r"\\\n", " ", code)
    statements, depth, current = [], 0, ""
    for line in code.splitlines():
        current += " " + line
        depth += line.count("(") - line.count(")")
        if depth <= 0:
            statements.append(current.strip())
            current, depth = "", 0
    return statements


def _names(listed: str) -> list[str]:
    """`a.b as c, (d, e)` -> ["a.b", "d", "e"]."""
    return [n.split()[0] for n in listed.strip("() ").split(",") if n.strip()]


def cython_imports(path: Path) -> set[str]:
    """Return the fmibridge modules a .pyx/.pxd file imports or cimports,
    resolved to absolute names, as `runtime_imports` does for Python."""
    package = module_name(path).split(".")[:-1]
    found = set()
    for statement in _statements(path.read_text()):
        if match := _FROM.fullmatch(statement):
            dots, module, listed = match.groups()
            base = package[: len(package) - len(dots) + 1] if dots else []
            target = ".".join([*base, *filter(None, module.split("."))])
            if target.startswith("fmibridge"):
                found |= {target} | {f"{target}.{n}" for n in _names(listed)}
        elif match := _IMPORT.fullmatch(statement):
            found |= {n for n in _names(match[1]) if n.startswith("fmibridge")}
    return found


def imports(path: Path) -> set[str]:
    """The fmibridge modules `path` imports, Python or Cython."""
    return runtime_imports(path) if path.suffix == ".py" else cython_imports(path)


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = sorted(PACKAGE.rglob("*.py"))
CYTHON = sorted([*PACKAGE.rglob("*.pyx"), *PACKAGE.rglob("*.pxd")])
# The wall between Python and compiled code (issue 40; DESIGN.md, fourth round):
# Python modules that drive the compiled ones, which no .pyx or .pxd imports, even
# where the layers would allow it. The records the kernels build and return
# (State, Step, Status, Event) live in core.records, below the wall, and the
# outcome FlowTerminated in core.errors.
ABOVE_THE_WALL = (
    "fmibridge.flows.base",
    "fmibridge.methods.base",
    "fmibridge.methods.watchdog",
    "fmibridge.core.recorder",
    "fmibridge.core.result",
    "fmibridge.core.system",
    "fmibridge.core.guards",
)


@pytest.mark.parametrize(
    "path", MODULES + CYTHON, ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_imports_point_down(path):
    """A module imports only its own layer and those below; nothing imports cli."""
    own = layer_of(module_name(path))
    if own is None:  # the package root: its public names load lazily, by name
        return
    upward = sorted(
        m
        for m in imports(path)
        if (layer_of(m) or 0) > own or (m.startswith("fmibridge.cli") and own < 6)
    )
    assert not upward, f"{module_name(path)} (layer {own}) imports {upward}"


@pytest.mark.parametrize("path", CYTHON, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_compiled_modules_import_nothing_above_the_wall(path):
    """A .pyx or .pxd imports compiled modules and the floor (core.errors,
    core.records), never the method, recorder, result or system layers, nor the
    flows' base."""
    above = sorted(
        m
        for m in cython_imports(path)
        if any(m == w or m.startswith(f"{w}.") for w in ABOVE_THE_WALL)
    )
    assert not above, f"{module_name(path)} imports {above}"


def test_the_records_below_the_wall_import_only_the_errors():
    """core.records, which the compiled modules import, imports no other
    module of fmibridge (its stub's imports are for the type checker only)."""
    records = imports(PACKAGE / "core" / "records.pyx")
    assert records == {"fmibridge.core.errors", "fmibridge.core.errors.FmibridgeError"}


def test_the_cython_reader_sees_every_import_form():
    """Relative, absolute, parenthesised over lines, `cimport`, `as`; and not the
    import a docstring's doctest shows."""
    halving = cython_imports(PACKAGE / "methods" / "_halving.pyx")
    assert {
        "fmibridge.core.events.crossed",  # from ..core.events cimport (... over lines
        "fmibridge.methods._walk.Walk",  # from ._walk cimport Walk
        "fmibridge.core.errors.ReplayRefused",  # import ReplayRefused  # a comment
        "fmibridge.core.records",  # below a comment line
        "fmibridge.core.records.Status",  # from ..core.records import ON_SURFACE, ...
    } <= halving
    completion = cython_imports(PACKAGE / "methods" / "_completion.pyx")
    assert "fmibridge.methods.contact" not in completion  # only in a doctest
    assert cython_imports(PACKAGE / "core" / "_functions.pyx") == {
        "fmibridge.core.errors",
        "fmibridge.core.errors.FmibridgeError",
    }


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


def words_printed(code: str) -> list[str]:
    """Run `code` in a new Python process (a clean sys.modules); return the
    words it printed."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_import_fmibridge_loads_nothing_heavy():
    """`import fmibridge` defers pandas, scipy, numba, Dask, matplotlib and fmpy."""
    code = "import sys, fmibridge; print(' '.join(sys.modules))"
    modules = words_printed(code)
    assert sorted({m.split(".")[0] for m in modules} & set(LAZY)) == []


def test_an_fmu_run_loads_only_what_it_needs(fmu_dir):
    """`fmibridge.simulate` on an FMU loads fmpy and its method, not the SSP
    reader, the other methods, the coupled right-hand side, pandas, scipy or the
    package metadata."""
    fmu = fmu_dir / "BouncingBallEvents.fmu"
    code = (
        "import sys, fmibridge\n"
        f"result = fmibridge.simulate({str(fmu)!r}, stop_time=1.0)\n"
        "print(result.status.name, len(result.events), ' '.join(sys.modules))"
    )
    status, n_events, *modules = words_printed(code)
    assert status == "REACHED_END" and int(n_events) > 0
    assert "fmpy" in modules and "fmibridge.methods.halving" in modules
    unused = {
        "fmibridge.formats.ssp",
        "fmibridge.flows._coupled",
        "fmibridge.methods.completion",
        "fmibridge.methods.relaxation",
        "fmibridge.methods.unilateral",
        "importlib.metadata",
        "pandas",
        "scipy",
        *NOT_WITHOUT_CVODE,
    }
    assert sorted(unused & set(modules)) == []


def test_simulate_fmu_loads_only_what_it_needs(fmu_dir):
    """`fmibridge.simulate_fmu` of an FMU with both interfaces runs
    Co-Simulation and keeps FMPy's grid rows (no event rows) without loading
    numpy.ma (np.isin's first call imports it), pandas, scipy, the units (it
    converts none), the edges, guards and input tables (a plain FMU run has none),
    the coupled right-hand side (one FMU couples nothing) or CVODE's modules."""
    fmu = fmu_dir / "BouncingBallEvents.fmu"
    code = (
        "import sys, fmibridge\n"
        f"result = fmibridge.simulate_fmu({str(fmu)!r})\n"
        "print(len(result), ' '.join(sys.modules))"
    )
    rows, *modules = words_printed(code)
    import fmpy

    assert int(rows) == len(fmpy.simulate_fmu(fmu))  # FMPy's grid, no event rows
    unused = {
        "numpy.ma",
        "pandas",
        "scipy",
        "fmibridge.core.units",
        "fmibridge.core.guards",
        "fmibridge.flows.input_table",
        "fmibridge.flows._coupled",
    }
    assert sorted((unused | set(NOT_WITHOUT_CVODE)) & set(modules)) == []


# what only CVODE needs: its compiled module, SUNDIALS' addresses, the FMU's
# Jacobian; and what no run needs at import (the DOPRI5 tableau's rationals)
NOT_WITHOUT_CVODE = (
    "fmibridge.flows._cvode",
    "fmibridge.flows.sundials",
    "fmibridge.flows.stiff",
    "fmibridge.flows.fmu_jacobian",
    "fractions",
)


def test_cvode_loads_where_it_runs_only(fmu_dir):
    """A Model Exchange run with FMPy's default solver ('CVode') loads CVODE's
    modules, and its result is the one an in-process run gives."""
    fmu = fmu_dir / "BouncingBallEvents.fmu"
    code = (
        "import sys, fmibridge\n"
        f"result = fmibridge.simulate_fmu({str(fmu)!r}, fmi_type='ModelExchange')\n"
        "print(repr(float(result['h'][-1])), ' '.join(sys.modules))"
    )
    h_end, *modules = words_printed(code)
    import fmibridge

    here = fmibridge.simulate_fmu(fmu, fmi_type="ModelExchange")
    assert float(h_end) == float(here["h"][-1])
    assert set(NOT_WITHOUT_CVODE[:-1]) <= set(modules)


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
