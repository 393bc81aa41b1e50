"""Build the compiled core: every `.pyx` module under fmibridge/ becomes a C extension.

The numerics of each algorithm are written once in Cython and compiled here, at
install, with the system's C compiler: nothing is compiled when a run starts.
`-ffp-contract=off` keeps each float operation as written (no fused multiply-add),
so results do not depend on the machine's instruction set.

The build also copies the example adapter files (adapters/*.toml) and the
sources of the FMUs (fmus/, without its build/) into the package as
fmibridge/_examples: a wheel holds no FMUs, and `fmibridge examples DIR` builds
them from these (a source checkout uses the repository's folders instead).
"""

import shutil
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py
import numpy

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,  # IEEE division: x / 0 is inf or nan, as numpy gives it
    "embedsignature": True,
}

extensions = [
    Extension(
        "*",
        ["fmibridge/**/*.pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        extra_compile_args=["-O2", "-ffp-contract=off"],
    )
]



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
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES),
    cmdclass={"build_py": BuildPyWithExamples},
)
