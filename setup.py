"""Build the compiled core: every `.pyx` module under fmibridge/ becomes a C extension.

The numerics of each algorithm are written once in Cython and compiled here, at
install, with the system's C compiler: nothing is compiled when a run starts.
`-ffp-contract=off` keeps each float operation as written (no fused multiply-add),
so results do not depend on the machine's instruction set.

The build is incremental and parallel: a module's C file is generated again only
where its .pyx, a .pxd of the package or this file is newer (`_stale`), and
compiled again only where its built extension in the source tree is older than
its C file (`IncrementalBuildExt`), the modules compiled side by side, one per
core. Installing again with nothing changed compiles nothing, whichever
isolated environment pip builds in (Cython's own .pxd files, new in each, are
not taken as changes); a contributor who edits one .pyx waits for that one.

The build also copies the example adapter files (adapters/*.toml) and the
sources of the FMUs (fmus/, without its build/, with their builder fmus/build.py)
into the package as fmibridge/_examples: a wheel holds no FMUs, and `fmibridge
examples DIR` builds them from these (a source checkout uses the repository's
folders instead).
"""

import os
import shutil
import sysconfig
from pathlib import Path


def _check_compiler() -> None:
    """Stop with a message that says what is missing where no C compiler is
    found (setuptools' own error names neither the compiler nor the remedy)."""
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    if shutil.which(compiler[0]) is None:
        raise SystemExit(
            f"fmibridge: building its compiled core needs a C compiler, and "
            f"{compiler[0]!r} (the CC of this Python, or $CC) is not on PATH. "
            f"Install gcc or clang (Debian/Ubuntu: apt-get install gcc; macOS: "
            f"xcode-select --install), or set CC to one, and install again."
        )


_check_compiler()  # first: before the build's own imports can fail otherwise

import numpy  # noqa: E402
from Cython.Build import cythonize  # noqa: E402
from setuptools import Extension, setup  # noqa: E402
from setuptools.command.build_ext import build_ext  # noqa: E402
from setuptools.command.build_py import build_py  # noqa: E402

HERE = Path(__file__).resolve().parent
# The FMI standard's headers (`flows/_fmi.pxd` declares FMI from them): the one
# copy our FMUs are built with (fmus/build.py), which the sdist carries
# (MANIFEST.in: graft fmus)
FMI_HEADERS = HERE / "fmus" / "include"
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,  # IEEE division: x / 0 is inf or nan, as numpy gives it
    "embedsignature": True,
}
OPTIONS = {
    "include_dirs": [numpy.get_include(), str(FMI_HEADERS)],
    "define_macros": [("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
    "extra_compile_args": ["-O2", "-ffp-contract=off"],
}


def _module(pyx: Path) -> str:
    return ".".join(pyx.with_suffix("").relative_to(HERE).parts)


def _stale(pyx: Path, newest_pxd: float) -> bool:
    """True if the C file of `pyx` must be generated (again)."""
    c_file = pyx.with_suffix(".c")
    if not c_file.exists():
        return True
    newest = max(pyx.stat().st_mtime, newest_pxd, Path(__file__).stat().st_mtime)
    return c_file.stat().st_mtime < newest


def extensions() -> list[Extension]:
    """The extensions: from the .pyx where the C file is stale, else from the C
    file itself (nothing for Cython to do)."""
    pyx_files = sorted(HERE.glob("fmibridge/**/*.pyx"))
    newest_pxd = max(p.stat().st_mtime for p in HERE.glob("fmibridge/**/*.pxd"))
    stale = [p for p in pyx_files if _stale(p, newest_pxd)]
    fresh = [p for p in pyx_files if p not in stale]
    generated = (
        cythonize(
            [
                Extension(_module(p), [str(p.relative_to(HERE))], **OPTIONS)
                for p in stale
            ],
            compiler_directives=DIRECTIVES,
            nthreads=os.cpu_count() or 1,
        )
        if stale
        else []
    )
    kept = [
        Extension(_module(p), [str(p.with_suffix(".c").relative_to(HERE))], **OPTIONS)
        for p in fresh
    ]
    return [*generated, *kept]


class IncrementalBuildExt(build_ext):
    """build_ext that takes a module's extension from the source tree where it
    is newer than the module's C file and this file, and compiles the others,
    one per core."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.parallel = os.cpu_count() or 1

    def build_extension(self, ext: Extension) -> None:
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        in_tree = HERE.joinpath(*ext.name.split(".")[:-1], target.name)
        sources = [HERE / s for s in ext.sources] + [Path(__file__)]
        built = in_tree.exists() and all(
            in_tree.stat().st_mtime >= s.stat().st_mtime for s in sources
        )
        if not built:
            super().build_extension(ext)
        elif target != in_tree:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(in_tree, target)


class BuildPyWithExamples(build_py):
    """build_py, then the example adapters and FMU sources into fmibridge/_examples."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "fmibridge" / "_examples"
        ignore = shutil.ignore_patterns("build", "__pycache__")
        shutil.copytree("fmus", target / "fmus", ignore=ignore, dirs_exist_ok=True)
        (target / "adapters").mkdir(parents=True, exist_ok=True)
        for adapter in sorted(Path("adapters").glob("*.toml")):
            shutil.copy2(adapter, target / "adapters")


setup(
    ext_modules=extensions(),
    cmdclass={"build_py": BuildPyWithExamples, "build_ext": IncrementalBuildExt},
)
