"""Extrapolated unilateral stepping: guards approached from one side.

Adams PECE steps at most the first root of each guard's extrapolation
polynomial, in one compiled loop between events (`methods._unilateral`;
docs/guide/unilateral.md).

References
----------
Esposito and Kumar (2007), "A state event detection algorithm for numerically
simulating hybrid systems with model singularities", ACM TOMACS 17(1):
Fig. 5 (algorithm), eq. 15 (P), Theorem 2.1 (eqs. 12-13), eqs. 19-21 (gamma,
band), Remark 2.7 (event classes).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, cast

import numpy as np

from ..core._functions import Function
from ..core.errors import FmibridgeError
from ..core.guards import GuardEntry, VectorGuard
from ..core.recorder import Recorder
from ..core.records import State, Status, Step
from ..core.system import HybridSystem, Mode
from ..flows.base import VectorField
from ..flows.compiled import (
    _name_of,
    c_function,
    c_gradient_rows,
    is_compiled,
    vector_function,
)
from ._mode import BLOCK, gathered, reach_tol
from ._unilateral import (
    BAND_C,
    DUE,
    NON_FINITE,
    STUCK,
    Bank,
    CentralDifferences,
    History,
    PythonGradient,
    Rates,
    Rows,
    due_edges,
    flight,
)
from .adams import MAX_ORDER
from .base import Method, at_least_one, kept, positive

__all__ = ["BAND_C", "EndpointAdams", "Unilateral"]

# Each mode's Bank, its atoms' edges and the maker of their Rates, by id(mode),
# dropped when the mode is collected (`_bank`).
_BANKS: dict[int, tuple[None, tuple[Bank, np.ndarray, Callable]]] = {}


def _atoms(mode: Mode) -> tuple[Bank, np.ndarray, Callable[[int], Rates]]:
    """The Bank the compiled loop takes (without rates), each atom's edge and
    the maker of their Rates. The atoms are the `components` g_i of an AND
    guard (g = max_i g_i > 0 inside, fired when all reach their surface), else
    the guard itself."""
    atoms = []  # fn, gradient, edge, direction, unilateral, affine
    for i, edge in enumerate(mode.edges):
        guard = edge.guard
        parts = getattr(guard.fn, "components", None)
        if parts is not None and guard.direction != "falling":
            raise FmibridgeError(
                f"Guard {edge.name!r}: `components` (an AND of surfaces, g = "
                f"max(g_i) > 0 inside) needs direction 'falling', got "
                f"{guard.direction!r}."
            )
        direction = {"falling": -1, "rising": 1, "either": 0}[guard.direction]
        unilateral = guard.kind == "unilateral"
        for fn in parts or (guard.fn,):
            gradient = getattr(fn, "gradient", None) or getattr(guard, "gradient", None)
            is_affine = bool(getattr(fn, "affine", False))
            atoms.append((fn, gradient, i, direction, unilateral, is_affine))
    columns = zip(*atoms, strict=True) if atoms else [()] * 6
    fns, grads, owners, bases, unis, affines = columns
    owner = np.array(owners, dtype=np.int64)
    uni, affine = np.array(unis, dtype=bool), np.array(affines, dtype=bool)
    n, flow = len(mode.flow.state_names), cast(VectorField, mode.flow)
    bank = Bank(
        mode.name,
        flow.rhs_function(),  # a VectorField: `Unilateral._check`
        gathered(fns, n, f"the guards of mode {mode.name!r}"),
        [gathered([fn], n, f"guard `{_name_of(fn)}`") for fn in fns],
        owner,
        np.array(bases, dtype=float),
        uni,
        np.isin(owner, owner[~affine & uni]),
        len(mode.edges),
    )
    return bank, owner, functools.partial(_rates, fns, grads)


def _rates(fns: tuple, gradients: tuple, n: int) -> Rates:
    """The atoms' gradients as the loop's `Rates`: those of the VectorGuard all
    are entries of, read at its declared entries, or one per atom (central
    differences without one)."""
    entries = [fn for fn in fns if isinstance(fn, GuardEntry)]
    if len(entries) == len(fns) and len({id(e.vector) for e in entries}) == 1:
        gradient, rows = _vector_gradient(entries[0].vector, n)
        return Rates([gradient], [rows], [0] * len(fns), [e.index for e in entries])
    rows, parts = Rows.dense(1, n), list[Function]()
    for fn, gradient in zip(fns, gradients, strict=True):
        what = f"guard `{_name_of(fn)}`"
        if gradient is None:
            fd = gathered([fn], n, what)
            parts.append(CentralDifferences(fd, rows, f"central differences of {what}"))
        else:
            compile = functools.partial(c_function, gradient, "gradient", n)
            row, what = functools.partial(_one_row, gradient), f"the gradient of {what}"
            parts.append(_gradient(gradient, row, what, rows, ((1, n), (1,)), compile))
    return Rates(parts, [rows] * len(parts), range(len(parts)), [0] * len(parts))


def _vector_gradient(vector: VectorGuard, n: int) -> tuple[Function, Rows]:
    """A VectorGuard's (dg/dx, dg/dt) at its `sparsity` as a Function, and layout."""
    starts, columns = vector.pattern(n)  # refuses a sparsity of another width
    refuse = functools.partial(_outside_sparsity, vector)
    rows = Rows(starts, columns, n, vector.sparsity, refuse)
    gradient, sparse, m = vector.gradient, vector.sparse_gradient, vector.size
    if gradient is None:
        what = f"central differences of VectorGuard `{vector.name}`"
        return CentralDifferences(vector_function(vector, n), rows, what), rows
    what = f"the {'sparse ' if sparse else ''}gradient of VectorGuard `{vector.name}`"
    shapes = ((rows.nnz,) if sparse else (m, n), (m,))
    compile = functools.partial(
        c_gradient_rows, gradient, n, starts, columns, what, sparse
    )
    return _gradient(gradient, gradient, what, rows, shapes, compile, sparse), rows


def _gradient(
    gradient: Callable,
    python: Callable,
    what: str,
    rows: Rows,
    shapes: tuple,
    compile: Callable[[], Function],
    sparse: bool = False,
) -> Function:
    """`python` (the gradient's values as rows) called back with its `shapes`
    checked; for a numba gradient `compile()`, once checked in Python at 0 and
    where no difference vanishes (sizes, and the sparsity of dense rows)."""
    checked = PythonGradient(
        functools.partial(_checked, python, what, shapes), rows, what, sparse
    )
    if not is_compiled(gradient):
        return checked
    for x in (np.zeros(rows.n), 1.0 + np.sqrt(np.arange(2.0, rows.n + 2.0))):
        with np.errstate(all="ignore"):
            checked(0.0, x)
    return compile()


def _checked(gradient: Callable, what: str, shapes: tuple, t: float, x: np.ndarray):
    """gradient(t, x) as float arrays, refused unless of `shapes`."""
    gx, gt = (np.ascontiguousarray(a, dtype=float) for a in gradient(t, x))
    if (gx.shape, gt.shape) != shapes:
        raise FmibridgeError(
            f"{what} returned arrays of shapes {gx.shape} and {gt.shape}; "
            f"expected {shapes[0]} and {shapes[1]}."
        )
    return gx, gt


def _one_row(gradient: Callable, t: float, x: np.ndarray) -> tuple:
    """An atom's gradient (dg/dx, dg/dt) as one row of each."""
    row, value = gradient(t, x)
    return np.reshape(row, (1, -1)), np.reshape(value, -1)


def _outside_sparsity(vector: VectorGuard, gx: np.ndarray, t: float, x: np.ndarray):
    """Raise for a dg/dx with a non-zero outside the declared sparsity."""
    outside = np.argwhere((gx != 0.0) & ~np.asarray(vector.sparsity, dtype=bool))
    row, column = outside[0]
    raise FmibridgeError(
        f"The gradient of VectorGuard `{vector.name}` has dg[{row}]/dx[{column}] = "
        f"{gx[row, column]!r} at t = {t!r}, x = {x.tolist()}, outside its "
        f"`sparsity` ({len(outside)} such entries)."
    )


def _bank(mode: Mode, extrapolates: bool) -> tuple[Bank, np.ndarray]:
    """The mode's Bank and its atoms' edges, built once per mode."""
    bank, owner, rates = kept(_BANKS, mode, None, functools.partial(_atoms, mode))
    if extrapolates and bank.rates is None:
        bank.rates = rates(bank.n)
    return bank, owner


class _Stepping(State):
    """A State that carries its integration history (dropped by any reset)."""

    def __init__(self, t: float, x: np.ndarray, mode: str, memory: History) -> None:
        super().__init__(t, x, mode)
        self.memory = memory


@dataclass(frozen=True)
class Unilateral(Method):
    """Adams PECE stepping whose step never carries a guard past its surface.

    Each step is at most the first root of every guard's extrapolation
    polynomial (eq. 15) aimed at a level within the event band (eqs. 19-21),
    so the state approaches a unilateral guard from inside; an edge fires when
    its guard lies in the band, approaching (docs/guide/unilateral.md). A flow
    without dx/dt (Co-Simulation) is refused: one-sidedness cannot be
    guaranteed when the FMU integrates.

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
    t_tol : float or None
        Largest time, s, by which an event may precede its crossing (the band
        capped by the approach rate); None: the paper's band only.
    max_order : int
        Highest Adams order (1-4); every start and reset ramps up from 1.
    max_rejections : int
        Bound on rejected trials in one attempt (Status.NO_PROGRESS).
    integrator : str
        Unused (the Adams pair is built in); kept for the common interface.
    max_steps, max_events : int
        Bounds on accepted steps and on transitions.

    Examples
    --------
    >>> from fmibridge.models import bouncing_ball
    >>> result = Unilateral(tol=1e-9).run(bouncing_ball(), t_end=0.5)
    >>> round(result.events[0].t, 6)
    0.451524
    """

    name: ClassVar[str] = "unilateral"
    endpoint: ClassVar[bool] = False  # EndpointAdams: the sign at step ends only

    h: float = 0.1
    tol: float = 1e-6
    rtol: float = 0.0
    gamma: float | None = None
    t_tol: float | None = None
    max_order: int = MAX_ORDER
    max_rejections: int = 50

    def __post_init__(self) -> None:
        super().__post_init__()
        positive("tol", self.tol)
        if self.t_tol is not None:
            positive("t_tol", self.t_tol)
        if not (np.isfinite(self.rtol) and self.rtol >= 0):
            raise FmibridgeError(
                f"`rtol` must be a finite number >= 0, got {self.rtol!r}."
            )
        if self.gamma is not None and not 0.0 <= self.gamma < 1.0:
            raise FmibridgeError(
                f"`gamma` must be in [0, 1) or None, got {self.gamma!r}."
            )
        at_least_one("max_order", self.max_order, MAX_ORDER)
        at_least_one("max_rejections", self.max_rejections)

    def _check(self, system: HybridSystem, t_end: float | None) -> float:
        t_end = super()._check(system, t_end)
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
                        f"declare the impact as a guard and reset in an adapter file."
                    )
        return t_end

    def _attempt(
        self, system: HybridSystem, state: State, t_end: float, log: Recorder
    ) -> Step:
        """Step until an edge is due (then fire it), t_end or a bound, compiled."""
        mode = system.mode(state.mode)
        bank, owner = _bank(mode, not self.endpoint)
        memory = getattr(state, "memory", None) or History(bank)
        # a journal keeps each step as it comes, to outlive a crash (`core.journal`)
        block = 1 if log.is_journaled else BLOCK
        ts, xs = np.empty(block), np.empty((block, max(bank.n, 1)))
        n, code, rejected, t_stop, x_stop = flight(
            bank,
            self,
            memory,
            float(state.t),
            state.x,
            t_end,
            reach_tol(t_end, self.h),
            min(self.max_steps - log.n_steps, block),
            ts,
            xs,
        )
        log.n_steps += n
        log.n_rejected += rejected
        if n:
            log.samples(ts[:n].copy(), xs[:n, : bank.n].copy(), mode.name)
        if code == NON_FINITE:
            raise _non_finite(mode, bank, owner, t_stop, x_stop)
        now = _Stepping(memory.t, memory.x, mode.name, memory)
        if code == STUCK:
            return Step(
                State(now.t, now.x, mode.name),
                Status.NO_PROGRESS,
                f"No step from t = {now.t!r} in mode {mode.name!r} after "
                f"{self.max_rejections} rejected trials (max_rejections).",
            )
        if code == DUE:  # fire the first due edge, list the others
            due = due_edges(bank, self, memory)
            others = tuple(mode.edges[i].name for i in due[1:])
            return Step(self.fire_at(mode, now, due[0], log, others))
        return Step(now)

    def placing(self, t_tol: float) -> Unilateral:
        """Return this method with `t_tol` set (kept where given already)."""
        return (
            self if self.t_tol is not None else dataclasses.replace(self, t_tol=t_tol)
        )


def _non_finite(
    mode: Mode, bank: Bank, owner: np.ndarray, t: float, x: np.ndarray
) -> FmibridgeError:
    """The error for a non-finite state, dx/dt or guard value at (t, x)."""
    flow = cast(VectorField, mode.flow)  # `Unilateral._check`
    f = np.asarray(flow.rhs(t, x), dtype=float) if np.all(np.isfinite(x)) else x
    if not np.all(np.isfinite(f)):
        return FmibridgeError(
            f"Mode {mode.name!r}: the flow gives non-finite dx/dt {f.tolist()} at t = "
            f"{t!r}, x = {x.tolist()}; check its right-hand side there."
        )
    g = bank.guards(t, x)
    bad = int(np.flatnonzero(~np.isfinite(g))[0])
    guard = mode.edges[int(owner[bad])].guard
    return FmibridgeError(
        f"Guard {guard.name!r} of mode {mode.name!r} returned {float(g[bad])!r} at t = "
        f"{t!r}, x = {x.tolist()}; a guard must be finite wherever the flow is "
        f"defined."
    )


@dataclass(frozen=True)
class EndpointAdams(Unilateral):
    """The same Adams PECE stepping, checking only the sign of g at step ends.

    The comparator of Esposito and Kumar's Example 1 (Table I): an edge fires
    at the end of the first step over which `core.events.crossed` holds.
    """

    name: ClassVar[str] = "adams-endpoint"
    endpoint: ClassVar[bool] = True
