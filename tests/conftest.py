"""Shared pytest fixtures."""

import os
from pathlib import Path

import pytest

# FMU runs take the compiled loop in every test, as on a warm machine (the first
# compiles the kernels into numba's cache in-process); test_kernel_cache sets
# its own modes. Subprocesses inherit it, so no test starts a warm-up.
os.environ.setdefault("FMIBRIDGE_KERNELS", "compiled")


@pytest.fixture(scope="session")
def fmu_dir():
    """Build the FMUs in fmus/ (incrementally) and return the build directory."""
    from fmibridge.build import build_fmus

    paths = build_fmus(Path(__file__).resolve().parent.parent / "fmus")
    return next(iter(paths.values())).parent
