"""Exact execution of the forced oscillator with stop: impacts, sticking, Zeno.

An execution is a sequence of phases (Burden et al., Sec. V-B, text of eq. 28):
``"flight"`` (closed-form eq. 28, `Flight`) until the gap ``x_max - x``
reaches 0 with ``v >= 0``, then the reset ``v+ = -c v-``; ``"stick"`` at the stop
while the net force pushes into it; ``"zeno"``, the geometric tail of an impact
sequence from the first impact slower than ``ZENO_SPEED_REL`` (relative to
`OscillatorParams.velocity_scale`) to its accumulation time.

No grazing contact is missed: a scan interval of length L is passed over only if
``min(gap at its ends) > M2 L**2 / 8`` (``M2`` bounds ``|x''|`` on the flight),
else it is subdivided; a crossing is refined by ``brentq`` once its root is
provably unique (monotone or convex gap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..models.oscillator import OscillatorParams

__all__ = ["AnalyticTrajectory", "Impact", "Phase", "exact_solution"]

# Scan spacing: 1/64 of the shortest period (free or forcing); exactness rests on
# the M2 test, not on this number.
SAMPLES_PER_PERIOD = 64
SCAN_CHUNK = 256  # samples evaluated per vectorised batch (cost only)
SUBDIVISIONS = 16  # refinement of an interval that is not provably contact-free
# 16**-12 ~ 4e-15 of a scan interval: below the rounding of t.
MAX_SCAN_DEPTH = 12
# The Zeno tail's remainder R ~ 2 c w / (F (1 - c)) has a model error O(R**2),
# ~1e-16 s at w = 1e-8: the Zeno time to machine precision.
ZENO_SPEED_REL = 1e-8
# A velocity, acceleration or jerk on the stop within this relative size of its
# scale is zero (root-finding leaves O(eps) residues at release and Zeno ends).
CONTACT_TOL_REL = 1e-12
MAX_PHASES = 100_000  # flights, sticks and Zeno tails of one execution
# brentq: the smallest rtol it accepts; xtol tiny, so roots are relative in s.
ROOT_OPTIONS = {"xtol": 1e-300, "rtol": 4.0 * np.finfo(float).eps, "maxiter": 200}


class Flight:
    """Exact free flight of eq. 28 from ``(t_s, x_s, v_s)``; local time ``s``.

    For harmonic forcing eq. 28's convolution is a periodic ``p(t) = P cos(W t) +
    Q sin(W t)`` plus a homogeneous term, so ``x(t_s + s) = p(t_s + s) + e^{-a s}
    (e0 cos(wd s) + B sin(wd s))``, ``e0 = x_s - p(t_s)``, ``B = (v_s - p'(t_s) +
    a e0) / wd``, evaluated as ``x_s + [x(t_s + s) - x_s]`` with the bracket
    formed from ``expm1`` and half-angle sines: the gap stays accurate for flights
    of 1e-9 s near Zeno.
    """

    __slots__ = ("params", "t_s", "x_s", "v_s", "_P", "_Q", "_e0", "_d0", "_B", "_B1")

    def __init__(self, params: OscillatorParams, t_s: float, x_s: float, v_s: float):
        self.params, self.t_s, self.x_s, self.v_s = params, t_s, x_s, v_s
        P, Q = params.particular()
        W, a, wd = params.u_freq, params.a, params.omega_d
        phi = W * t_s
        e0 = x_s - (P * math.cos(phi) + Q * math.sin(phi))
        d0 = v_s - W * (-P * math.sin(phi) + Q * math.cos(phi))
        B = (d0 + a * e0) / wd
        self._P, self._Q, self._e0, self._d0, self._B = P, Q, e0, d0, B
        self._B1 = -(e0 * wd + a * B)  # y' = e^{-as}(d0 cos + B1 sin)

    def _pieces(self, s):
        """Return ``(e^{-as} cos(wd s) - 1, e^{-as} sin(wd s), W s / 2)``, stably."""
        p = self.params
        s = np.asarray(s, dtype=float)
        ws = p.omega_d * s
        cm1 = np.expm1(-p.a * s) * np.cos(ws) - 2.0 * np.sin(0.5 * ws) ** 2
        return cm1, np.exp(-p.a * s) * np.sin(ws), 0.5 * p.u_freq * s

    def displacement(self, s):
        """Return ``x(t_s + s) - x_s``."""
        cm1, es, half = self._pieces(s)
        mid = self.params.u_freq * self.t_s + half
        dp = -2.0 * np.sin(half) * (self._P * np.sin(mid) - self._Q * np.cos(mid))
        return dp + self._e0 * cm1 + self._B * es

    def position(self, s):
        """Return ``x(t_s + s)``."""
        return self.x_s + self.displacement(s)

    def velocity(self, s):
        """Return ``x'(t_s + s)``."""
        cm1, es, half = self._pieces(s)
        W = self.params.u_freq
        mid = W * self.t_s + half
        dv = -2.0 * W * np.sin(half) * (self._P * np.cos(mid) + self._Q * np.sin(mid))
        return self.v_s + dv + self._d0 * cm1 + self._B1 * es

    def gap(self, s):
        """Return ``x_max - x(t_s + s)`` (exact cancellation when ``x_s = x_max``)."""
        return (self.params.x_max - self.x_s) - self.displacement(s)

    def derivative(self, s, k: int):
        """Return the ``k``-th time derivative of ``x`` at ``t_s + s`` (closed form)."""
        p = self.params
        s = np.asarray(s, dtype=float)
        lam = complex(-p.a, p.omega_d)
        hom = (self._e0 - 1j * self._B) * lam**k * np.exp(lam * s)
        iw = 1j * p.u_freq
        part = (self._P - 1j * self._Q) * iw**k * np.exp(iw * (self.t_s + s))
        return np.real(hom + part)

    def bound(self, k: int) -> float:
        """Return an upper bound of ``|x^(k)|`` over the whole flight (``s >= 0``).

        ``|d^k/ds^k e^{-as}(e0 cos + B sin)| <= omega^k hypot(e0, B)`` since
        ``|-a + i wd| = omega``; the periodic part contributes ``W^k hypot(P, Q)``.
        """
        p = self.params
        homogeneous = p.omega**k * math.hypot(self._e0, self._B)
        return homogeneous + p.u_freq**k * math.hypot(self._P, self._Q)


@dataclass(frozen=True)
class Impact:
    """One impact: time and velocities before/after the reset ``v+ = -c v-``."""

    t: float
    v_minus: float
    v_plus: float


@dataclass(frozen=True)
class Phase:
    """One phase ``[t_start, t_end)``: ``"flight"``, ``"stick"`` or ``"zeno"``."""

    kind: str
    t_start: float
    t_end: float
    flight: Flight | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class AnalyticTrajectory:
    """Exact execution of the oscillator with stop on ``[t_start, t_end]``: its
    consecutive `phases` (the state right-continuous at impacts), the resolved
    `impacts` in time order (not those of Zeno tails), the `sticking` intervals
    ``(t_start, t_release)`` and the `zeno_times` (accumulation times)."""

    params: OscillatorParams
    t_start: float
    t_end: float
    phases: tuple[Phase, ...]
    impacts: tuple[Impact, ...]
    sticking: tuple[tuple[float, float], ...]
    zeno_times: tuple[float, ...]

    @property
    def impact_times(self) -> np.ndarray:
        """Return the impact times as an array."""
        return np.array([i.t for i in self.impacts])

    @property
    def n_impacts(self) -> int:
        """Return the number of resolved impacts."""
        return len(self.impacts)

    def phase_index(self, t) -> np.ndarray:
        """Return the index into `phases` of each time in ``t`` (right-continuous)."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        if tt.size and (tt.min() < self.t_start or tt.max() > self.t_end):
            raise ValueError(
                f"times must lie in [{self.t_start}, {self.t_end}], got "
                f"[{tt.min()}, {tt.max()}]; extend `t_end` of exact_solution."
            )
        starts = np.array([p.t_start for p in self.phases])
        return np.searchsorted(starts, tt, side="right") - 1

    def _evaluate(self, t, of_flight, at_rest: float) -> np.ndarray:
        """Return ``of_flight(flight, s)`` at the times ``t``, `at_rest` off flights."""
        tt = np.atleast_1d(np.asarray(t, dtype=float))
        idx = self.phase_index(tt)
        out = np.full_like(tt, at_rest)
        for i in np.unique(idx):
            phase, sel = self.phases[i], idx == i
            if phase.flight is not None:
                out[sel] = of_flight(phase.flight, tt[sel] - phase.t_start)
        return out

    def state(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(x, v)`` at the times ``t`` (any shape, flattened to 1-D)."""
        x = self._evaluate(t, Flight.position, self.params.x_max)
        return x, self._evaluate(t, Flight.velocity, 0.0)

    def acceleration(self, t) -> np.ndarray:
        """Return ``x''`` at the times ``t`` (0 while sticking or in a Zeno tail)."""
        return self._evaluate(t, lambda flight, s: flight.derivative(s, 2), 0.0)

    def mode(self, t) -> np.ndarray:
        """Return the phase kind (``"flight"``, ``"stick"``, ``"zeno"``) at ``t``."""
        kinds = np.array([p.kind for p in self.phases])
        return kinds[self.phase_index(t)]


def _root(fn, lo: float, hi: float) -> float:
    """Return a root of ``fn`` bracketed by ``[lo, hi]`` to relative precision."""
    return brentq(lambda s: float(fn(s)), lo, hi, **ROOT_OPTIONS)


def _refine_crossing(fl: Flight, lo: float, hi: float, depth: int) -> float:
    """Return the first root of the gap in ``[lo, hi]`` (``gap(lo) > 0 >= gap(hi)``)."""
    length = hi - lo
    v_lo, v_hi = fl.velocity(np.array([lo, hi]))
    is_monotone = max(v_lo, v_hi) > fl.bound(2) * length
    is_convex = float(fl.derivative(lo, 2)) > fl.bound(3) * length
    if is_monotone or is_convex or depth >= MAX_SCAN_DEPTH:
        return _root(fl.gap, lo, hi)
    hit = _scan(fl, np.linspace(lo, hi, SUBDIVISIONS + 1), depth + 1)
    return _root(fl.gap, lo, hi) if hit is None else hit


def _scan(fl: Flight, s: np.ndarray, depth: int) -> float | None:
    """Return the first contact time in the sampled span ``s`` (gap(s[0]) > 0):
    at a crossing, at a peak of x (v changes sign) beyond the stop, or inside an
    interval that is not provably contact-free."""
    g, v = fl.gap(s), fl.velocity(s)
    if not g[0] > 0.0:
        raise RuntimeError(f"internal: scan starts on a non-positive gap {g[0]!r}.")
    length = np.diff(s)
    is_crossing = g[1:] <= 0.0
    is_peak = (v[:-1] > 0.0) & (v[1:] <= 0.0)
    is_unsafe = np.minimum(g[:-1], g[1:]) <= fl.bound(2) * length**2 / 8.0
    for i in np.flatnonzero(is_crossing | is_peak | is_unsafe):
        lo, hi = float(s[i]), float(s[i + 1])
        if is_crossing[i]:
            return _refine_crossing(fl, lo, hi, depth)
        if is_peak[i]:
            s_peak = _root(fl.velocity, lo, hi)
            if fl.gap(s_peak) <= 0.0:
                return _refine_crossing(fl, lo, s_peak, depth)
        if is_unsafe[i] and depth < MAX_SCAN_DEPTH:
            hit = _scan(fl, np.linspace(lo, hi, SUBDIVISIONS + 1), depth + 1)
            if hit is not None:
                return hit
    return None


def _escape_time(fl: Flight, scale: float) -> float:
    """Return a time ``s0 > 0`` before which a flight leaving the stop has no contact.

    With the first non-zero derivative ``d_k < 0`` of ``x`` at the start and
    ``M_{k+1}`` a bound of ``|x^(k+1)|``, Taylor gives
    ``x <= x_max + d_k s**k / k! + M_{k+1} s**(k+1) / (k+1)! < x_max`` for
    ``s < (k+1) |d_k| / M_{k+1}``; half of that is returned.
    """
    omega = fl.params.omega
    for k in (1, 2, 3):
        d_k = fl.v_s if k == 1 else float(fl.derivative(0.0, k))
        tol = CONTACT_TOL_REL * scale * omega ** (k - 1)
        if d_k < -tol:
            return (k + 1) * abs(d_k) / (2.0 * fl.bound(k + 1))
        if d_k > tol:
            break
    raise RuntimeError(f"internal: flight from the stop at t={fl.t_s} does not leave.")


def _first_contact(fl: Flight, s_end: float, scale: float) -> float | None:
    """Return the first ``s`` in ``(0, s_end]`` with gap 0 and ``v >= 0``, or None."""
    s_start = _escape_time(fl, scale) if fl.x_s == fl.params.x_max else 0.0
    if s_start >= s_end:
        return None
    p = fl.params  # the shortest period (free or forcing), sampled
    delta = 2.0 * math.pi / max(p.omega_d, p.u_freq) / SAMPLES_PER_PERIOD
    n_total = math.ceil((s_end - s_start) / delta)
    for i0 in range(0, n_total, SCAN_CHUNK):  # bounded by n_total
        k = np.arange(i0, min(i0 + SCAN_CHUNK, n_total) + 1)
        s = np.minimum(s_start + k * delta, s_end)
        hit = _scan(fl, s, 0)
        if hit is not None:
            return hit
    return None


def _release_time(params: OscillatorParams, t: float, t_end: float) -> float:
    """Return the first time after ``t`` where the contact force turns negative.

    ``u(t)/m - omega**2 x_max = (U/m) cos(W t) - K`` changes sign from + to - at
    ``W t = +-arccos(K m / U) (mod 2 pi)`` where its derivative is negative.
    """
    U, W = params.u_amp, params.u_freq
    ratio = params.omega**2 * params.x_max * params.m / U if U != 0.0 else math.inf
    if W == 0.0 or abs(ratio) >= 1.0:
        return t_end  # the force never changes sign
    theta = math.acos(ratio)
    psi = theta if U > 0.0 else -theta
    n = math.floor((W * t - psi) / (2.0 * math.pi)) + 1
    for _ in range(3):  # at most two corrections of rounding at the boundary
        t_rel = (psi + 2.0 * math.pi * n) / W
        if t_rel > t:
            return min(t_rel, t_end)
        n += 1
    raise RuntimeError(f"internal: no release time found after t={t}.")


def exact_solution(
    params: OscillatorParams, t_end: float | None = None
) -> AnalyticTrajectory:
    """Compute the exact execution of the oscillator with stop on ``[0, t_end]``.

    Parameters
    ----------
    params : OscillatorParams
        Oscillator parameters and initial condition at ``t = 0``.
    t_end : float, optional
        Horizon; defaults to ``params.t_max``.

    Returns
    -------
    AnalyticTrajectory
        Phases, impacts, sticking intervals, Zeno times and the state.

    Raises
    ------
    RuntimeError
        If more than ``MAX_PHASES`` phases are needed.
    """
    t_end = params.t_max if t_end is None else float(t_end)
    scale = params.velocity_scale()
    x_max, c = params.x_max, params.c
    phases: list[Phase] = []
    impacts: list[Impact] = []
    sticking: list[tuple[float, float]] = []
    zeno: list[float] = []
    t, x, v = 0.0, float(params.x0), float(params.v0)
    for _ in range(MAX_PHASES):
        if t >= t_end:
            break
        if x == x_max and v > CONTACT_TOL_REL * scale:  # starts on the guard
            impacts.append(Impact(t, v, -c * v))
            v = -c * v
            continue
        if x == x_max and v >= -CONTACT_TOL_REL * scale:  # at rest on the stop
            v, force = 0.0, float(params.contact_force(t))
            if not abs(force) > CONTACT_TOL_REL * scale * params.omega:
                force = float(params.contact_force_rate(t))  # tangent: the rate decides
            if force > 0.0:  # it pushes into the stop: the mass sticks
                t_rel = _release_time(params, t, t_end)
                phases.append(Phase("stick", t, t_rel))
                sticking.append((t, t_rel))
                t = t_rel
                continue
        fl = Flight(params, t, x, v)
        s_hit = _first_contact(fl, t_end - t, scale)
        if s_hit is None:
            phases.append(Phase("flight", t, t_end, fl))
            break
        t_hit, v_minus = t + s_hit, float(fl.velocity(s_hit))
        phases.append(Phase("flight", t, t_hit, fl))
        impacts.append(Impact(t_hit, v_minus, -c * v_minus))
        force = float(params.contact_force(t_hit))
        if v_minus < ZENO_SPEED_REL * scale and c < 1.0 and force > 0.0:
            # Zeno tail: at constant acceleration F = force (damping and spring
            # corrections O(w)) a flight leaving at c w returns after 2 c w / F,
            # so the time left is sum_k 2 c**k w / F = 2 c w / (F (1 - c)).
            w = max(v_minus, 0.0)
            t_zeno = t_hit + 2.0 * c * w / (force * (1.0 - c))
            phases.append(Phase("zeno", t_hit, min(t_zeno, t_end)))
            zeno.append(t_zeno)
            t, x, v = t_zeno, x_max, 0.0
        else:
            t, x, v = t_hit, x_max, -c * v_minus
    else:
        raise RuntimeError(
            f"exact_solution: more than MAX_PHASES={MAX_PHASES} phases before "
            f"t_end={t_end}; shorten t_end."
        )
    return AnalyticTrajectory(
        params, 0.0, t_end, tuple(phases), tuple(impacts), tuple(sticking), tuple(zeno)
    )
