"""The Cython sources (.pyx, .pxd) are linted as ruff lints the Python ones.

ruff does not read Cython; cython-lint applies pyflakes' checks (unused imports
and names, shadowing, loop variables unused in their loop) and pycodestyle's,
with pyproject.toml's [tool.cython-lint] (the line length of [tool.ruff]).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CYTHON = sorted(
    str(p.relative_to(ROOT))
    for suffix in ("*.pyx", "*.pxd")
    for p in (ROOT / "fmibridge").rglob(suffix)
)


def test_the_cython_sources_lint_clean():
    pytest.importorskip("cython_lint", reason="install the test tools: .[test]")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from cython_lint.cython_lint import main; raise SystemExit(main())",
        ]
        + CYTHON,
        cwd=ROOT,
        # cython-lint runs pycodestyle from the environment it is installed in
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
            f"{os.environ.get('PATH', '')}",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
