"""Type checking of the typed layers: mypy on fmibridge/core, flows and methods,
with the config in pyproject.toml ([tool.mypy]) and the .pyi stubs of the
compiled modules beside their .pyx.

core/ and flows/ check clean; methods/ not yet (issue 25): the errors left are
counted per package here, so that a change can only lower them; lower the
count with the fix that lowers it, and drop the package from REMAINING at 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "flows", "methods")
CHECKED = tuple(f"fmibridge/{package}/" for package in PACKAGES)
# mypy errors left per package (mypy 2.4.1 at this commit); absent: none. The
# 17 are Completion's fields, given as None and filled in __post_init__.
REMAINING = {"methods": 17}


def test_the_typed_layers_type_check(tmp_path):
    pytest.importorskip("mypy", reason="install the test tools: pip install '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    outside = [e for e in errors if not e.startswith(CHECKED)]
    assert not outside, "\n".join(outside)  # modules the checked ones import
    for package in PACKAGES:
        found = [e for e in errors if e.startswith(f"fmibridge/{package}/")]
        assert len(found) <= REMAINING.get(package, 0), "\n".join(found)
