"""Type checking of the package: mypy on all of fmibridge,
with the config in pyproject.toml ([tool.mypy]) and the .pyi stubs of the
compiled modules beside their .pyx. It checks clean: any error fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_type_checks(tmp_path):
    pytest.importorskip("mypy", reason="install the test tools: pip install '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert "Success: no issues found" in done.stdout
