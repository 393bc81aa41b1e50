"""A run's local error estimates, kept as the steps are accepted, judged at its end.

Each accepted fixed step hands its estimate (`_rk.Tableau.estimate`) and its end
state to `LocalErrors.add`: per state x_i, the largest estimate |e_i| with the
time and length of its step, and the state's scale s_i, the largest |x_i| seen
in the run (the initial state included), at least SCALE_FLOOR. At the end
(`report`) the run's relative error is max_i max_steps |e_i| / s_i; above the
threshold (`Method.error_warning`) the step that would meet it is
h (SAFETY tau / r)^(1 / q), q the order of the estimate (O(h^q)), from the
step where r was largest.

A step that is unstable on the model shows in the estimates as they are added
(`add`): a pole lam with h lam beyond the scheme's stability interval grows by
|R(h lam)| > 1 each step, and so does its part of every estimate, which soon
dominates (Hairer and Wanner, Solving ODEs II, Sec. IV.2). `add` returns True
once UNSTABLE_STEPS or more estimates in a row have each grown, together by
UNSTABLE_GROWTH or more, each above `threshold` of its state's scale (a step
that resolves a growing solution errs far below it); `instability` gives the
last step's growth, from which `Scheme.stable_step` finds a stable step.

Relaxation's strips cost a state error of their own (`add_strip`): a transition
waits up to eps on its strip while time runs on, so the state after it is
displaced by up to eps |dx/dt| (Burden et al., Thm. 27: the O(eps) term), judged
on the same scale.

References
----------
Hairer, Norsett and Wanner, Solving ODEs I, Sec. II.4 (eqs. 4.11-4.13: the
scaled error and the step that meets a tolerance). Burden et al., Thm. 27.
"""

from libc.math cimport INFINITY, isnan, sqrt

import numpy as np

# A state's scale is at least this (in its own units): a state that stays
# within 1e-6 of zero is judged against 1e-6, not against its round-off.
SCALE_FLOOR = 1e-6
cdef double _SCALE_FLOOR = SCALE_FLOOR
# The suggested step aims at this fraction of the threshold (as a step size
# controller's safety factor, Hairer, Norsett and Wanner, eq. 4.13).
SAFETY = 0.9
# Estimates that grew in this many steps in a row, by this factor together, show
# an unstable step: a few steps of geometric growth (one step of a stable but
# coarse run's transient can grow too), and growth beyond what a forced or
# slowly growing solution gives in so few steps.
UNSTABLE_STEPS = 5
UNSTABLE_GROWTH = 1e3


cdef class LocalErrors:
    """The largest local error estimate per state, and the states' scales."""

    def __init__(self, x0, int error_order, double threshold=INFINITY):
        x0 = np.abs(np.asarray(x0, dtype=float))
        self.threshold = threshold
        self.last, self.grown_from, self.growth = 0.0, 0.0, 0.0
        self.n_growing, self.last_t, self.last_h = 0, 0.0, 0.0
        self.n = x0.shape[0]
        self.error_order = error_order
        self.n_estimated = 0
        self.scale = x0.copy()
        self.worst, self.worst_t, self.worst_h = (np.zeros(self.n) for _ in range(3))
        self.strip, self.strip_t = np.zeros(self.n), np.zeros(self.n)
        self.strip_eps = 0.0

    cdef bint add(self, double t1, double h, const double* x1,
                  const double* err) noexcept:
        """Keep the estimate err of an accepted step of h that ended at (t1, x1);
        return True where the estimates grow as an unstable step's do."""
        cdef Py_ssize_t i
        cdef double e, size = 0.0, relative = 0.0
        self.n_estimated += 1
        for i in range(self.n):
            if abs(x1[i]) > self.scale[i]:
                self.scale[i] = abs(x1[i])
            e = abs(err[i])
            if e > self.worst[i]:
                self.worst[i], self.worst_t[i], self.worst_h[i] = e, t1, h
            size = size + e * e
            relative = max(relative, e / max(self.scale[i], _SCALE_FLOOR))
        return self._grows(t1, h, sqrt(size), relative)

    cdef bint _grows(self, double t1, double h, double size,
                     double relative) noexcept:
        """Count the estimate of norm `size` (its largest part `relative` to its
        state's scale) in the growth (module docstring); True where unstable."""
        cdef double growth = size / self.last if self.last > 0.0 else 0.0
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
        """The growth of the estimates as `add` last judged it: a dict with `t`
        (the last step's end), `h` (its length), `growth` (its estimate over
        the one before) and `n_steps` (the steps in a row that grew)."""
        return {"t": self.last_t, "h": self.last_h, "growth": self.growth,
                "n_steps": self.n_growing}

    cdef void add_strip(self, double t, double eps, const double* rate) noexcept:
        """Keep the displacement eps |dx/dt| of a transition that waited on a
        strip of width eps at t (rate: dx/dt there)."""
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
        """The run's largest relative step error and where: a dict with
        `relative` (max_i |e_i| / s_i), `state` (the index i), `t` (its step's
        end), `h` (its step) and `h_meeting` (the step that meets `threshold`;
        None if it is met). None if no step was estimated."""
        cdef double r
        cdef Py_ssize_t i
        if not self.n_estimated or not self.n:
            return None
        i = _largest(&self.worst[0], &self.scale[0], self.n, &r)
        h = self.worst_h[i]
        meeting = None
        if r > threshold and self.error_order > 0:
            meeting = h * (SAFETY * threshold / r) ** (1.0 / self.error_order)
        return {
            "relative": r,
            "state": i,
            "t": self.worst_t[i],
            "h": h,
            "h_meeting": meeting,
        }

    def strip_report(self, double threshold):
        """The largest relative displacement of a strip's wait: a dict with
        `relative`, `state`, `t`, `eps` and `eps_meeting` (the strip width that
        meets `threshold`, linear in eps; None if met), or None without strips."""
        cdef double r
        cdef Py_ssize_t i
        if self.strip_eps == 0.0 or not self.n:
            return None
        i = _largest(&self.strip[0], &self.scale[0], self.n, &r)
        meeting = None
        if r > threshold:
            meeting = self.strip_eps * SAFETY * threshold / r
        return {
            "relative": r,
            "state": i,
            "t": self.strip_t[i],
            "eps": self.strip_eps,
            "eps_meeting": meeting,
        }


cdef Py_ssize_t _largest(const double* values, const double* scales, Py_ssize_t n,
                         double* largest) noexcept:
    """The index i of max_i values_i / max(scales_i, SCALE_FLOOR), the first one or
    the first nan (as numpy's argmax), with that ratio written to largest (n >= 1)."""
    cdef Py_ssize_t i, best = 0
    cdef double scale, ratio
    for i in range(n):
        scale = scales[i]
        if not (scale > _SCALE_FLOOR or isnan(scale)):  # np.maximum's: nan stays
            scale = _SCALE_FLOOR
        ratio = values[i] / scale
        if isnan(ratio):
            largest[0] = ratio
            return i
        if i == 0 or ratio > largest[0]:
            best, largest[0] = i, ratio
    return best
