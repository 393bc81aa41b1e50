"""The numba kernels behind a compiled `Contact`: lam, R* and the constrained phase.

A `Contact` whose four primitives are numba-compiled (`flows.compiled.compiled`
with kind "guard", "rhs", "force" and "hessian") gets a `CompiledContact`: its
dynamics (eqs. (6)-(7)) and projection R* (Sec. V) compiled, and a loop that
runs `Completion`'s constrained steps (step doubling, lam checks, projection)
until lam falls through zero, which it then locates by Illinois regula falsi.
Each kernel follows the Python code of `Contact` and `Completion` operation by
operation, so the results agree to round-off.

The generic kernels take the primitives as first-class functions and compile
once per machine (cached on disk); each contact compiles only three small
closures that bind them (about 0.2 s each).

References
----------
Or and Ames, eqs. (6)-(7) and Sec. V.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np
from numba import types

from ..core import bracket
from ..flows._kernels import (
    ARRAY,
    F64,
    I64,
    MATRIX,
    RHS,
    RHS_SIGNATURE,
    SIGNATURES,
    combine,
    is_narrow,
    narrow,
    propose,
    stage_state,
    start,
)

DYNAMICS_SIGNATURE = F64(F64, ARRAY, ARRAY)  # (t, x, dx/dt out) -> lam
GAP = types.FunctionType(SIGNATURES["guard"])
FORCE = types.FunctionType(SIGNATURES["force"])
HESSIAN = types.FunctionType(SIGNATURES["hessian"])
DYNAMICS = types.FunctionType(DYNAMICS_SIGNATURE)
INDEX = types.Array(types.int64, 1, "C", readonly=True)  # frozen in a closure

# Outcome codes of `constrained_phase`, in `out[STATUS]`.
STEPPED, LIFTED, STUCK, NON_FINITE = 0, 1, 2, 3
# Slots of the `out` array: status, the step the next phase step grows from,
# and rejected trials.
STATUS, LAST_STEP, REJECTED = 0, 1, 2
OUT_SIZE = 3


@numba.njit(F64(ARRAY, ARRAY, INDEX), cache=True)
def _dot_at(u, v, index):
    """sum_k u[k] v[index[k]]: dh times the entries of v at q or qdot."""
    total = 0.0
    for k in range(index.shape[0]):
        total += u[k] * v[index[k]]
    return total


@numba.njit(F64(ARRAY, ARRAY), cache=True)
def _dot(u, v):
    total = 0.0
    for i in range(u.shape[0]):
        total += u[i] * v[i]
    return total


@numba.njit(F64(ARRAY, ARRAY, MATRIX, ARRAY, INDEX), cache=True)
def _acceleration(f0, dh, hess, x, iv):
    """qdot^T H qdot + dh f0_v: the acceleration of h along the free flow f0."""
    curvature = 0.0
    for i in range(iv.shape[0]):
        row = 0.0
        for j in range(iv.shape[0]):
            row += hess[i, j] * x[iv[j]]
        curvature += row * x[iv[i]]
    return curvature + _dot_at(dh, f0, iv)


@numba.njit(
    F64(FORCE, RHS, HESSIAN, INDEX, F64, ARRAY, ARRAY), cache=True, error_model="numpy"
)
def dynamics(force, gradient, hessian, iv, t, x, dx):
    """Write dx/dt of the constrained dynamics (eq. 7) to dx; return lam (eq. 6).

    As `Contact.constrained`: f0 and b from two force evaluations, then
    lam = -(qdot^T H qdot + dh f0_v) / (dh b_v) and dx/dt = f0 + lam b.
    """
    f0 = force(t, x, 0.0)
    f1 = force(t, x, 1.0)  # b = f1 - f0, entry by entry where it is used
    dh = gradient(t, x)
    along = 0.0
    for k in range(iv.shape[0]):
        along += dh[k] * (f1[iv[k]] - f0[iv[k]])
    lam = -_acceleration(f0, dh, hessian(t, x), x, iv) / along
    for i in range(dx.shape[0]):
        dx[i] = f0[i] + lam * (f1[i] - f0[i])
    return lam


@numba.njit(F64(FORCE, RHS, HESSIAN, INDEX, F64, ARRAY), cache=True)
def hddot(force, gradient, hessian, iv, t, x):
    """The acceleration of h along the free flow (eq. 8), as `Contact.hddot`."""
    f0 = force(t, x, 0.0)
    return _acceleration(f0, gradient(t, x), hessian(t, x), x, iv)


@numba.njit(
    ARRAY(GAP, RHS, INDEX, INDEX, I64, F64, ARRAY), cache=True, error_model="numpy"
)
def project(gap, gradient, iq, iv, iterations, t, x):
    """R*: Newton on h along dh^T, then dh qdot = 0, as `Contact.project`."""
    out = x.copy()
    for _ in range(iterations):
        g = gap(t, out)
        if g == 0.0:
            break
        dh = gradient(t, out)
        scale = g / _dot(dh, dh)
        for k in range(iq.shape[0]):
            out[iq[k]] -= scale * dh[k]
    dh = gradient(t, out)
    scale = _dot_at(dh, out, iv) / _dot(dh, dh)
    for k in range(iv.shape[0]):
        out[iv[k]] -= scale * dh[k]
    return out


@numba.njit(
    ARRAY(DYNAMICS, RHS, F64, ARRAY, F64, MATRIX, ARRAY, ARRAY, ARRAY), cache=True
)
def advance(dynamics, project, t, x, h, a, b, c, slope):
    """One RK step of the constrained dynamics from the known first slope, then R*.

    As `ConstrainedFlow.advance` with `slope`: stage 0 of an explicit scheme is
    evaluated at (t, x), so the known dx/dt there stands in for it.
    """
    slopes = np.empty((b.shape[0], x.shape[0]))
    slopes[0] = slope
    for i in range(1, b.shape[0]):
        dynamics(t + c[i] * h, stage_state(x, h, a, slopes, i), slopes[i])
    return project(t + h, combine(x, h, b, slopes))


@numba.njit(types.boolean(F64, F64, F64, F64), cache=True)
def steady(lam0, lam_mid, lam1, lam_change):
    """As `completion._steady`: lam changes by < lam_change of its minimum."""
    change = max(abs(lam_mid - lam0), abs(lam1 - lam_mid))
    return change < lam_change * min(lam0, min(lam_mid, lam1))


@numba.njit(
    types.Tuple((F64, ARRAY))(
        DYNAMICS, RHS, MATRIX, ARRAY, ARRAY, F64, ARRAY, F64, ARRAY, F64, F64, I64
    ),
    cache=True,
)
def lift_off(dynamics, project, a, b, c, t, x, hs, slope, lam0, t_tol, max_iter):
    """Return (tc, x at t + tc): where lam falls through zero in [t, t + hs].

    As `Completion._lift_off`: Illinois (`bracket`) on lam along the step to
    t_tol, then the secant of lam across the final bracket.
    """
    scratch = np.empty(x.shape[0])
    z = advance(dynamics, project, t, x, hs, a, b, c, slope)
    state = start(0.0, lam0, hs, dynamics(t + hs, z, scratch), t_tol)
    for _ in range(max_iter):
        if is_narrow(state):
            break
        sigma = propose(state)
        z = advance(dynamics, project, t, x, sigma, a, b, c, slope)
        narrow(state, sigma, dynamics(t + sigma, z, scratch))
    lo, lo_f, hi, hi_f = (
        state[bracket.LO],
        state[bracket.LO_F],
        state[bracket.HI],
        state[bracket.HI_F],
    )
    frac = lo_f / (lo_f - hi_f) if lo_f != hi_f else 0.0
    tc = lo + (hi - lo) * min(max(frac, 0.0), 1.0)
    if tc > 0:
        return tc, advance(dynamics, project, t, x, tc, a, b, c, slope)
    return tc, x


@numba.njit(F64(ARRAY, ARRAY), cache=True)
def _largest_difference(u, v):
    """max |u - v|, as np.max(np.abs(u - v)) (nan if any difference is nan)."""
    return np.max(np.abs(u - v))


@numba.njit(
    I64(
        DYNAMICS,
        RHS,
        MATRIX,
        ARRAY,
        ARRAY,
        F64,
        ARRAY,
        F64,
        F64,
        F64,
        F64,
        F64,
        F64,
        F64,
        I64,
        I64,
        ARRAY,
        MATRIX,
        ARRAY,
        ARRAY,
    ),
    cache=True,
)
def constrained_phase(
    dynamics,
    project,
    a,
    b,
    c,
    t,
    x,
    last_step,
    h,
    t_end,
    tol,
    t_tol,
    reach_tol,
    lam_change,
    max_halvings,
    max_steps,
    ts,
    xs,
    lams,
    out,
):
    """Take constrained steps as `Completion._constrained_step` does, in one loop.

    Each step starts from twice the last accepted one (from h when last_step is
    0), and is halved (never below h) until step doubling agrees within tol, lam
    stays steady over both halves and stays positive. A step of h whose lam
    falls through zero is narrowed by Illinois to t_tol and the lift-off placed
    by the secant, as `Completion._lift_off`. Writes the accepted samples (the
    lift-off point last) to ts, xs, lams and returns their number; out holds the
    outcome (STEPPED, LIFTED, STUCK, or NON_FINITE for a step of h that gave
    non-finite values), the last step and the rejected trials.
    """
    n, rejected = 0, 0
    slope = np.empty(x.shape[0])
    scratch = np.empty(x.shape[0])
    lam0 = dynamics(t, x, slope)
    out[STATUS] = STEPPED
    while n < max_steps and t < t_end - reach_tol:
        hs = min(max(h, 2.0 * last_step if last_step > 0.0 else h), t_end - t)
        for _ in range(max_halvings):
            x_mid = advance(dynamics, project, t, x, hs / 2, a, b, c, slope)
            slope_mid = np.empty(x.shape[0])
            lam_mid = dynamics(t + hs / 2, x_mid, slope_mid)
            x_two = advance(
                dynamics, project, t + hs / 2, x_mid, hs / 2, a, b, c, slope_mid
            )
            slope_two = np.empty(x.shape[0])
            lam1 = dynamics(t + hs, x_two, slope_two)
            crossing = lam_mid <= 0 or lam1 <= 0
            if hs > h and (
                crossing
                or not steady(lam0, lam_mid, lam1, lam_change)
                or _largest_difference(
                    advance(dynamics, project, t, x, hs, a, b, c, slope), x_two
                )
                > tol
            ):
                rejected += 1
                hs = max(hs / 2, min(h, t_end - t))
                continue
            if crossing:
                tc, xc = lift_off(
                    dynamics,
                    project,
                    a,
                    b,
                    c,
                    t,
                    x,
                    hs,
                    slope,
                    lam0,
                    t_tol,
                    max_halvings,
                )
                ts[n], xs[n], lams[n] = t + tc, xc, dynamics(t + tc, xc, scratch)
                out[STATUS] = LIFTED
                n += 1
            elif not (np.all(np.isfinite(x_two)) and np.isfinite(lam1)):
                out[STATUS] = NON_FINITE
            else:
                last_step = hs
                t = t_end if t + hs >= t_end - reach_tol else t + hs
                x, slope, lam0 = x_two, slope_two, lam1
                ts[n], xs[n], lams[n] = t, x, lam1
                n += 1
            break
        else:
            out[STATUS] = STUCK
        if out[STATUS] != STEPPED:
            break
    out[LAST_STEP], out[REJECTED] = last_step, rejected
    return n


@dataclass(frozen=True)
class CompiledContact:
    """A contact's compiled dynamics, projection and constrained-phase loop.

    `dynamics(t, x, dx) -> lam`, `project(t, x) -> x`, the gap rate
    `rate(t, x) -> dh qdot` and `hddot(t, x)` (eq. 8; the last two compiled
    guards) are bound to the contact's primitives; `phase(...)` is
    `constrained_phase` bound to the first two.
    """

    dynamics: object
    project: object
    rate: object
    hddot: object
    phase: object
    gap: object

    def constrained(self, t: float, x: np.ndarray) -> tuple[np.ndarray, float]:
        dx = np.empty(x.shape[0])
        return dx, self.dynamics(t, x, dx)

    @cached_property
    def functions(self) -> tuple:
        """([dynamics], [project], [gap, rate, hddot]) as typed lists, the form
        `_completion_kernels.run` takes them in (cheap to pass from Python)."""
        from numba.typed import List

        dynamics = List.empty_list(DYNAMICS)
        dynamics.append(self.dynamics)
        project = List.empty_list(types.FunctionType(RHS_SIGNATURE))
        project.append(self.project)
        scalars = List.empty_list(GAP)
        for fn in (self.gap, self.rate, self.hddot):
            scalars.append(fn)
        return dynamics, project, scalars


def bind(
    gap, gradient, force, hessian, q_index, v_index, iterations
) -> CompiledContact:
    """Bind the generic kernels to one contact's compiled primitives."""
    iq = np.array(q_index, dtype=np.int64)
    iv = np.array(v_index, dtype=np.int64)

    @numba.njit(DYNAMICS_SIGNATURE)
    def bound_dynamics(t, x, dx):
        return dynamics(force, gradient, hessian, iv, t, x, dx)

    @numba.njit(RHS_SIGNATURE)
    def bound_project(t, x):
        return project(gap, gradient, iq, iv, iterations, t, x)

    @numba.njit(SIGNATURES["guard"])
    def bound_rate(t, x):
        return _dot(gradient(t, x), x[iv])

    @numba.njit(SIGNATURES["guard"])
    def bound_hddot(t, x):
        return hddot(force, gradient, hessian, iv, t, x)

    # fmt: off
    @numba.njit
    def phase(a, b, c, t, x, last, h, t_end, tol, t_tol, reach, lam, n_halve, n, ts,
              xs, lams, out):  # *args would warn that function types are experimental
        return constrained_phase(
            bound_dynamics, bound_project, a, b, c, t, x, last, h, t_end, tol, t_tol,
            reach, lam, n_halve, n, ts, xs, lams, out,
        )
    # fmt: on

    return CompiledContact(
        bound_dynamics, bound_project, bound_rate, bound_hddot, phase, gap
    )
