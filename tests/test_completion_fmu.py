"""Zeno completion through the BouncingBall FMU, Model Exchange and Co-Simulation."""

import numpy as np
import pytest

from fmibridge import Halving
from fmibridge.formats.adapters import load_adapter
from fmibridge.methods.completion import Completion
from fmibridge.models import bouncing_ball, bouncing_ball_zeno_time

ADAPTER = "adapters/bouncing_ball.toml"


def switch_time(result):
    return result.t[np.argmax(result.mode == "constrained")]


@pytest.mark.parametrize("interface", ["me", "cs"])
@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_flat_ball_through_the_fmu_completes_like_the_native_ball(
    fmu_dir, interface, version
):
    text = open(ADAPTER).read().replace('"../fmus/build/', f'"{fmu_dir}/')
    if version == "3.0":
        text = text.replace("BouncingBall.fmu", "BouncingBall_fmi3.fmu")
    path = fmu_dir / f"ball_{interface}_{version}.toml"
    path.write_text(text)
    with load_adapter(
        path, t_end=10.0, interface=interface, zeno="complete"
    ) as adapter:
        result = adapter.run()
    native = Completion(Halving(h=1e-3)).run(bouncing_ball(), 10.0)
    assert abs(switch_time(result) - bouncing_ball_zeno_time()) < 1e-6
    assert switch_time(result) == pytest.approx(switch_time(native), abs=1e-9)
    assert len(result.events) < 80 and len(result.events) == len(native.events)
    assert result["h"][-1] == 0.0 and result["v"][-1] == 0.0
    # at rest the contact force carries the weight: lam = m g
    assert result["lam"][-1] == pytest.approx(9.81, rel=1e-9)
