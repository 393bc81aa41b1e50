"""The co-simulation master's order of convergence, on a plant with a stop.

MassSpringStop driven into its stop by PositionController, coupled in
Co-Simulation (Jacobi or Gauss-Seidel, inputs held or extrapolated:
`flows.cosim_master`), against the same model exported as one Model Exchange
FMU (ControlledMassSpringStop, RK4 at h = 1e-3). Halving brackets the impacts
to 1e-10 s; the error is the largest difference of the final state, the order
the slope of log error against log h.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.guards import Edge, Guard
from ..core.system import HybridSystem, Mode
from ..flows.cosim_master import Communication
from ..flows.coupled import couple
from ..flows.fmu import open_fmu
from ..methods.halving import Halving
from .study import fit_slope

CONNECTIONS = (
    ("plant.x", "controller.x_meas"),
    ("plant.v", "controller.v_meas"),
    ("controller.F", "plant.F"),
)
STEPS = {  # communication steps h, s, of each study size
    "tiny": (0.04, 0.02, 0.01),
    "quick": (0.04, 0.02, 0.01, 0.005),
    "full": (0.08, 0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125),
}
VARIANTS = tuple(
    Communication(scheme, inputs)
    for scheme in ("jacobi", "gauss-seidel")
    for inputs in ("hold", "extrapolate")
)
T_END = 10.0  # s: seven impacts, the last at 8.34 s
X_STOP, RESTITUTION = 1.0, 0.6  # the plant's defaults
REFERENCE_H = 1e-3  # s: RK4 on the single FMU


def with_stop(flow, x: str, v: str) -> HybridSystem:
    """The flow with the plant's stop: gap = x_stop - x falls to 0, v -> -e v."""
    ix, iv = flow.state_names.index(x), flow.state_names.index(v)

    def gap(t, state):
        return X_STOP - state[ix]

    def bounce(t, state):
        after = state.copy()
        after[iv] = -RESTITUTION * state[iv]
        return after

    stop = Edge(Guard(gap, "falling"), "run", bounce, "stop")
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def _final(system: HybridSystem, h: float) -> tuple[np.ndarray, np.ndarray]:
    """The final state and the impact times of a Halving run."""
    try:
        result = Halving(h=h).run(system, T_END)
    finally:
        system.close()
    result.raise_for_status()
    return result.x[-1], result.event_times


def communication_orders(steps=STEPS["tiny"], fmu_dir: Path | None = None):
    """Run the study; return (errors, orders) as DataFrames.

    errors: scheme, inputs, h, final-state error, impact-time error, impacts.
    orders: scheme, inputs and the fitted slope of log error on log h.
    """
    if fmu_dir is None:
        from ..examples import load_builder

        fmu_dir = Path(load_builder().build_fmus()["MassSpringStop"]).parent
    single = open_fmu(fmu_dir / "ControlledMassSpringStop.fmu", "me")
    exact_x, exact_t = _final(with_stop(single, "x", "v"), REFERENCE_H)
    rows = []
    for communication in VARIANTS:
        for h in steps:
            parts = {
                "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", "cs"),
                "controller": open_fmu(fmu_dir / "PositionController.fmu", "cs"),
            }
            flow = couple(parts, CONNECTIONS, communication=communication)
            x, t = _final(with_stop(flow, "plant.x", "plant.v"), h)
            same = len(t) == len(exact_t)
            impact_error = float(np.max(np.abs(t - exact_t))) if same else np.inf
            error = float(np.max(np.abs(x - exact_x)))
            variant = (communication.scheme, communication.inputs, h)
            rows.append((*variant, error, impact_error, len(t)))
    columns = ["scheme", "inputs", "h", "error", "impact_error", "impacts"]
    errors = pd.DataFrame(rows, columns=columns)
    orders = (
        errors.groupby(["scheme", "inputs"], sort=False)
        .apply(lambda g: fit_slope(g["h"], g["error"]), include_groups=False)
        .rename("order")
        .reset_index()
    )
    return errors, orders
