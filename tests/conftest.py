"""Shared pytest fixtures."""

import textwrap
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def builder():
    """The FMU builder of the repository's fmus/ (fmus/build.py), as a module."""
    from fmibridge.examples import load_builder

    return load_builder(Path(__file__).resolve().parent.parent / "fmus")


@pytest.fixture(scope="session")
def fmu_dir(builder):
    """Build the FMUs in fmus/ (incrementally) and return the build directory."""
    paths = builder.build_fmus()
    return next(iter(paths.values())).parent


# a Co-Simulation FMU made by pythonfmu (no state saving, no states the master
# sees), for tests/test_pythonfmu.py and tests/test_cs_guards.py
CART = '''
from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class Cart(Fmi2Slave):
    """A cart on a spring and damper, pushed by F (semi-implicit Euler)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.m, self.k, self.d = 1.0, 4.0, 0.5
        self.F, self.x, self.v = 0.0, 1.0, 0.0
        for name in ("m", "k", "d"):
            self.register_variable(
                Real(
                    name,
                    causality=Fmi2Causality.parameter,
                    variability=Fmi2Variability.tunable,
                )
            )
        self.register_variable(Real("F", causality=Fmi2Causality.input))
        self.register_variable(Real("x", causality=Fmi2Causality.output))
        self.register_variable(Real("v", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        self.v += step_size * (self.F - self.k * self.x - self.d * self.v) / self.m
        self.x += step_size * self.v
        return True
'''


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    """Build Cart.fmu with pythonfmu (the test extra) and return its path."""
    from pythonfmu import FmuBuilder

    folder = tmp_path_factory.mktemp("pythonfmu")
    script = folder / "Cart.py"
    script.write_text(textwrap.dedent(CART))
    return FmuBuilder.build_FMU(script, dest=folder)
