"""Extrapolated unilateral stepping: guards approached from one side.

The step h is the smaller of the error-controlled step and the first root of
each guard's extrapolation polynomial P(h) = c^p(h) - L: the guard, oriented
so that c <= 0 inside (paper orientation, c = -g for a falling guard), along
the Adams predictor, minus a target level L below the surface. The right-hand
side is then evaluated only at the predicted point (where c <= L) and, after
the error test, at the corrected point (within L + beta of it, below zero),
so it is never evaluated beyond a unilateral guard.

The steps run in one compiled loop (`methods._unilateral_kernels`) between
events; where the flow and every guard (and its gradient, if given) are
numba-compiled, the loop calls them compiled, else it calls the Python
functions back. Guards given as the entries of one `VectorGuard` are evaluated
once per point for all, on either path. Both take the same decisions on the
same numbers, and the provenance entry `loops` says which ran.

References
----------
Esposito and Kumar (2007), "A state event detection algorithm for numerically
simulating hybrid systems with model singularities", ACM TOMACS 17(1):
Fig. 5 (algorithm), eq. 15 (P), Theorem 2.1 (eqs. 12-13), eqs. 19-21 (gamma,
band), Remark 2.7 (event classes).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..core.errors import FmibridgeError
from ..core.result import Recorder, Status
from ..core.system import Guard, GuardEntry, HybridSystem, Mode, VectorGuard
from ..flows.base import VectorField
from ..flows.compiled import BLOCK, CompiledFlow, compiled, compiled_as, is_compiled
from .adams import MAX_ORDER
from .base import Method, State, Step, at_least_one, positive, reach_tol

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
# Each mode's _Bank, by id(mode), dropped when the mode is collected.
_BANKS: dict[int, _Bank] = {}


def central_difference(fn, t: float, x: np.ndarray, gx: np.ndarray) -> float:
    """Write dg/dx of the guard fn at (t, x) to gx by central differences of
    step FD_STEP max(1, abs(x_i)), and return dg/dt.

    Plain Python that numba also compiles (`_unilateral_kernels.central`), so a
    compiled guard gives the same differences on both paths.
    """
    probe = x.copy()  # x with one component moved
    for i in range(x.shape[0]):
        d = FD_STEP * max(1.0, abs(x[i]))
        probe[i] = x[i] + d
        up = fn(t, probe)
        probe[i] = x[i] - d
        gx[i] = (up - fn(t, probe)) / (2 * d)
        probe[i] = x[i]
    d = FD_STEP * max(1.0, abs(t))
    return (fn(t + d, x) - fn(t - d, x)) / (2 * d)


def central_rows(fn, t: float, x: np.ndarray, gx: np.ndarray, gt: np.ndarray) -> None:
    """`central_difference` of every entry of the vector guard fn at once: write
    dg_i/dx to gx[i] and dg_i/dt to gt[i] (the same numbers, entry by entry).

    Plain Python that numba also compiles (`_unilateral_kernels.central_vector`).
    """
    probe = x.copy()
    for i in range(x.shape[0]):
        d = FD_STEP * max(1.0, abs(x[i]))
        probe[i] = x[i] + d
        up = fn(t, probe)
        probe[i] = x[i] - d
        gx[:, i] = (up - fn(t, probe)) / (2 * d)
        probe[i] = x[i]
    d = FD_STEP * max(1.0, abs(t))
    gt[:] = (fn(t + d, x) - fn(t - d, x)) / (2 * d)


@dataclass(frozen=True)
class _Bank:
    """The guards of one mode, split into atoms (components of AND guards).

    An edge whose guard function has a `components` attribute (callables
    g_i, with g = max_i g_i > 0 inside) fires only when every component has
    reached its surface: a corridor corner. Every other edge is one atom.
    An atom's `gradient` attribute (else its guard's) gives (dg/dx, dg/dt);
    without one, central differences do. Where every atom is an entry of one
    `VectorGuard` (`vector`; atom a is its entry picks[a]), g and its gradient
    are evaluated once per point for all atoms. `arrays` is what the kernels read:
    (owner, starts, base, unilateral, single, curved), per atom the edge, per
    edge its first atom, per atom the direction (-1 falling, +1 rising, 0
    either), whether its edge is unilateral, has this one atom, has a
    curved (not `affine`) unilateral atom, and whether it has a gradient.
    """

    name: str
    flow: VectorField
    fns: tuple[Callable, ...]
    gradients: tuple[Gradient | None, ...]
    owner: np.ndarray
    arrays: tuple
    vector: VectorGuard | None
    picks: np.ndarray

    @classmethod
    def of(cls, mode: Mode) -> _Bank:
        fns, grads, owner, base, uni, affine = [], [], [], [], [], []
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
                base.append({"falling": -1, "rising": 1, "either": 0}[guard.direction])
                uni.append(guard.kind == "unilateral")
                affine.append(bool(getattr(fn, "affine", False)))
        owner = np.array(owner, dtype=np.int64)
        vector, picks = _one_vector(fns)
        if vector is not None:
            grads = [vector.gradient] * len(fns)
        starts = np.searchsorted(owner, np.arange(len(mode.edges))).astype(np.int64)
        sizes = np.bincount(owner, minlength=len(mode.edges))
        uni, affine = np.array(uni, dtype=bool), np.array(affine, dtype=bool)
        curved = np.isin(owner, owner[~affine & uni])
        arrays = (
            owner,
            starts,
            np.array(base, dtype=float),
            uni,
            sizes[owner] == 1,
            curved,
            np.array([g is not None for g in grads], dtype=bool),
        )
        fns, grads = tuple(fns), tuple(grads)
        return cls(mode.name, mode.flow, fns, grads, owner, arrays, vector, picks)

    def memory(self, n: int) -> tuple:
        """An empty history for states of size n (`_unilateral_kernels`)."""
        a = len(self.fns)
        return (
            np.zeros(MAX_ORDER),
            np.zeros((MAX_ORDER, n)),
            np.zeros((MAX_ORDER, n)),
            np.zeros((MAX_ORDER, a)),
            np.zeros((MAX_ORDER, a)),
            np.zeros((MAX_ORDER, a)),
            np.zeros(a),
            np.zeros(2),
        )

    def values(self, t: float, x: np.ndarray) -> np.ndarray:
        """Raw guard values g(t, x) of every atom (g > 0 inside)."""
        if self.vector is not None:
            return self.vector.values(t, x)[self.picks]
        return np.array([fn(t, x) for fn in self.fns], dtype=float)

    def derivatives(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each atom's dg/dx (rows) and dg/dt, from the gradients or by central
        differences."""
        if self.vector is not None:
            return self._vector_derivatives(t, x)
        gx, gt = np.empty((len(self.fns), x.size)), np.empty(len(self.fns))
        for a, (fn, gradient) in enumerate(zip(self.fns, self.gradients, strict=True)):
            if gradient is None:
                gt[a] = central_difference(fn, t, x, gx[a])
            else:
                row, gt[a] = gradient(t, x)
                gx[a] = np.asarray(row, dtype=float)
        return gx, gt

    def _vector_derivatives(self, t: float, x: np.ndarray) -> tuple:
        vector, m = self.vector, self.vector.size
        if vector.gradient is None:
            gx, gt = np.empty((m, x.size)), np.empty(m)
            central_rows(vector.values, t, x, gx, gt)
        else:
            rows, times = vector.gradient(t, x)
            gx, gt = np.asarray(rows, dtype=float), np.asarray(times, dtype=float)
            if gx.shape != (m, x.size) or gt.shape != (m,):
                raise FmibridgeError(
                    f"The gradient of VectorGuard `{vector.name}` returned arrays of "
                    f"shapes {gx.shape} and {gt.shape}; expected ({m}, {x.size}) "
                    f"and ({m},)."
                )
        _check_sparsity(vector, gx, t, x)
        return gx[self.picks], gt[self.picks]

    @functools.cached_property
    def loop(self) -> tuple[str, tuple | None]:
        """(which loop runs, the compiled functions as the kernels take them, or
        None).

        The compiled loop needs a CompiledFlow, compiled guards, and compiled
        gradients where gradients are given; else the kernels call the Python
        functions back (`_Evaluator`), and the reason is named.
        """
        flow = self.flow
        if not isinstance(flow, CompiledFlow):
            return f"python callbacks ({type(flow).__name__} is not compiled)", None
        if self.vector is not None:
            return self._vector_loop(flow)
        for fn, gradient in zip(self.fns, self.gradients, strict=True):
            if not is_compiled(fn):
                return f"python callbacks (guard `{_name_of(fn)}` not compiled)", None
            if gradient is not None and not is_compiled(gradient):
                return (
                    f"python callbacks (gradient of guard `{_name_of(fn)}` not "
                    f"compiled)",
                    None,
                )
        fns = [compiled(fn, f"guard `{_name_of(fn)}`") for fn in self.fns]
        gradients = [
            None
            if gradient is None
            else compiled(
                gradient, f"the gradient of `{_name_of(fn)}`", kind="gradient"
            )
            for fn, gradient in zip(self.fns, self.gradients, strict=True)
        ]
        return "compiled", _kernels().typed_functions(flow.f, fns, gradients)

    def _vector_loop(self, flow: CompiledFlow) -> tuple[str, tuple | None]:
        """`loop` for a bank of one VectorGuard's entries: its g and gradient
        compiled, their sizes checked once (the kernels read them unchecked)."""
        vector, kernels = self.vector, _kernels()
        what = f"VectorGuard `{vector.name}`"
        if not is_compiled(vector.fn):
            return f"python callbacks ({what} not compiled)", None
        if vector.gradient is not None and not is_compiled(vector.gradient):
            return f"python callbacks (the gradient of {what} not compiled)", None
        fn = compiled(vector.fn, what, kind="rhs")
        gradient = vector.gradient and compiled_as(
            vector.gradient, kernels.VECTOR_GRADIENT, f"the gradient of {what}"
        )
        n = len(flow.state_names)
        pattern = vector.pattern(n)
        # sizes at 0, and the sparsity also at a point where no difference vanishes
        for x in (np.zeros(n), 1.0 + np.sqrt(np.arange(2.0, n + 2.0))):
            with np.errstate(all="ignore"):
                self.values(0.0, x)
                self.derivatives(0.0, x)
        return "compiled", kernels.typed_vector(
            flow.f, fn, gradient, self.picks, pattern
        )


def _check_sparsity(vector: VectorGuard, gx: np.ndarray, t: float, x: np.ndarray):
    """Raise FmibridgeError if dg/dx has a non-zero outside the declared sparsity
    (the compiled loop would not read it)."""
    if vector.sparsity is None:
        return
    if vector.sparsity.shape[1] != x.size:
        vector.pattern(x.size)  # raises, naming the guard and both widths
    outside = np.argwhere((gx != 0.0) & ~vector.sparsity)
    if outside.size:
        row, column = outside[0]
        raise FmibridgeError(
            f"The gradient of VectorGuard `{vector.name}` has dg[{row}]/dx[{column}] = "
            f"{gx[row, column]!r} at t = {t!r}, x = {x.tolist()}, outside its "
            f"`sparsity` ({len(outside)} such entries)."
        )


def _one_vector(fns: list) -> tuple[VectorGuard | None, np.ndarray]:
    """If every function of fns is an entry of one VectorGuard, return it and
    the index of each one's entry; else None."""
    entries = [fn for fn in fns if isinstance(fn, GuardEntry)]
    if not fns or len(entries) < len(fns) or len({id(fn.vector) for fn in fns}) > 1:
        return None, np.empty(0, dtype=np.int64)
    return fns[0].vector, np.array([fn.index for fn in fns], dtype=np.int64)


def _name_of(fn: object) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


class _Evaluator:
    """The Python functions of one mode, as the kernels call them back."""

    def __init__(self, bank: _Bank) -> None:
        self.bank, self.flow = bank, bank.flow

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        dx = np.ascontiguousarray(self.flow.rhs(t, x), dtype=float)
        if dx.shape != x.shape:  # the kernels read x.size values unchecked
            raise FmibridgeError(
                f"Mode {self.bank.name!r}: the flow returned {dx.size} value(s) "
                f"{dx.tolist()} at t = {t!r}, x = {x.tolist()}; expected {x.size}."
            )
        return dx

    def guards(self, t: float, x: np.ndarray) -> np.ndarray:
        return self.bank.values(t, x)

    def guard(self, a: int, t: float, x: np.ndarray) -> float:
        """The raw value of atom a alone (as `guards` gives it)."""
        return float(np.float64(self.bank.fns[a](t, x)))

    def gradients(self, t: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.bank.derivatives(t, x)


@dataclass(frozen=True)
class _Stepping(State):
    """A State that carries its integration history (dropped by any reset)."""

    memory: tuple | None = field(default=None, repr=False, compare=False)


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
    until the watchdog or `max_events` stops the run (hand over to
    `Completion`). One attempt takes the steps up to the next due edge (at
    most BLOCK), then fires it.

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
    endpoint: ClassVar[bool] = False  # EndpointAdams: the sign at step ends only

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
        """Take the steps until an edge is due (then fire it), t_end or a bound,
        in one call of the compiled loop."""
        kernels = _kernels()
        mode = system.mode(state.mode)
        bank = self._bank(mode)
        memory = getattr(state, "memory", None) or bank.memory(state.x.size)
        x = np.ascontiguousarray(state.x, dtype=float)
        ts, xs, out = np.empty(BLOCK), np.empty((BLOCK, x.size)), np.empty(3)
        limits = np.array(
            [
                t_end,
                reach_tol(t_end, self.h),
                min(self.max_steps - log.n_steps, BLOCK),
            ]
        )
        log.loops[f"{mode.name}: {bank.loop[0]}"] += 1
        arguments = (bank.arrays, self._params, memory, float(state.t), x, limits)
        n = self._run(bank, arguments, (ts, xs, out))
        log.n_steps += n
        log.n_rejected += int(out[kernels.REJECTED])
        if n:
            log.samples(ts[:n].copy(), xs[:n].copy(), mode.name)
        code = out[kernels.CODE]
        if code == kernels.NON_FINITE:
            raise _non_finite(mode, bank, float(out[kernels.T_STOP]), xs[n].copy())
        now = _Stepping(float(memory[0][0]), memory[1][0].copy(), mode.name, memory)
        if code == kernels.STUCK:
            return Step(
                State(now.t, now.x, mode.name),
                Status.NO_PROGRESS,
                f"No step from t = {now.t!r} in mode {mode.name!r} after "
                f"{self.max_rejections} rejected trials (max_rejections).",
            )
        if code == kernels.DUE:
            due = kernels.due_edges(bank.arrays, self._params, memory).tolist()
            return Step(self._fire_due(mode, now, due, log))
        return Step(now)

    def _run(self, bank: _Bank, arguments: tuple, buffers: tuple) -> int:
        """Call the compiled loop: bound to the compiled functions, or calling the
        Python ones back through an `_Evaluator`."""
        kernels, (_, functions) = _kernels(), bank.loop
        if functions is not None:
            return kernels.flight(*functions, *arguments, *buffers)
        evaluator = _Evaluator(bank)
        key = id(evaluator)
        kernels.EVALUATORS[key] = evaluator
        try:
            return kernels.flight(key, key, key, *arguments, *buffers)
        finally:
            del kernels.EVALUATORS[key]

    @staticmethod
    def _bank(mode: Mode) -> _Bank:
        """The mode's atoms as arrays, built once per mode (kept while it lives)."""
        bank = _BANKS.get(id(mode))
        if bank is None:
            bank = _BANKS[id(mode)] = _Bank.of(mode)
            weakref.finalize(mode, _BANKS.pop, id(mode), None)
        return bank

    @functools.cached_property
    def _params(self) -> np.ndarray:
        """The settings as the kernels read them (`_unilateral_kernels.params`)."""
        gamma = np.nan if self.gamma is None else self.gamma
        endpoint = 1.0 if self.endpoint else 0.0
        return np.array(
            [
                self.tol,
                self.rtol,
                gamma,
                self.h,
                self.max_rejections,
                self.max_order,
                endpoint,
            ],
            dtype=float,
        )

    def _fire_due(
        self, mode: Mode, state: State, due: list[int], log: Recorder
    ) -> State:
        """Fire the first due edge (declaration order); list the others."""
        edges = [mode.edges[i] for i in due]
        plain = State(state.t, state.x, state.mode)
        return self.fire(mode, plain, edges[0], log, tuple(e.name for e in edges[1:]))


def _non_finite(mode: Mode, bank: _Bank, t: float, x: np.ndarray) -> FmibridgeError:
    """Return the error for a non-finite state, dx/dt or guard value at an
    accepted point (t, x), naming the flow or the guard."""
    f = np.asarray(mode.flow.rhs(t, x), dtype=float) if np.all(np.isfinite(x)) else x
    if not np.all(np.isfinite(f)):
        return FmibridgeError(
            f"Mode {mode.name!r}: the flow gives non-finite dx/dt {f.tolist()} at t = "
            f"{t!r}, x = {x.tolist()}; check its right-hand side there."
        )
    g = bank.values(t, x)
    bad = int(np.flatnonzero(~np.isfinite(g))[0])
    guard: Guard = mode.edges[int(bank.owner[bad])].guard
    return FmibridgeError(
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
    endpoint: ClassVar[bool] = True


@functools.cache
def _kernels():
    """Import the compiled kernels on first use (numba loads them from its cache)."""
    from . import _unilateral_kernels as module

    return module
