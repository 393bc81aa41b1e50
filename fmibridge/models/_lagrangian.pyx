"""The Euler-Lagrange vector field of a `LagrangianSystem`, with its contact force.

For x = [q, qdot], dx/dt = (qdot, qddot) with M(q) qddot = dh(q)^T lam -
bias(t, q, qdot): Or and Ames's eq. (3) (lam = 0) and eq. (5). The model's
functions are `Function`s, Python called back or numba-compiled called at their
C addresses; the field is the same code for both.

References
----------
Or and Ames, "Formal and practical completion of Lagrangian hybrid systems",
Def. 2 and eqs. (3)-(5).
"""

from libc.math cimport fabs

import numpy as np

from ..core._functions cimport Function

from ..core.errors import FmibridgeError

SMALL = 4  # mass matrices up to this size are solved by `eliminate`, not LAPACK


cdef void eliminate(double* m, double* x, Py_ssize_t n) noexcept nogil:
    """Overwrite x with the solution of m y = x (m by rows, overwritten) by
    Gaussian elimination with partial pivoting; a singular m gives inf or nan."""
    cdef Py_ssize_t i, j, k, pivot
    cdef double factor, total, swap
    for k in range(n):
        pivot = k
        for i in range(k + 1, n):
            if fabs(m[i * n + k]) > fabs(m[pivot * n + k]):
                pivot = i
        for j in range(n):
            swap = m[k * n + j]
            m[k * n + j] = m[pivot * n + j]
            m[pivot * n + j] = swap
        swap = x[k]
        x[k] = x[pivot]
        x[pivot] = swap
        for i in range(k + 1, n):
            factor = m[i * n + k] / m[k * n + k]
            for j in range(k + 1, n):
                m[i * n + j] = m[i * n + j] - factor * m[k * n + j]
            x[i] = x[i] - factor * x[k]
    for i in range(n - 1, -1, -1):
        total = x[i]
        for j in range(i + 1, n):
            total = total - m[i * n + j] * x[j]
        x[i] = total / m[i * n + i]


cdef int solve_into(double[::1] m, double[::1] x, Py_ssize_t n) except -1:
    """Overwrite x[:n] with the solution of m y = x: `eliminate` or LAPACK."""
    if n <= SMALL:
        eliminate(&m[0], &x[0], n)
        return 0
    cdef double[::1] y = np.linalg.solve(
        np.asarray(m[:n * n]).reshape(n, n), np.asarray(x[:n])
    )
    x[:n] = y
    return 0


def solve(a, b):
    """Return y with a y = b, as `solve_into` finds it."""
    y = np.array(b, dtype=float).reshape(-1)
    m = np.array(a, dtype=float, order="C").reshape(-1)
    cdef Py_ssize_t n = y.shape[0]
    if m.shape[0] != n * n:
        raise FmibridgeError(f"solve: a has {m.shape[0]} values for {n} unknowns.")
    solve_into(m, y, n)
    return y


cdef class EulerLagrange(Function):
    """dx/dt = (qdot, M(q)^-1 (dh(q)^T lam - bias(t, q, qdot))) for x = [q, qdot]
    (lam = 0), or for x = [q, qdot, lam] if `forced`; `mass` gives M by rows,
    `gradient` dh (both of n values), `bias` takes 2n; errors name it `what`."""

    cdef readonly Py_ssize_t n
    cdef bint forced
    cdef Function mass, bias, gradient
    cdef double[::1] m, dh, b

    def __init__(self, Function mass, Function bias, Function gradient, bint forced,
                 str what):
        cdef Py_ssize_t n = gradient.n_in
        super().__init__(2 * n + forced, 2 * n, what)
        self.n, self.forced = n, forced
        self.mass, self.bias, self.gradient = mass, bias, gradient
        self.m, self.dh, self.b = np.empty(n * n), np.empty(n), np.empty(n)

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t n = self.n, i
        cdef double lam = x[2 * n] if self.forced else 0.0
        self.gradient.call(t, x, &self.dh[0])
        self.mass.call(t, x, &self.m[0])
        self.bias.call(t, x, &self.b[0])
        for i in range(n):
            self.b[i] = self.dh[i] * lam - self.b[i]
        solve_into(self.m, self.b, n)
        for i in range(n):
            out[i] = x[n + i]
            out[n + i] = self.b[i]
        return 0


cdef class ForceMap(EulerLagrange):
    """The forced `EulerLagrange` field, from Python also called as the
    contact's force map (t, x, lam) -> dx/dt."""

    cdef double[::1] point

    def __init__(self, Function mass, Function bias, Function gradient, str what):
        super().__init__(mass, bias, gradient, True, what)
        self.point = np.empty(self.n_in)

    def __call__(self, double t, x, lam=None):
        """Return dx/dt at (t, x) with the force lam (the last of x if None)."""
        if lam is None:
            return Function.__call__(self, t, x)
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        cdef Py_ssize_t i, n = self.n_out
        if xs.shape[0] != n:
            raise FmibridgeError(
                f"{self.what} takes {n} state value(s), got {xs.shape[0]}."
            )
        for i in range(n):
            self.point[i] = xs[i]
        self.point[n] = lam
        out = np.empty(n)
        cdef double[::1] values = out
        self.call(t, &self.point[0], &values[0])
        return out


cdef class OfState(Function):
    """A Function of q as a function of the state x = [q, qdot]; from Python it
    returns the model's `shape` (a scalar for ())."""

    cdef Function of_q
    cdef tuple shape

    def __init__(self, Function of_q, Py_ssize_t n_state, tuple shape):
        super().__init__(n_state, of_q.n_out, of_q.what)
        self.of_q, self.shape = of_q, shape

    cdef int call(self, double t, const double* x, double* out) except -1:
        return self.of_q.call(t, x, out)

    def __call__(self, double t, x):
        """Return the value at (t, x) in the model's shape."""
        values = Function.__call__(self, t, x)
        return values[0] if not self.shape else values.reshape(self.shape)

    def engine_entry(self, Py_ssize_t n):
        """As a guard of a state of n values: (this Function, entry 0)."""
        return (self, 0) if n == self.n_in and self.n_out == 1 else None
