"""One explicit Runge-Kutta step from a Butcher tableau, compiled: the only
step, error estimate (`estimate`) and dense output (`interpolate`) in
fmibridge. Stage i's state is x + sum_j (h a_ij) k_j, skipping zero entries.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4 and II.6.
"""

from libc.math cimport sqrt

import numpy as np

from ._functions cimport Function

from .errors import FmibridgeError


cdef class Tableau:
    """A Butcher tableau (a, b, c) with error weights e (the last for f(t + h,
    x1)), the estimate's order q, continuous extension p (or None) and
    stability boundary (`core.integrators.Scheme`)."""

    def __init__(self, a, b, c, e=(), int error_order=0, p=None,
                 double stability_boundary=0.0):
        self.b = np.ascontiguousarray(b, dtype=float)
        self.c = np.ascontiguousarray(c, dtype=float)
        self.stages = self.b.shape[0]
        self.a = np.ascontiguousarray(a, dtype=float).reshape(self.stages, self.stages)
        self.e = np.zeros(self.stages + 1)
        if len(e):
            self.e = np.ascontiguousarray(e, dtype=float).reshape(self.stages + 1)
        self.e_stages = np.flatnonzero(np.asarray(self.e)[:self.stages]).astype(np.intp)
        self.error_order = error_order
        if p is None:
            p = np.zeros((self.stages + 1, 0))
        self.p = np.ascontiguousarray(p, dtype=float)
        self.degree = self.p.shape[1]
        self.stability_boundary = stability_boundary

    def work_size(self, Py_ssize_t n):
        """Scratch doubles a step of n states needs."""
        return (self.stages + 1) * n

    cdef int step(self, Function f, double t, const double* x, double h,
                  const double* k1, double* out, double* work) except -1:
        """Write x(t + h) to out; k1 = f(t, x) where known (else NULL); work
        holds (stages + 1) n doubles."""
        cdef Py_ssize_t n = f.n_in, s = self.stages, i, j, k, first_stage = 0
        cdef double* slopes = work
        cdef double* stage = work + s * n
        cdef double weight, increment
        cdef bint started
        if k1 != NULL and self.c[0] == 0.0:
            for k in range(n):
                slopes[k] = k1[k]
            first_stage = 1
        for i in range(first_stage, s):
            for k in range(n):
                stage[k] = x[k]
            for j in range(i):
                if self.a[i, j] != 0.0:
                    weight = h * self.a[i, j]
                    for k in range(n):
                        stage[k] = stage[k] + weight * slopes[j * n + k]
            f.call(t + self.c[i] * h, stage, slopes + i * n)
        for k in range(n):
            started = False
            increment = 0.0
            for i in range(s):
                if self.b[i] != 0.0:
                    if started:
                        increment = increment + self.b[i] * slopes[i * n + k]
                    else:
                        increment = self.b[i] * slopes[i * n + k]
                        started = True
            out[k] = x[k] + h * increment
        return 0

    cdef void estimate(self, Py_ssize_t n, double h, const double* slopes,
                       const double* f1, double* err) noexcept:
        """Write the step's error estimate h (sum_i e_i k_i + e_{s+1} f1) to err
        (slopes as `step` leaves them, f1 = f(t + h, x1))."""
        cdef Py_ssize_t s = self.stages, i, j, k
        cdef double total
        for k in range(n):
            total = self.e[s] * f1[k]
            for j in range(self.e_stages.shape[0]):
                i = self.e_stages[j]
                total = total + self.e[i] * slopes[i * n + k]
            err[k] = h * total

    cdef double stiffness(self, Py_ssize_t n, double h, const double* slopes,
                          const double* f1) noexcept:
        """Estimate h |lam| as h ||f1 - k_s|| / ||x1 - X_s||, X_s the last
        stage's state (at t + h where c_s = 1; Hairer and Wanner, Solving ODEs
        II, Sec. IV.2, stiffness detection); 0 where x1 = X_s."""
        cdef Py_ssize_t s = self.stages, j, k
        cdef double num = 0.0, den = 0.0, gap, change
        for k in range(n):
            gap = 0.0
            for j in range(s):
                gap = gap + (self.b[j] - self.a[s - 1, j]) * slopes[j * n + k]
            gap = h * gap
            change = f1[k] - slopes[(s - 1) * n + k]
            num = num + change * change
            den = den + gap * gap
        return h * sqrt(num / den) if den > 0.0 else 0.0

    cdef void interpolate(self, Py_ssize_t n, double h, double theta,
                          const double* x, const double* slopes,
                          double* out) noexcept:
        """Write x + h sum_i B_i(theta) k_i to out, B_i(theta) = sum_j p_ij
        theta^(j+1), the last slope f(t + h, x1)."""
        cdef Py_ssize_t s = self.stages, i, j, k
        cdef double weight, power
        for k in range(n):
            out[k] = 0.0
        for i in range(s + 1):
            weight, power = 0.0, 1.0
            for j in range(self.degree):
                power = power * theta
                weight = weight + self.p[i, j] * power
            if weight != 0.0:
                for k in range(n):
                    out[k] = out[k] + weight * slopes[i * n + k]
        for k in range(n):
            out[k] = x[k] + h * out[k]

    def advance(self, Function f, double t, x, double h, slope=None):
        """Return x(t + h) after one step on f; `slope` is f(t, x) where known."""
        return self._stepped(f, t, x, h, slope, False)[0]

    def estimated(self, Function f, double t, x, double h):
        """Return (x(t + h), its local error estimate) after one step on f."""
        return self._stepped(f, t, x, h, None, True)

    def _stepped(self, Function f, double t, x, double h, slope, bint estimate):
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float), k1
        cdef Py_ssize_t n = xs.shape[0]
        if n != f.n_in or f.n_out != n:
            raise FmibridgeError(
                f"{f.what} maps {f.n_in} to {f.n_out} values; a step needs {n} to {n}."
            )
        out, err = np.empty(n), np.empty(n)
        cdef double[::1] y = out, e = err, f1 = np.empty(max(n, 1))
        cdef double[::1] work = np.empty(self.work_size(n) or 1)
        if n == 0:
            return out, err
        if slope is not None:
            k1 = np.ascontiguousarray(slope, dtype=float)
        self.step(f, t, &xs[0], h, NULL if slope is None else &k1[0], &y[0], &work[0])
        if estimate:
            f.call(t + h, &y[0], &f1[0])
            self.estimate(n, h, &work[0], &f1[0], &e[0])
        return out, err
