"""Extrapolated unilateral stepping: guards approached from one side.

The step h is the smaller of the error-controlled step and the first root of
each guard's extrapolation polynomial P(h) = c^p(h) - L: the guard, oriented
so that c <= 0 inside (paper orientation, c = -g for a falling guard), along
the Adams predictor, minus a target level L below the surface. The right-hand
side is then evaluated only at the predicted point (where c <= L) and, after
the error test, at the corrected point (within L + beta of it, below zero),
so it is never evaluated beyond a unilateral guard.

References
----------
Esposito and Kumar (2007), "A state event detection algorithm for numerically
simulating hybrid systems with model singularities", ACM TOMACS 17(1):
Fig. 5 (algorithm), eq. 15 (P), Theorem 2.1 (eqs. 12-13), eqs. 19-21 (gamma,
band), Remark 2.7 (event classes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ..core.result import Recorder, Status
from ..core.system import Guard, HybridSystem, Mode
from ..flows.base import VectorField
from .adams import MAX_ORDER, Node, Stencil, starting_step
from .base import Method, State, Step, at_least_one, positive
from .polyroots import first_reach

# Smallest constant-step Milne constant of orders 1-4 (ABM4, 19/270; eq. 16).
# An accepted step has |x^p - x^c| <= eps / BAND_C componentwise, so an affine
# guard moves by at most beta = sum |dg/dx_i| eps_i / BAND_C from predictor to
# corrector (eq. 19, read with the dual norm of the guard's gradient).
BAND_C = 19.0 / 270.0
SAFETY = 0.9  # step-controller safety factor (Hairer, Norsett and Wanner, Sec. II.4)
MAX_GROWTH = 5.0  # bound on h_{k+1}/h_k (and on h_err growth): Adams ratio stability
MIN_SHRINK = 0.2  # bound on the shrink factor after a rejection (same source)
FD_STEP = np.finfo(float).eps ** (1 / 3)  # central differences (Nocedal-Wright 8.1)
BISECTIONS = 60  # halvings of [0, h] that reach the round-off of h (2**-52 < 2**-60)
MIN_STEP_ULPS = 16  # a step below 16 ulps of t makes no progress in t (round-off)

Gradient = Callable[[float, np.ndarray], tuple[np.ndarray, float]]


@dataclass(frozen=True)
class _Bank:
    """The guards of one mode, split into atoms (components of AND guards).

    An edge whose guard function has a `components` attribute (callables
    g_i, with g = max_i g_i > 0 inside) fires only when every component has
    reached its surface: a corridor corner. Every other edge is one atom.
    """

    guards: tuple[Guard, ...]  # per edge
    fns: tuple[Callable, ...]
    gradients: tuple[Gradient | None, ...]
    owner: np.ndarray  # edge index of each atom
    sign: np.ndarray  # -1 falling, +1 rising, 0 either (fixed at each start)
    unilateral: np.ndarray  # per atom
    affine: np.ndarray  # per atom
    single: np.ndarray  # per atom: its edge has one atom
    edge_atoms: tuple[np.ndarray, ...]
    starts: np.ndarray  # first atom of each edge (atoms of an edge are contiguous)
    hook: Callable | None  # flow.guard_gradient(fn, t, x), if the flow offers it

    @classmethod
    def of(cls, mode: Mode) -> _Bank:
        fns, grads, owner, sign, uni, affine = [], [], [], [], [], []
        for i, edge in enumerate(mode.edges):
            guard = edge.guard
            parts = getattr(guard.fn, "components", None)
            if parts is not None and guard.direction != "falling":
                raise FmibridgeError(
                    f"Guard {edge.name!r}: `components` (an AND of surfaces, g = "
                    f"max(g_i) > 0 inside) needs direction 'falling', got "
                    f"{guard.direction!r}."
                )
            for fn in parts or (guard.fn,):
                fns.append(fn)
                grads.append(
                    getattr(fn, "gradient", None) or getattr(guard, "gradient", None)
                )
                owner.append(i)
                sign.append({"falling": -1, "rising": 1, "either": 0}[guard.direction])
                uni.append(guard.kind == "unilateral")
                affine.append(bool(getattr(fn, "affine", False)))
        owner = np.array(owner, dtype=int)
        atoms = tuple(np.flatnonzero(owner == i) for i in range(len(mode.edges)))
        sizes = np.array([len(a) for a in atoms], dtype=int)
        return cls(
            tuple(edge.guard for edge in mode.edges),
            tuple(fns),
            tuple(grads),
            owner,
            np.array(sign),
            np.array(uni, bool),
            np.array(affine, bool),
            sizes[owner] == 1 if len(owner) else owner == 0,
            atoms,
            np.array([a[0] for a in atoms], dtype=int),
            getattr(mode.flow, "guard_gradient", None),
        )

    def every(self, flags: np.ndarray) -> np.ndarray:
        """Per edge: are the flags of all its atoms true (an AND guard)?"""
        if not self.starts.size:
            return np.zeros(0, dtype=bool)
        return np.logical_and.reduceat(flags, self.starts)

    def values(self, t: float, x: np.ndarray) -> np.ndarray:
        """Raw guard values g(t, x) of every atom (g > 0 inside)."""
        return np.array([fn(t, x) for fn in self.fns], dtype=float)

    def lie(self, t: float, x: np.ndarray, f: np.ndarray, eps: np.ndarray):
        """Lie derivatives dg/dx f + dg/dt (eq. 2), norms sum abs(dg/dx_i) eps_i."""
        lie, norm = np.empty(len(self.fns)), np.empty(len(self.fns))
        for a, fn in enumerate(self.fns):
            gx, gt = self._gradient(a, fn, t, x)
            lie[a], norm[a] = gx @ f + gt, np.abs(gx) @ eps
        return lie, norm

    def _gradient(self, a: int, fn: Callable, t: float, x: np.ndarray):
        """User gradient, else the flow's hook, else central differences."""
        if self.gradients[a] is not None:
            gx, gt = self.gradients[a](t, x)
            return np.asarray(gx, dtype=float), float(gt)
        if self.hook is not None:
            found = self.hook(fn, t, x)
            if found is not None:
                return np.asarray(found[0], dtype=float), float(found[1])
        gx = np.empty(x.size)
        for i in range(x.size):
            d = FD_STEP * max(1.0, abs(x[i]))
            up, down = x.copy(), x.copy()
            up[i] += d
            down[i] -= d
            gx[i] = (fn(t, up) - fn(t, down)) / (2 * d)
        d = FD_STEP * max(1.0, abs(t))
        return gx, (fn(t + d, x) - fn(t - d, x)) / (2 * d)


@dataclass(frozen=True)
class _Point(Node):
    """A history node with the guard data the extrapolation needs there."""

    g: np.ndarray  # raw guard values of the atoms
    lie: np.ndarray  # raw Lie derivatives
    norm: np.ndarray  # dual norms of the gradients


@dataclass(frozen=True)
class _Memory:
    """What survives between attempts: history, step, orientation, guards."""

    bank: _Bank
    history: tuple[_Point, ...]  # newest first
    h_err: float
    sign: np.ndarray  # orientation of each atom: c = sign * g, c <= 0 inside


@dataclass(frozen=True)
class _Stepping(State):
    """A State that carries its integration history (dropped by any reset)."""

    memory: _Memory | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Unilateral(Method):
    """Adams PECE stepping whose step never carries a guard past its surface.

    Each attempt builds, for every guard (atom) c = sign * g with c <= 0
    inside, the extrapolation polynomial P(h) = (c_k - L) + sum_j B_j(h)
    dc/dt_{k-j+1} (eq. 15 in value-and-derivative form: B_j are the Adams-
    Bashforth weight integrals, dc/dt the Lie derivatives at the history
    nodes), finds its first root h* robustly (`first_reach`), and takes the
    step min(h*, h_err, h, t_end - t) with Milne's error estimate. For an
    affine guard c^p(h) - L = P(h) exactly, so c^p = gamma c_k at h = h*
    (Theorem 2.1, L = gamma c_k); nonlinear guards are checked along the exact
    predictor curve and the step bisected to stay at or below L.

    Levels and event band (beta = sum_i abs(dg/dx_i) eps_i / BAND_C, eq. 19):
    a unilateral guard aims at L = -beta (gamma = gamma_min, eq. 21), so the
    corrected point lands in [-2 beta, 0]; a bilateral guard aims at L = 0
    (gamma = 0, Remark 2.7) and lands in [-beta, beta]. A fixed `gamma` gives
    L = min(gamma c_k, final level) (eq. 20 still holds). An edge is due when
    all its atoms lie within beta below their final level and the closest
    one is approaching (dc/dt >= 0); the first due edge fires (`self.fire`),
    the others are listed as simultaneous and fire at the next attempt if
    still due. A corrected point beyond a unilateral guard is rejected before
    f is evaluated there, whatever the guard's smoothness.

    Re-arming: an edge is due only while approaching, so a state that starts
    inside the band moving away (just reset) neither re-fires nor limits the
    step below its current value: its level is max(c_k, 0) until it leaves
    the band. A reset that leaves the state in the band approaching (an
    accumulation of impacts) fires again at once; impacts then pile up
    until `max_events` stops the run with Status.MAX_EVENTS (hand over to
    `Completion`). One attempt takes one accepted step, or fires.

    Parameters
    ----------
    h : float
        Largest step, s.
    tol : float
        Absolute error tolerance per state component (Milne, eq. 16).
    rtol : float
        Relative tolerance added per component: eps_i = tol + rtol abs(x_i).
    gamma : float or None
        Fixed gain in [0, 1) (the paper's Example 1 uses 0.5); None uses the
        smallest gain allowed for each class (eq. 20, Remark 2.7).
    max_order : int
        Highest Adams order (1-4); every start and reset ramps up from 1.
    max_rejections : int
        Bound on rejected trials in one attempt (Status.NO_PROGRESS).
    integrator : str
        Unused (the Adams pair is built in); kept for the common interface.
    max_steps, max_events : int
        Bounds on accepted steps and on transitions.

    Raises
    ------
    FmibridgeError
        For a flow without dx/dt (Co-Simulation): one-sidedness cannot be
        guaranteed when the FMU integrates.

    References
    ----------
    Esposito and Kumar (2007), Fig. 5, eqs. 12-21.

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = Unilateral(tol=1e-9).run(bouncing_ball(), t_end=0.5)
    >>> round(result.events[0].t, 6)
    0.451524
    """

    name: ClassVar[str] = "unilateral"
    requires: ClassVar[type] = VectorField

    h: float = 0.1
    tol: float = 1e-6
    rtol: float = 0.0
    gamma: float | None = None
    max_order: int = MAX_ORDER
    max_rejections: int = 50

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("tol", self.tol)
        if not (np.isfinite(self.rtol) and self.rtol >= 0):
            raise FmibridgeError(
                f"`rtol` must be a finite number >= 0, got {self.rtol!r}."
            )
        if self.gamma is not None and not 0.0 <= self.gamma < 1.0:
            raise FmibridgeError(
                f"`gamma` must be in [0, 1) or None, got {self.gamma!r}."
            )
        if not (isinstance(self.max_order, int) and 1 <= self.max_order <= MAX_ORDER):
            raise FmibridgeError(
                f"`max_order` must be 1, 2, 3 or 4, got {self.max_order!r}."
            )
        at_least_one("max_rejections", self.max_rejections)

    def _check(self, system: HybridSystem, t_end: float) -> float:
        for mode in system.modes.values():
            if not isinstance(mode.flow, VectorField):
                raise FmibridgeError(
                    f"Method `{self.name}` needs a VectorField flow (native or Model "
                    f"Exchange); mode {mode.name!r} has a {type(mode.flow).__name__}. "
                    f"One-sidedness cannot be guaranteed when the FMU integrates "
                    f"(Co-Simulation): use a Model Exchange FMU."
                )
            for edge in mode.edges:
                if edge.guard.reset_at == "beyond":
                    raise FmibridgeError(
                        f"Method `{self.name}` never steps beyond a guard, but edge "
                        f"{edge.name!r} of mode {mode.name!r} must be reset beyond its "
                        f"surface (an FMU's own event, whose `when` condition the FMU "
                        f"tests itself). Use --method halving or relaxation, or "
                        f"declare "
                        f"the impact as a guard and reset in an adapter file."
                    )
        return super()._check(system, t_end)

    # -- one attempt ----------------------------------------------------------

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        mode = system.mode(state.mode)
        memory = getattr(state, "memory", None) or self._start(mode, state)
        due = self._due(memory, memory.history[0])
        if due:
            return Step(self._fire_due(mode, state, due, log))
        memory, stop = self._step(mode, memory, t_end, log)
        now = memory.history[0]
        if stop is not None:
            return Step(State(now.t, now.x, mode.name), stop)
        log.n_steps += 1
        log.sample(now.t, now.x, mode.name)
        new = _Stepping(now.t, now.x, mode.name, memory)
        due = self._due(memory, now)
        return Step(self._fire_due(mode, new, due, log) if due else new)

    def _start(self, mode: Mode, state: State) -> _Memory:
        """Fresh history at `state`: order 1, orientation of 'either' guards."""
        bank = _Bank.of(mode)
        point = self._point(mode, bank, state.t, state.x)
        eps = self._eps(state.x)
        band = point.norm / BAND_C
        moving = np.where(point.lie != 0.0, -np.sign(point.lie), -1.0)
        resting = np.where(point.g != 0.0, -np.sign(point.g), moving)
        either = np.where(np.abs(point.g) <= 2 * band, moving, resting)
        sign = np.where(bank.sign != 0, bank.sign, either)
        h_err = starting_step(state.x, point.f, eps, self.h)
        return _Memory(bank, (point,), h_err, sign)

    def _point(
        self, mode: Mode, bank: _Bank, t: float, x: np.ndarray, f=None, g=None
    ) -> _Point:
        """A history node: f, guard values and Lie derivatives at (t, x)."""
        f = np.asarray(mode.flow.rhs(t, x), dtype=float) if f is None else f
        g = bank.values(t, x) if g is None else g
        if not (np.all(np.isfinite(f)) and np.all(np.isfinite(g))):
            _non_finite(mode, bank, t, x, f, g)
        lie, norm = bank.lie(t, x, f, self._eps(x))
        return _Point(t, x, f, g, lie, norm)

    def _eps(self, x: np.ndarray) -> np.ndarray:
        return self.tol + self.rtol * np.abs(x)

    # -- levels, the step limit and the event band ------------------------------

    def _levels(self, memory: _Memory, point: _Point):
        """Oriented values c, final levels, step levels L and bands beta."""
        bank = memory.bank
        c = memory.sign * point.g
        beta = point.norm / BAND_C
        final = np.where(bank.unilateral, -beta, 0.0)
        level = final if self.gamma is None else np.minimum(self.gamma * c, final)
        past = bank.single & (c >= level)  # inside the band moving away: no deeper
        return c, final, np.where(past, np.maximum(c, 0.0), level), beta

    def _limit(self, memory: _Memory, stencil: Stencil, upper: float) -> float:
        """First root of the extrapolation polynomials in (0, upper], eq. 15."""
        bank, history = memory.bank, memory.history[: stencil.order]
        c, _, level, _ = self._levels(memory, history[0])
        rates = memory.sign * np.array([p.lie for p in history])
        poly = stencil.basis.T @ rates  # (m + 1, atoms), power basis in u = h / scale
        poly[0] += c - level
        u_max = upper / stencil.scale
        bound = poly[0] + np.maximum(poly[1:], 0.0).T @ (
            u_max ** np.arange(1, stencil.order + 1)
        )
        reach = bank.every(bound >= 0.0)  # else P < 0 on [0, upper]: no root there
        u_star = np.inf
        for e in np.flatnonzero(reach):
            u_star = min(
                u_star, first_reach([poly[:, a] for a in bank.edge_atoms[e]], u_max)
            )
        return u_star * stencil.scale

    def _due(self, memory: _Memory, now: _Point) -> list[int]:
        """Edges whose atoms are all in their band, the closest approaching."""
        c, final, _, beta = self._levels(memory, now)
        rate = memory.sign * now.lie
        bank = memory.bank
        due = bank.every(c >= final - beta)
        for e in np.flatnonzero(due):
            atoms = bank.edge_atoms[e]
            closest = atoms[np.argmin(c[atoms] - final[atoms])]
            due[e] = rate[closest] >= 0.0
        return np.flatnonzero(due).tolist()

    def _beyond(self, memory: _Memory, g: np.ndarray) -> bool:
        """True if a unilateral edge not beyond at t_k is beyond at g."""
        bank = memory.bank
        before = bank.every(memory.sign * memory.history[0].g > 0.0)
        after = bank.every(memory.sign * g > 0.0)
        return bool(np.any(after & ~before & bank.unilateral[bank.starts]))

    # -- the step ---------------------------------------------------------------

    def _step(self, mode: Mode, memory: _Memory, t_end: float, log: Recorder):
        """One accepted PECE step limited by the guards (Fig. 5), or a stop."""
        history = memory.history[: self.max_order]
        now = history[0]
        last = now.t - history[1].t if len(history) > 1 else None
        upper = min(memory.h_err, self.h, t_end - now.t)
        if last is not None:
            upper = min(upper, MAX_GROWTH * last)
        stencil = Stencil.on(history, last or upper)
        h_star = self._limit(memory, stencil, upper)
        h_err, h = memory.h_err, min(h_star, upper)
        eps = self._eps(now.x)
        for _ in range(self.max_rejections):
            if h <= MIN_STEP_ULPS * np.spacing(max(abs(now.t), 1.0)):
                break  # the guard's level is reached within round-off but not due
            h = self._predictor_check(memory, stencil, h)
            t = t_end if h >= t_end - now.t else now.t + h
            xp = stencil.predict(h)
            xc = stencil.correct(h, np.asarray(mode.flow.rhs(t, xp), dtype=float))
            ratio = float(np.max(np.abs(xp - xc) / eps))
            error = stencil.milne(h) * ratio
            if error > 1.0 or ratio > 1.0 / BAND_C:
                log.n_rejected += 1
                factor = SAFETY * max(error, ratio * BAND_C) ** (
                    -1.0 / (stencil.order + 1)
                )
                h_err = h * max(MIN_SHRINK, factor)
                h = min(h_star, h_err)
                continue
            g = memory.bank.values(t, xc)
            if self._beyond(memory, g):
                log.n_rejected += 1  # a curved guard outran the band: halve
                h /= 2
                continue
            point = self._point(mode, memory.bank, t, xc, g=g)
            grow = min(
                MAX_GROWTH, SAFETY * max(error, 1e-12) ** (-1.0 / (stencil.order + 1))
            )
            h_next = h * grow if h >= h_err else max(h * grow, h_err)
            history = (point, *memory.history[: self.max_order - 1])
            return _Memory(memory.bank, history, h_next, memory.sign), None
        return memory, Status.NO_PROGRESS

    def _predictor_check(self, memory: _Memory, stencil: Stencil, h: float) -> float:
        """Shorten h until no curved unilateral guard is past its level at x^p."""
        bank = memory.bank
        curved = np.isin(bank.owner, bank.owner[~bank.affine & bank.unilateral])
        if not curved.any():
            return h
        _, _, level, _ = self._levels(memory, memory.history[0])
        atoms, t0 = np.flatnonzero(curved), memory.history[0].t

        def over(s: float) -> np.ndarray:
            x = stencil.predict(s)
            past = np.zeros(bank.owner.size, dtype=bool)
            values = np.array([bank.fns[a](t0 + s, x) for a in atoms])
            past[atoms] = memory.sign[atoms] * values > level[atoms]
            return bank.every(past)

        for e in np.flatnonzero(over(h)):
            lo, hi = 0.0, h
            for _ in range(BISECTIONS):  # keep the safe end of the bracket
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if over(mid)[e] else (mid, hi)
            h = min(h, lo)
        return h

    def _fire_due(
        self, mode: Mode, state: State, due: list[int], log: Recorder
    ) -> State:
        """Fire the first due edge (declaration order); list the others."""
        edges = [mode.edges[i] for i in due]
        plain = State(state.t, state.x, state.mode)
        return self.fire(mode, plain, edges[0], log, tuple(e.name for e in edges[1:]))


def _non_finite(mode: Mode, bank: _Bank, t, x, f, g) -> None:
    """Raise the error for a non-finite dx/dt or guard value at an accepted point."""
    if not np.all(np.isfinite(f)):
        raise FmibridgeError(
            f"Mode {mode.name!r}: the flow gives non-finite dx/dt {f.tolist()} at t = "
            f"{t!r}, x = {x.tolist()}; check its right-hand side there."
        )
    bad = int(np.flatnonzero(~np.isfinite(g))[0])
    guard = bank.guards[int(bank.owner[bad])]
    raise FmibridgeError(
        f"Guard {guard.name!r} of mode {mode.name!r} returned {float(g[bad])!r} at t = "
        f"{t!r}, x = {x.tolist()}; a guard must be finite wherever the flow is "
        f"defined."
    )


@dataclass(frozen=True)
class EndpointAdams(Unilateral):
    """The same Adams PECE stepping, checking only the sign of g at step ends.

    The comparator of Esposito and Kumar's Example 1 ("simple endpoint
    checking", Table I) and the baseline of the overhead benchmark: no
    extrapolation polynomial, no Lie derivatives, and an edge fires at the
    end of the first step over which `Guard.crossed` holds (for an AND guard,
    g = max of its components). Two crossings inside one step are missed, and
    the right-hand side is evaluated beyond the guard.
    """

    name: ClassVar[str] = "adams-endpoint"

    def _point(self, mode, bank, t, x, f=None, g=None) -> _Point:
        f = np.asarray(mode.flow.rhs(t, x), dtype=float) if f is None else f
        g = bank.values(t, x) if g is None else g
        zeros = np.zeros(g.size)
        return _Point(t, x, f, g, zeros, zeros)

    def _limit(self, memory: _Memory, stencil: Stencil, upper: float) -> float:
        return np.inf

    def _predictor_check(self, memory: _Memory, stencil: Stencil, h: float) -> float:
        return h

    def _beyond(self, memory: _Memory, g: np.ndarray) -> bool:
        return False

    def _due(self, memory: _Memory, now: _Point) -> list[int]:
        if len(memory.history) < 2 or memory.history[0] is not now:
            return []
        before = memory.history[1]
        return [
            i
            for i, (guard, atoms) in enumerate(
                zip(memory.bank.guards, memory.bank.edge_atoms, strict=True)
            )
            if atoms.size and guard.crossed(before.g[atoms].max(), now.g[atoms].max())
        ]
