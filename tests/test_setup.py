"""The build (setup.py): a clear message where no C compiler is found."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_missing_compiler_is_named_with_the_remedy():
    """setuptools' own error names neither the compiler nor what to install."""
    done = subprocess.run(
        [sys.executable, "setup.py", "--version"],
        cwd=ROOT,
        env={**os.environ, "CC": "no-such-cc-here"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "needs a C compiler, and 'no-such-cc-here'" in done.stderr
    assert "apt-get install gcc" in done.stderr
