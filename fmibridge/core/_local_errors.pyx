"""A run's local error estimates, kept as the steps are accepted, judged at its end.

Per state: the largest estimate |e_i| with its step, and the scale s_i, the
largest |x_i| seen (`report`). A step unstable on the model shows as estimates
growing by |R(h lam)| > 1 each step (Hairer and Wanner, Solving ODEs II, Sec.
IV.2). `add_strip` keeps Relaxation's strip error eps |dx/dt| (Burden et al.,
Thm. 27).

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4 (eqs. 4.11-4.13).
"""

from libc.math cimport INFINITY, isnan, sqrt

import numpy as np

# A state's scale is at least this (its units): not judged against round-off.
SCALE_FLOOR = 1e-6
cdef double _SCALE_FLOOR = SCALE_FLOOR
# The suggested step aims at this fraction of the threshold (a safety factor,
# Hairer, Norsett and Wanner, eq. 4.13).
SAFETY = 0.9
# Estimates that grew this many steps in a row, by this factor together, show
# an unstable step (more than a coarse transient or a growing solution gives).
UNSTABLE_STEPS = 5
UNSTABLE_GROWTH = 1e3


cdef class LocalErrors:
    """The largest local error estimate per state, and the states' scales."""

    def __init__(self, x0, int error_order, double threshold=INFINITY):
        x0 = np.abs(np.asarray(x0, dtype=float))
        self.threshold, self.error_order = threshold, error_order
        self.n = x0.shape[0]
        self.scale = x0.copy()
        self.worst, self.worst_t, self.worst_h = (np.zeros(self.n) for _ in range(3))
        self.strip, self.strip_t = np.zeros(self.n), np.zeros(self.n)

    cdef bint add(self, double t1, double h, const double* x1,
                  const double* err) noexcept:
        """Keep the estimate err of an accepted step of h that ended at (t1, x1);
        return True where the estimates grow as an unstable step's do."""
        cdef Py_ssize_t i
        cdef double e, size = 0.0, relative = 0.0, growth
        self.n_estimated += 1
        for i in range(self.n):
            if abs(x1[i]) > self.scale[i]:
                self.scale[i] = abs(x1[i])
            e = abs(err[i])
            if e > self.worst[i]:
                self.worst[i], self.worst_t[i], self.worst_h[i] = e, t1, h
            size = size + e * e
            relative = max(relative, e / max(self.scale[i], _SCALE_FLOOR))
        size = sqrt(size)
        growth = size / self.last if self.last > 0.0 else 0.0
        if 1.0 < growth < INFINITY and relative > self.threshold:
            if self.n_growing == 0:
                self.grown_from = self.last
            self.n_growing += 1
            self.growth = growth
        else:
            self.n_growing = 0
        self.last, self.last_t, self.last_h = size, t1, h
        return (self.n_growing >= UNSTABLE_STEPS
                and size >= UNSTABLE_GROWTH * self.grown_from)

    def instability(self):
        """The growth as `add` last judged it: `t` and `h` of the last step,
        `growth` (its estimate over the one before) and `n_steps` (in a row)."""
        return {"t": self.last_t, "h": self.last_h, "growth": self.growth,
                "n_steps": self.n_growing}

    cdef void add_strip(self, double t, double eps, const double* rate) noexcept:
        """Keep the displacement eps |dx/dt| of a wait on a strip at t."""
        cdef Py_ssize_t i
        cdef double e
        self.strip_eps = eps
        for i in range(self.n):
            e = eps * abs(rate[i])
            if e > self.strip[i]:
                self.strip[i], self.strip_t[i] = e, t

    def add_step(self, double t1, double h, x1, err):
        """`add` from Python (a method that estimates its steps in Python)."""
        cdef double[::1] x = np.ascontiguousarray(x1, dtype=float)
        cdef double[::1] e = np.ascontiguousarray(err, dtype=float)
        if self.n and x.shape[0] == self.n and e.shape[0] == self.n:
            return self.add(t1, h, &x[0], &e[0])
        return False

    def report(self, double threshold):
        """The largest relative step error, a dict: `relative`, `state` (i), `t`
        and `h` of its step, `h_meeting` (the step that meets `threshold`; None
        if met). None if no step was estimated."""
        cdef Py_ssize_t i
        if not self.n_estimated or not self.n:
            return None
        i, r, found = self._largest_of(self.worst, self.worst_t)
        h = self.worst_h[i]
        meeting = None
        if r > threshold and self.error_order > 0:
            meeting = h * (SAFETY * threshold / r) ** (1.0 / self.error_order)
        return {**found, "h": h, "h_meeting": meeting}

    def strip_report(self, double threshold):
        """The largest relative displacement of a strip's wait, a dict:
        `relative`, `state`, `t`, `eps`, `eps_meeting` (None if met); None
        without strips."""
        if self.strip_eps == 0.0 or not self.n:
            return None
        _, r, found = self._largest_of(self.strip, self.strip_t)
        meeting = None
        if r > threshold:
            meeting = self.strip_eps * SAFETY * threshold / r
        return {**found, "eps": self.strip_eps, "eps_meeting": meeting}

    def _largest_of(self, double[::1] values, double[::1] times):
        """(i, ratio, entries) of max_i values_i / max(scale_i, SCALE_FLOOR): the
        first one or first nan, as numpy's argmax."""
        cdef Py_ssize_t i, best = 0
        cdef double scale, ratio, largest = 0.0
        for i in range(self.n):
            scale = self.scale[i]
            if not (scale > _SCALE_FLOOR or isnan(scale)):  # np.maximum's: nan stays
                scale = _SCALE_FLOOR
            ratio = values[i] / scale
            if isnan(ratio):
                best, largest = i, ratio
                break
            if i == 0 or ratio > largest:
                best, largest = i, ratio
        return best, largest, {"relative": largest, "state": best, "t": times[best]}
