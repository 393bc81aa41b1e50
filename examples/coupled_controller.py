"""A plant with a stop and its controller, two FMUs coupled in ME and in CS.

    python examples/coupled_controller.py

MassSpringStop is driven into its stop by PositionController. Coupled in Model
Exchange, the two FMUs give the trajectory of ControlledMassSpringStop (the same
model exported as one FMU) to round-off; coupled in Co-Simulation they converge
to it as the communication step h shrinks, at first order with inputs held and
second order with inputs extrapolated.
"""

import numpy as np

from fmibridge import Edge, Guard, Halving, HybridSystem, Mode
from fmibridge.examples import load_builder
from fmibridge.flows.cosim_master import Communication
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import open_fmu

fmus = load_builder().build_fmus(
    models=["MassSpringStop", "PositionController", "ControlledMassSpringStop"]
)
CONNECTIONS = [
    ("plant.x", "controller.x_meas"),
    ("plant.v", "controller.v_meas"),
    ("controller.F", "plant.F"),
]


def with_stop(flow, prefix=""):
    """The stop at x = 1 m as the master's guard; v -> -0.6 v."""
    ix, iv = (flow.state_names.index(prefix + n) for n in ("x", "v"))

    def bounce(t, x):
        y = x.copy()
        y[iv] = -0.6 * x[iv]
        return y

    stop = Edge(Guard(lambda t, x: 1.0 - x[ix], "falling"), "run", bounce, "stop")
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def run(system, h):
    try:
        return Halving(h=h).run(system, 10.0)
    finally:
        system.close()


def coupled(interface, communication=None):
    parts = {
        "plant": open_fmu(fmus["MassSpringStop"], interface),
        "controller": open_fmu(fmus["PositionController_fmi3"], interface),
    }
    return with_stop(couple(parts, CONNECTIONS, communication=communication), "plant.")


single = run(with_stop(open_fmu(fmus["ControlledMassSpringStop"], "me")), 1e-3)
me = run(coupled("me"), 1e-3)
print(f"one FMU: {len(single.events)} impacts at {np.round(single.event_times, 6)}")
print(f"ME coupled - one FMU: max |dx| = {np.max(np.abs(me.x - single.x)):.1e}")
for scheme in ("jacobi", "gauss-seidel"):
    for inputs in ("hold", "extrapolate"):
        errors = [
            np.max(np.abs(run(coupled("cs", Communication(scheme, inputs)), h).x[-1]
                          - single.x[-1]))
            for h in (0.04, 0.02, 0.01)
        ]  # fmt: skip
        order = np.polyfit(np.log([0.04, 0.02, 0.01]), np.log(errors), 1)[0]
        rounded = np.round(errors, 6)
        print(f"CS {scheme:<12} {inputs:<11} errors {rounded} order {order:.2f}")
