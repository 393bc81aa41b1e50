"""A frictionless unilateral contact's numerics on its primitives as Functions
of the state x: the gap rate, hddot (eq. 8), the contact force lam (eq. 6), the
constrained dynamics (eq. 7), the impact law (eq. 4) and R* (Sec. V). The force
map is affine in lam: its values at lam = 0 and 1 give the free dx/dt f0 and
b = f1 - f0 (b_v = M^-1 dh^T). Sums run in index order.

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
eqs. (4)-(8), Sec. V.
"""

from libc.math cimport fabs, isnan
from libc.string cimport memcpy

import functools

import numpy as np

from ..core._functions cimport Function
from ..core._rk cimport Tableau
from ..flows._stepper cimport Stepper

from ..core.errors import FmibridgeError

# Central-difference step for the Hessian when the model gives none: sqrt of the
# float64 epsilon, the usual balance of truncation and round-off (scaled by |q|).
cdef double HESSIAN_STEP = 1.5e-8
# Newton iterations that put q back on h(q) = 0; one suffices when h is linear in
# q, and each further one squares the error of a smooth h (errors here ~1e-12).
cdef int PROJECTION_ITERATIONS = 3


cdef inline double _dot_at(const double* u, const double* v, const Py_ssize_t* index,
                           Py_ssize_t m) noexcept nogil:
    """sum_k u[k] v[index[k]] (index NULL: v[k])."""
    cdef double total = 0.0
    cdef Py_ssize_t k
    for k in range(m):
        total = total + u[k] * v[k if index == NULL else index[k]]
    return total


def _expect(Function fn, Py_ssize_t n_in, Py_ssize_t n_out, str role, str name):
    if fn.n_in != n_in or fn.n_out != n_out:
        raise FmibridgeError(
            f"Contact `{name}`: `{role}` ({fn.what}) maps {fn.n_in} to {fn.n_out} "
            f"values; the contact needs {n_in} to {n_out}."
        )


cdef class ContactFunctions:
    """A contact's primitives and their numerics, on a state pointer (`rate_at`)
    and from Python on an array (`rate`). gap, gradient and force map n -> 1,
    n -> nq and n + 1 -> n (the states, lam); hessian n -> nq * nq (row by row)
    or None. q and qdot sit at q_index and v_index of x. `projected`: the
    constrained dx/dt is the free one, f0, with lam still that of eq. (6), so a
    constrained step is a free step and R* (Or and Ames, Sec. V)."""

    def __init__(self, Function gap, Function gradient, Function force,
                 Function hessian, q_index, v_index, double restitution, str name,
                 bint projected=False):
        cdef Py_ssize_t n = gap.n_in, nq = len(q_index)
        _expect(gap, n, 1, "gap_fn", name)
        _expect(gradient, n, nq, "gradient_fn", name)
        _expect(force, n + 1, n, "rhs_with_force", name)
        if hessian is not None:
            _expect(hessian, n, nq * nq, "hessian_fn", name)
        self.n, self.nq, self.restitution, self.name = n, nq, restitution, name
        self.gap, self.gradient = gap, gradient
        self.force, self.hessian, self.projected = force, hessian, projected
        self.iq = np.array(q_index, dtype=np.intp)
        self.iv = np.array(v_index, dtype=np.intp)
        self.z, self.one, self.hess = np.empty(n + 1), np.empty(1), np.empty(nq * nq)
        self.f0, self.f1, self.ahead, self.behind = np.empty((4, n))
        self.grad, self.dh_ahead, self.dh_behind = np.empty((3, nq))
        self.rhs_function = ContactFunction(self, False)
        self.rate_function = ContactFunction(self, True)

    cdef double gap_at(self, double t, const double* x) except? -1:
        """h(q)."""
        self.gap.call(t, x, &self.one[0])
        return self.one[0]

    cdef double rate_at(self, double t, const double* x) except? -1:
        """hdot = dh(q) qdot."""
        self.gradient.call(t, x, &self.grad[0])
        return _dot_at(&self.grad[0], x, &self.iv[0], self.nq)

    cdef double curvature_at(self, double t, const double* x) except? -1:
        """qdot^T H(q) qdot, the velocity term of eq. (8) (without H: by central
        differences of dh along qdot)."""
        cdef Py_ssize_t i, j, nq = self.nq, n = self.n
        cdef double total = 0.0, row, step, largest
        if self.hessian is not None:
            self.hessian.call(t, x, &self.hess[0])
            for i in range(nq):
                row = 0.0
                for j in range(nq):
                    row = row + self.hess[i * nq + j] * x[self.iv[j]]
                total = total + row * x[self.iv[i]]
            return total
        largest = fabs(x[self.iq[0]])  # max |q|, nan if one is nan
        for i in range(1, nq):
            if not isnan(largest) and not fabs(x[self.iq[i]]) <= largest:
                largest = fabs(x[self.iq[i]])
        step = HESSIAN_STEP * (1.0 + largest)
        memcpy(&self.ahead[0], x, n * sizeof(double))
        memcpy(&self.behind[0], x, n * sizeof(double))
        for i in range(nq):
            self.ahead[self.iq[i]] = self.ahead[self.iq[i]] + step * x[self.iv[i]]
            self.behind[self.iq[i]] = self.behind[self.iq[i]] - step * x[self.iv[i]]
        self.gradient.call(t, &self.ahead[0], &self.dh_ahead[0])
        self.gradient.call(t, &self.behind[0], &self.dh_behind[0])
        for i in range(nq):
            total = total + (self.dh_ahead[i] - self.dh_behind[i]) * x[self.iv[i]]
        return total / (2.0 * step)

    cdef int free_at(self, double t, const double* x, double lam,
                     double* out) except -1:
        """dx/dt with the contact force lam along dh^T (the force map) to out."""
        memcpy(&self.z[0], x, self.n * sizeof(double))
        self.z[self.n] = lam
        return self.force.call(t, &self.z[0], out)

    cdef double hddot_at(self, double t, const double* x) except? -1:
        """The acceleration of h along the free flow, eq. (8)."""
        cdef double curvature
        self.free_at(t, x, 0.0, &self.f0[0])
        curvature = self.curvature_at(t, x)
        self.gradient.call(t, x, &self.grad[0])
        return curvature + _dot_at(&self.grad[0], &self.f0[0], &self.iv[0], self.nq)

    cdef double along_at(self, double t, const double* x) except? -1:
        """dh b_v, b = f1 - f0: dh M^-1 dh^T, the denominator of eqs. (4), (6),
        with f0, f1 and dh at (t, x) left in the scratch."""
        cdef double total = 0.0
        cdef Py_ssize_t k
        self.free_at(t, x, 0.0, &self.f0[0])
        self.free_at(t, x, 1.0, &self.f1[0])
        self.gradient.call(t, x, &self.grad[0])
        for k in range(self.nq):
            total = total + self.grad[k] * (self.f1[self.iv[k]] - self.f0[self.iv[k]])
        return total

    cdef double constrained_at(self, double t, const double* x, double* dx) except? -1:
        """dx/dt of the constrained dynamics, eq. (7), to dx; return lam, eq. (6):
        lam = -(qdot^T H qdot + dh f0_v) / (dh b_v), dx/dt = f0 + lam b."""
        cdef double* f0 = &self.f0[0]
        cdef double* f1 = &self.f1[0]
        cdef double along = self.along_at(t, x), lam
        cdef Py_ssize_t i
        lam = -(
            self.curvature_at(t, x) + _dot_at(&self.grad[0], f0, &self.iv[0], self.nq)
        ) / along
        for i in range(self.n):
            dx[i] = f0[i] if self.projected else f0[i] + lam * (f1[i] - f0[i])
        return lam

    cdef int project_at(self, double t, const double* x, double* out) except -1:
        """R* (Sec. V) to out: Newton on h(q) = 0 along dh^T, then qdot projected
        orthogonally (Euclidean, as in Theorem 3) onto dh(q) qdot = 0."""
        cdef Py_ssize_t k, nq = self.nq
        cdef int _iteration
        cdef double g, scale
        cdef double* dh = &self.grad[0]
        if out != x:
            memcpy(out, x, self.n * sizeof(double))
        for _iteration in range(PROJECTION_ITERATIONS):
            g = self.gap_at(t, out)
            if g == 0.0:
                break
            self.gradient.call(t, out, dh)
            scale = g / _dot_at(dh, dh, NULL, nq)
            for k in range(nq):
                out[self.iq[k]] = out[self.iq[k]] - scale * dh[k]
        self.gradient.call(t, out, dh)
        scale = _dot_at(dh, out, &self.iv[0], nq) / _dot_at(dh, dh, NULL, nq)
        for k in range(nq):
            out[self.iv[k]] = out[self.iv[k]] - scale * dh[k]
        return 0

    cdef int impact_at(self, double t, const double* x, double* out) except -1:
        """The state after the frictionless impact law, eq. (4), to out:
        qdot+ = qdot - (1 + e) (dh qdot) / (dh b_v) b_v, b_v = M^-1 dh^T; it gives
        dh qdot+ = -e dh qdot."""
        cdef double along = self.along_at(t, x), scale
        cdef Py_ssize_t k, i
        scale = (1.0 + self.restitution) * _dot_at(
            &self.grad[0], x, &self.iv[0], self.nq) / along
        if out != x:
            memcpy(out, x, self.n * sizeof(double))
        for k in range(self.nq):
            i = self.iv[k]
            out[i] = out[i] - scale * (self.f1[i] - self.f0[i])
        return 0

    cdef double[::1] _state(self, x):
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float).reshape(-1)
        if xs.shape[0] != self.n:
            raise FmibridgeError(
                f"Contact `{self.name}` takes {self.n} state value(s), got "
                f"{xs.shape[0]}."
            )
        return xs

    def h(self, double t, x):
        cdef double[::1] xs = self._state(x)
        return self.gap_at(t, &xs[0])

    def dh(self, double t, x):
        return self.gradient(t, self._state(x))

    def rate(self, double t, x):
        cdef double[::1] xs = self._state(x)
        return self.rate_at(t, &xs[0])

    def curvature(self, double t, x):
        cdef double[::1] xs = self._state(x)
        return self.curvature_at(t, &xs[0])

    def hddot(self, double t, x):
        cdef double[::1] xs = self._state(x)
        return self.hddot_at(t, &xs[0])

    def affine(self, double t, x):
        f0, f1 = (self.force(t, np.append(self._state(x), lam)) for lam in (0.0, 1.0))
        return f0, f1 - f0

    def constrained(self, double t, x):
        cdef double[::1] xs = self._state(x), dx = np.empty(self.n)
        lam = self.constrained_at(t, &xs[0], &dx[0])
        return np.asarray(dx), lam

    def project(self, double t, x):
        cdef double[::1] out = np.array(self._state(x))
        self.project_at(t, &out[0], &out[0])
        return np.asarray(out)

    def impact(self, double t, x):
        cdef double[::1] out = np.array(self._state(x))
        self.impact_at(t, &out[0], &out[0])
        return np.asarray(out)


# `projection.ProjectedContact`'s numerics
ProjectionFunctions = functools.partial(ContactFunctions, projected=True)


cdef class ContactFunction(Function):
    """The constrained dynamics, eq. (7) (n -> n), or with `rate` the gap rate
    dh(q) qdot (n -> 1, a guard for the loops), as a Function."""

    cdef ContactFunctions contact
    cdef bint rate

    def __init__(self, ContactFunctions contact, bint rate):
        what = "gap rate" if rate else "constrained dynamics"
        super().__init__(contact.n, 1 if rate else contact.n,
                         f"the {what} of contact `{contact.name}`")
        self.contact, self.rate = contact, rate

    cdef int call(self, double t, const double* x, double* out) except -1:
        if self.rate:
            out[0] = self.contact.rate_at(t, x)
        else:
            self.contact.constrained_at(t, x, out)
        return 0


cdef class ProjectedStepper(Stepper):
    """A constrained step: one step of a tableau on eq. (7), then R*, so h and
    dh qdot are zero to round-off after every step (A19: projection)."""

    def __init__(self, ContactFunctions contact, Tableau tableau):
        self.n, self.rhs, self.contact, self.tableau = (
            contact.n, contact.rhs_function, contact, tableau
        )
        self.work = np.empty(max(tableau.work_size(contact.n), 1))
        self.y = np.empty(contact.n)

    cdef int advance(self, double t, const double* x, double h, const double* k1,
                     double* out) except -1:
        self.tableau.step(self.rhs, t, x, h, k1, &self.y[0], &self.work[0])
        return self.contact.project_at(t + h, &self.y[0], out)

    def constrained_step(self, double t, x, double h, slope=None):
        """Return the state after a constrained step of h from (t, x); `slope`,
        dx/dt at (t, x) if known, stands in for the first stage."""
        cdef double[::1] xs = self.contact._state(x), y = np.empty(self.n), k1
        if slope is not None:
            k1 = self.contact._state(slope)
        self.advance(t, &xs[0], h, NULL if slope is None else &k1[0], &y[0])
        return np.asarray(y)
