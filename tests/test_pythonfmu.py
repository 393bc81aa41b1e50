"""A Co-Simulation FMU built by pythonfmu: CS only, no state saving (its default).

The cart, as Modelica would write it with the FMU's own fixed-step scheme:

    model Cart "a cart on a spring and damper, pushed by F"
      parameter Real m = 1 "mass, kg";
      parameter Real k = 4 "spring, N/m";
      parameter Real d = 0.5 "damper, N.s/m";
      input Real F "push, N";
      output Real x(start = 1) "position, m";
      output Real v(start = 0) "velocity, m/s";
    equation
      // one semi-implicit Euler step per communication step h:
      // v := v + h (F - k x - d v) / m;  x := x + h v
    end Cart;
"""

import fmpy
import numpy as np

from fmibridge import Halving
from fmibridge.flows.fmu import fmu_system, open_fmu

H, T_END = 0.05, 2.0


def test_pythonfmu_cart_is_cs_only_without_state_saving(cart):
    with open_fmu(cart) as flow:
        assert flow.interface == "CoSimulation"
        assert flow.archive.interfaces == ("CoSimulation",)
        assert not flow.archive.capability("CoSimulation", "canGetAndSetFMUstate")


def test_plain_run_equals_fmpy(cart):
    """fmibridge's plain run and fmpy.simulate_fmu take the same doSteps."""
    system = fmu_system(cart, inputs={"F": 2.0}, parameters={"d": 0.3})
    try:
        result = Halving(h=H).run(system, t_end=T_END)
    finally:
        system.close()
    reference = fmpy.simulate_fmu(
        str(cart),
        stop_time=T_END,
        output_interval=H,
        start_values={"F": 2.0, "d": 0.3},
    )
    assert result.status.is_success
    assert len(result.t) == len(reference) == 41
    np.testing.assert_allclose(result.t, reference["time"], rtol=0, atol=1e-12)
    for name in ("x", "v"):
        np.testing.assert_allclose(
            result.outputs[name], reference[name], rtol=0, atol=1e-12
        )
    # the cart settles towards F/k = 0.5 m: the run is not trivially flat
    assert abs(result.outputs["x"][-1] - 0.5) < 0.5
    assert np.ptp(result.outputs["x"]) > 0.5
