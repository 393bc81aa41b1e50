"""The README's Python examples run as written (from the repository root)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_examples_run(fmu_dir, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - our own README
    assert len(scope["result"].events) == 6
    scope["flow"].close()
    scope["system"].close()
