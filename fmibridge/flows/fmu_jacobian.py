"""What an implicit integrator asks of a Model Exchange FMU: its Jacobian df/dx
from the FMU's directional derivatives (column j: the derivative along x_j),
and its states' nominal values. The flag that the FMU provides them is read
from the model description itself: fmpy reads FMI 2.0's spelling only.

References
----------
FMI 2.0.4, Sec. 3.2.1 (fmi2GetDirectionalDerivative, "v_unknown = J v_known");
FMI 3.0, Sec. 3.2.5 (fmi3GetDirectionalDerivative).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..core._functions import Function, PythonVector
from .fmi import _status_error

FLAGS = ("providesDirectionalDerivative", "providesDirectionalDerivatives")


def provides_directional_derivatives(flow) -> bool:
    """Return True if the flow's FMU declares directional derivatives for Model
    Exchange (either FMI version's spelling of the flag)."""
    element = flow.archive.root.find("ModelExchange")
    return element is not None and any(element.get(f) in ("true", "1") for f in FLAGS)


def fmu_jacobian(flow) -> Function | None:
    """Return df/dx of a Model Exchange FMU flow as a Function of n*n values
    (column-major), or None where the FMU provides no directional derivatives
    (FMI 1.0 never does)."""
    if flow.archive.fmi_version == "1.0" or not provides_directional_derivatives(flow):
        return None
    n = len(flow.state_names)
    return PythonVector(
        _directional_jacobian(flow), n, n * n, f"the Jacobian of {flow.path}"
    )


def _directional_jacobian(flow) -> Callable[[float, np.ndarray], np.ndarray]:
    """df/dx at (t, x): one directional derivative per state (column)."""
    from fmpy.fmi1 import FMICallException

    derivative_of = {
        d.variable.derivative.name: d.variable.valueReference
        for d in flow.archive.description.derivatives
    }
    names = dict.fromkeys(_variable_of(flow, name) for name in flow.state_names)
    knowns = [flow.archive.variables[name].vr for name in names]
    unknowns = [derivative_of[name] for name in names]
    n = len(flow.state_names)
    function = f"fmi{flow.instance.version}GetDirectionalDerivative"

    def jacobian(t: float, x: np.ndarray) -> np.ndarray:
        flow.rhs(t, x)  # sets the inputs at t, the time and the states
        columns, seed = np.empty((n, n)), np.zeros(n)
        for j in range(n):
            seed[j] = 1.0
            try:
                columns[j] = flow.instance._fmu.getDirectionalDerivative(
                    unknowns, knowns, seed.tolist()
                )
            except FMICallException as exc:
                raise _status_error(flow.instance, function, exc.status) from None
            seed[j] = 0.0
        return columns.reshape(-1)

    return jacobian


def _variable_of(flow, element: str) -> str:
    """The variable an element name belongs to ('x[2]' -> 'x')."""
    return element if element in flow.archive.variables else element.split("[", 1)[0]


def state_nominals(flow) -> np.ndarray:
    """Return each state's nominal value (1 where the FMU gives none), as FMPy
    scales its absolute tolerances by them."""
    by_name = {v.name: v for v in flow.archive.description.modelVariables}
    values = []
    for element in flow.state_names:
        nominal = getattr(by_name.get(_variable_of(flow, element)), "nominal", None)
        try:
            value = abs(float(nominal)) if nominal is not None else 1.0
        except (TypeError, ValueError):
            value = 1.0
        values.append(value if math.isfinite(value) and value > 0 else 1.0)
    return np.array(values)
