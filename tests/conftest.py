"""Shared pytest fixtures."""

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def fmu_dir():
    """Build the FMUs in fmus/ (incrementally) and return the build directory."""
    from fmibridge.build import build_fmus

    paths = build_fmus(Path(__file__).resolve().parent.parent / "fmus")
    return next(iter(paths.values())).parent
