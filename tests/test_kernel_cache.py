"""Cold start: with numba's cache cold, an FMU run takes the Python path (the
same steps, bit for bit), starts one background warm-up, and switches to the
compiled loop once the kernels are cached; provenance says which path ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fmibridge.flows.fmu_kernels  # noqa: F401 - loaded from the default cache
from fmibridge import FmibridgeError, Halving
from fmibridge.flows import kernel_cache
from fmibridge.flows.fmu import fmu_system


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """Mode "auto" with an empty cache folder and the process's state reset;
    returns the list of warm-ups started (none is spawned)."""
    monkeypatch.setenv(kernel_cache.ENVIRONMENT, "auto")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr(
        kernel_cache, "_state", {"ready": False, "next_check": 0.0, "started": False}
    )
    started = []
    monkeypatch.setattr(
        kernel_cache.subprocess, "Popen", lambda args, **options: started.append(args)
    )
    return started


def ball_run(path, t_end=3.0):
    system = fmu_system(path, "me")
    try:
        return Halving(h=1e-3, locate="illinois").run(system, t_end)
    finally:
        system.close()


def test_a_cold_cache_runs_python_and_starts_one_warm_up(fmu_dir, cold, monkeypatch):
    path = fmu_dir / "BouncingBallEvents.fmu"
    first, second = ball_run(path), ball_run(path)
    assert "kernels=python" in first.provenance["flows"]
    assert len(cold) == 1  # one warm-up, whose lock the second run saw
    assert kernel_cache.stamp_path().with_suffix(".lock").exists()
    monkeypatch.setenv(kernel_cache.ENVIRONMENT, "compiled")
    compiled = ball_run(path)
    assert "kernels=compiled" in compiled.provenance["flows"]
    for result in (first, second):
        assert result.stats == compiled.stats
        np.testing.assert_array_equal(result.t, compiled.t)
        np.testing.assert_array_equal(result.x, compiled.x)


def test_a_run_switches_to_the_compiled_loop_once_the_cache_is_warm(
    fmu_dir, cold, monkeypatch
):
    """The stamp appears during the run (after the tenth look)."""
    looks = []
    monkeypatch.setattr(kernel_cache, "CHECK_S", 0.0)
    monkeypatch.setattr(
        kernel_cache, "is_warm", lambda: looks.append(1) or len(looks) > 10
    )
    path = fmu_dir / "BouncingBallEvents.fmu"
    switched = ball_run(path)
    kernels = switched.provenance["flows"].split("kernels=")[1]
    assert kernels.startswith("python, compiled from t = ")
    t_switch = float(kernels.split("t = ")[1].split(" s")[0])
    assert 0.0 < t_switch < 3.0
    monkeypatch.setenv(kernel_cache.ENVIRONMENT, "python")
    python = ball_run(path)
    assert "kernels=python" in python.provenance["flows"]
    assert switched.stats == python.stats
    np.testing.assert_array_equal(switched.x, python.x)


def test_the_stamp_holds_while_its_sources_and_folders_do(tmp_path, cold):
    folder = tmp_path / "numba" / "flows_cache"
    folder.mkdir(parents=True)
    stamp = {"fingerprint": kernel_cache.fingerprint(), "cache_folders": [str(folder)]}
    kernel_cache.stamp_path().write_text(json.dumps(stamp))
    assert kernel_cache.is_warm() and kernel_cache.ready()
    stamp["fingerprint"]["numba"] = "0.0.1"  # another numba: its cache is not ours
    kernel_cache.stamp_path().write_text(json.dumps(stamp))
    assert not kernel_cache.is_warm()
    stamp["fingerprint"] = kernel_cache.fingerprint()
    kernel_cache.stamp_path().write_text(json.dumps(stamp))
    folder.rmdir()  # the cache emptied
    assert not kernel_cache.is_warm()


def test_an_unknown_mode_is_named(fmu_dir, monkeypatch):
    monkeypatch.setenv(kernel_cache.ENVIRONMENT, "fast")
    with pytest.raises(FmibridgeError, match="FMIBRIDGE_KERNELS must be one of"):
        ball_run(fmu_dir / "BouncingBallEvents.fmu", 0.1)


def fmibridge_run(path: Path, out: Path, env: dict) -> tuple[float, str]:
    """`fmibridge run PATH --out OUT` in a new process: its wall time and output."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "fmibridge.cli", "run", str(path), "--t-end", "3",
         "--no-progress", "--out", str(out)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - start, done.stdout


@pytest.mark.slow
def test_first_run_with_an_empty_cache_warms_it_for_the_next(fmu_dir, tmp_path):
    """The issue's measurement: NUMBA_CACHE_DIR empty, `fmibridge run` twice.
    The first run takes the Python path and starts the warm-up; the run after
    it takes the compiled loop; both write the same samples."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    env[kernel_cache.ENVIRONMENT] = "auto"
    path = fmu_dir / "BouncingBallEvents.fmu"
    fmibridge_run(path, tmp_path / "first.csv", env)
    stamp = tmp_path / "numba" / kernel_cache.stamp_path().name
    for _ in range(600):  # the warm-up compiles for ~20-60 s on two busy cores
        if stamp.exists():
            break
        time.sleep(1.0)
    assert stamp.exists()
    fmibridge_run(path, tmp_path / "second.csv", env)
    first, second = (pd.read_csv(tmp_path / f"{n}.csv") for n in ("first", "second"))
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    assert not stamp.with_suffix(".lock").exists()
