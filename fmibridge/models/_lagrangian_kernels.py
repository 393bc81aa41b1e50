"""The numba kernels behind a compiled `LagrangianSystem`: its vector field and contact.

A LagrangianSystem whose M(q), bias(t, q, qdot), h(q), dh(q) and H(q) numba
compiles gets the primitives `CompiledFlow` and `Contact` run compiled: the
Euler-Lagrange field with a contact force (Or and Ames, eqs. 3 and 5) and h,
dh and H as functions of the state (t, x). The generic kernel takes the
model's functions as first-class functions and compiles once per machine
(cached on disk); each model compiles only the small closures that bind them.
The kernel follows `LagrangianSystem.acceleration` and `LagrangianFlow`
operation by operation, with the same `lagrangian.eliminate` for small mass
matrices, so the results agree with the Python path bit for bit (to
round-off beyond SMALL coordinates, where each calls its LAPACK).

References
----------
Or and Ames, eqs. (3)-(5).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types

from ..flows._kernels import ARRAY, MATRIX, SIGNATURES
from . import lagrangian

F64, I64 = types.float64, types.int64
# The model's own functions of q (and t, qdot), as `compiled` compiles them.
SIGNATURES_Q = {
    "mass_matrix": MATRIX(ARRAY),  # M(q)
    "bias": ARRAY(F64, ARRAY, ARRAY),  # bias(t, q, qdot)
    "gap": F64(ARRAY),  # h(q)
    "gap_gradient": ARRAY(ARRAY),  # dh(q)
    "gap_hessian": MATRIX(ARRAY),  # H(q)
}
MASS = types.FunctionType(SIGNATURES_Q["mass_matrix"])
BIAS = types.FunctionType(SIGNATURES_Q["bias"])
GRADIENT = types.FunctionType(SIGNATURES_Q["gap_gradient"])
eliminate = numba.njit(ARRAY(MATRIX, ARRAY), cache=True, error_model="numpy")(
    lagrangian.eliminate
)


@numba.njit(ARRAY(MASS, BIAS, GRADIENT, I64, F64, ARRAY, F64), cache=True)
def forced_rhs(mass, bias, gradient, n, t, x, lam):
    """Return (qdot, qddot) with qddot = M^-1 (dh^T lam - bias), as
    `LagrangianFlow.rhs_with_force`; x = [q, qdot], n = len(q)."""
    q, v = x[:n], x[n:]
    force = gradient(q) * lam
    m, rhs = mass(q), force - bias(t, q, v)
    if n <= lagrangian.SMALL:
        acceleration = eliminate(m, rhs)
    else:
        acceleration = np.linalg.solve(m, rhs)
    dx = np.empty(2 * n)
    for i in range(n):
        dx[i] = v[i]
        dx[n + i] = acceleration[i]
    return dx


def bind(functions: dict, n: int) -> dict:
    """Bind the kernel and the model's compiled functions (by `SIGNATURES_Q`
    name) to the primitives of the state x = [q, qdot]: "rhs" f(t, x), "force"
    (t, x, lam), "gap" h(t, x), "gradient" dh(t, x) and "hessian" H(t, x)."""
    mass, bias = functions["mass_matrix"], functions["bias"]
    gap, gradient = functions["gap"], functions["gap_gradient"]
    hessian = functions["gap_hessian"]

    @numba.njit(SIGNATURES["force"])
    def force_fn(t, x, lam):
        return forced_rhs(mass, bias, gradient, n, t, x, lam)

    @numba.njit(SIGNATURES["rhs"])
    def rhs_fn(t, x):
        return force_fn(t, x, 0.0)

    @numba.njit(SIGNATURES["guard"])
    def gap_fn(t, x):
        return gap(x[:n])

    @numba.njit(SIGNATURES["rhs"])
    def gradient_fn(t, x):
        return gradient(x[:n])

    @numba.njit(SIGNATURES["hessian"])
    def hessian_fn(t, x):
        return hessian(x[:n])

    return {
        "rhs": rhs_fn,
        "force": force_fn,
        "gap": gap_fn,
        "gradient": gradient_fn,
        "hessian": hessian_fn,
    }
