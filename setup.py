"""Build the compiled core: every `.pyx` module under fmibridge/ becomes a C extension.

The numerics of each algorithm are written once in Cython and compiled here, at
install, with the system's C compiler: nothing is compiled when a run starts.
`-ffp-contract=off` keeps each float operation as written (no fused multiply-add),
so results do not depend on the machine's instruction set.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup
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

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
