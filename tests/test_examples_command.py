"""`fmibridge examples DIR`: the README's adapter files and FMUs, outside the clone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fmibridge
from fmibridge import examples
from fmibridge.cli import main
from fmibridge.core.errors import FmibridgeError

ROOT = Path(__file__).resolve().parent.parent


def test_examples_refuses_a_folder_with_files(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["examples", str(tmp_path)]) == 2
    assert "is a folder with files in it; pass --force" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.slow  # compiles every FMU of fmus/ (about 30 s on two cores)
def test_examples_folder_runs_the_readme_as_the_clone_does(fmu_dir, tmp_path, capsys):
    folder = tmp_path / "examples"
    assert main(["examples", str(folder)]) == 0
    adapters = sorted(p.name for p in (folder / "adapters").glob("*.toml"))
    assert adapters == sorted(p.name for p in (ROOT / "adapters").glob("*.toml"))
    fmu = "fmus/build/BouncingBallEvents.fmu"
    here = fmibridge.simulate(folder / fmu, stop_time=3)
    clone = fmibridge.simulate(ROOT / fmu, stop_time=3)
    assert np.array_equal(here.event_times, clone.event_times)
    assert len(here.events) == 6
    ball = folder / "adapters" / "bouncing_ball.toml"
    argv = ["run", str(ball), "--stop-time", "10", "--zeno", "complete"]
    assert main([*argv, "--no-progress"]) == 0
    assert "Reached t_end. t = 10 s, 42 events" in capsys.readouterr().out


def test_the_repository_folders_are_beside_the_package_else_in_the_working_dir(
    tmp_path, monkeypatch
):
    """An editable install finds fmus/ beside the package; `pip install .` run
    from the clone, or from a folder `fmibridge examples` wrote, finds it in the
    working directory, and says so where it holds no builder."""
    assert examples.repository_folder("fmus") == ROOT / "fmus"
    assert examples.load_builder().__file__ == str(ROOT / "fmus" / "build.py")
    monkeypatch.setattr(examples, "SOURCE_TREE", tmp_path / "site-packages")
    monkeypatch.chdir(tmp_path)
    assert examples.repository_folder("adapters") == tmp_path / "adapters"
    with pytest.raises(FmibridgeError, match=r"fmus/build.py: no FMU builder here"):
        examples.load_builder()


def test_the_builder_loads_once_per_file(builder, tmp_path):
    """Each fmus/build.py is one module, so its BuildError is one class; a copy
    elsewhere is its own module and builds its own folder."""
    assert examples.load_builder(ROOT / "fmus") is builder
    (tmp_path / "fmus").mkdir()
    (tmp_path / "fmus" / "build.py").write_bytes(Path(builder.__file__).read_bytes())
    copy = examples.load_builder(tmp_path / "fmus")
    assert copy is not builder and copy.HERE == (tmp_path / "fmus").resolve()
    with pytest.raises(copy.BuildError, match="no fmus/ sources here"):
        copy.build_fmus()
