"""Shared pytest fixtures."""

import pytest


@pytest.fixture(scope="session")
def fmu_dir():
    """Build the FMUs in fmus/ (incrementally) and return the build directory."""
    from fmibridge.build import build_fmus

    paths = build_fmus()
    return next(iter(paths.values())).parent
