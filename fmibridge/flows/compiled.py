"""Native flows compiled with numba: the steps between events run as machine code.

A `CompiledFlow` holds dx/dt = f(t, x) compiled by numba. Methods that take
fixed steps (Halving, Relaxation) ask every flow for `steps_inside`: a run of
steps of h that ends before the first step that would leave the domain of any
guard. A CompiledFlow whose mode's guard functions are numba-compiled too runs
that loop compiled and returns the samples in one block. Asked to (Halving's
Illinois location), it also narrows the crossing step that ends the block and
returns the `Bracket`; otherwise, or where the crossing is no clean sign
change, the method handles the crossing step as for any other flow. Events,
resets and their bounds stay in one place (the method's Python code).

A step is taken by the compiled loop only if every guard ends it strictly
inside its domain, having started inside or on its surface (g > 0 at the end
and g >= 0 at the start for a falling guard, the reverse for a rising one, no
sign change for 'either'), with finite values; the same step is then a plain
step for every method, so results agree with the Python loop to round-off.
Where the reset of an impact leaves the state on its surface, the steps after
it run compiled too. numba is imported on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from ..core.errors import FmibridgeError
from ..core.integrators import Scheme
from .base import RATE_STEP, VectorField, checked_names, compiled_steps

# Samples gathered per call of the compiled loop; the method calls again for more.
BLOCK = 4096
# The closures that bind the kernels to one right-hand side (and guard tuple):
# numba compiles each in about 0.2 s, so flows built again from the same
# compiled functions reuse them. A new f (new parameters baked into a closure)
# costs its own compilation, about a second with the closures.
_STEPPERS: dict[Callable, Callable] = {}
_FLIGHTS: dict[tuple, Callable] = {}
# The slope a step is given when it is not known: the kernel evaluates f(t, x).
_NO_SLOPE = np.empty(0)
# The guard directions as the compiled loops read them.
SIDES = {"falling": 1.0, "rising": -1.0, "either": 0.0}


def guard_sides(guards) -> np.ndarray:
    """Return each guard's direction as the compiled loops read it (+1, -1, 0)."""
    return np.array([SIDES[g.direction] for g in guards])


# What `compiled` compiles: a guard g(t, x) -> float, a right-hand side (or a
# contact's gradient) (t, x) -> array, a contact's force map (t, x, lam) -> array,
# its Hessian (t, x) -> 2-D array, a guard's gradient (t, x) -> (dg/dx, dg/dt), and
# a reset (t, x) -> array.
KINDS = ("guard", "rhs", "force", "hessian", "gradient", "reset")


def compiled(fn: Callable, what: str = "guard", *, kind: str = "guard") -> Callable:
    """Return fn compiled by numba as a guard g(t, x) -> float, or as another of
    the KINDS: "rhs" f(t, x) -> float64 array, "force" (t, x, lam) -> array and
    "hessian" (t, x) -> 2-D array (a `Contact`'s primitives), "gradient" (t, x)
    -> (dg/dx array, dg/dt float) (a guard's `gradient` for `Unilateral`) and
    "reset" R(t, x) -> array (an edge's reset, so methods fire it compiled).

    Use it for the guards of a mode whose flow is a CompiledFlow, so the steps
    between events run compiled, and for a Contact's primitives, so
    `Completion`'s constrained phase does. t is a float, x a contiguous float64 array.
    Division by zero gives inf or nan as in numpy (the methods then see a
    non-finite trial). A function compiled once can be handed to many flows.

    Raises
    ------
    FmibridgeError
        If numba cannot compile `fn` for that signature, naming `what`.
    """
    if kind not in KINDS:
        raise FmibridgeError(f"`kind` must be one of {KINDS}, got {kind!r}.")
    try:
        kernels = _kernels()
    except ImportError:  # pragma: no cover - numba is a dependency
        raise FmibridgeError(
            f"Compiling {what} needs numba: pip install numba."
        ) from None
    return compiled_as(fn, kernels.SIGNATURES[kind], what)


def compiled_as(fn: Callable, signature, what: str) -> Callable:
    """Return fn compiled by numba for `signature` (a numba signature), or fn
    itself if it is compiled already (then also for that signature).

    Raises
    ------
    FmibridgeError
        If numba cannot compile `fn` so, naming `what` and numba's reason.
    """
    import numba

    try:
        if isinstance(fn, numba.core.registry.CPUDispatcher):
            if signature.args not in fn.signatures:
                fn.compile(signature)
            return fn
        return numba.njit(signature, error_model="numpy")(fn)
    except (numba.core.errors.NumbaError, RuntimeError) as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        first = next((ln for ln in lines[1:] if not ln.startswith("-")), lines[0])
        raise FmibridgeError(
            f"numba cannot compile {what} ({_name_of(fn)}) as {signature}: {first}"
        ) from None


def _name_of(fn: object) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def is_compiled(fn: object) -> bool:
    """Return True if `fn` is a numba-compiled function (without importing numba)."""
    return type(fn).__name__ == "CPUDispatcher"


class CompiledFlow(VectorField):
    """x' = f(t, x) compiled with numba; inputs u(t) are written inside f.

    Parameters
    ----------
    f : callable
        f(t, x) -> dx/dt (a float64 array), in the subset of Python that numba
        compiles (math, numpy arrays); already compiled functions are used as is.
    state_names : sequence of str
        One unique name per state, in the order of x.
    name : str, optional
        Name recorded in provenance.

    Examples
    --------
    >>> import numpy as np
    >>> flow = CompiledFlow(lambda t, x: np.array([x[1], -9.81]), ["h", "v"])
    >>> flow.rhs(0.0, np.array([1.0, 0.0])).tolist()
    [0.0, -9.81]
    """

    def __init__(
        self, f: Callable, state_names: Sequence[str], *, name: str = "compiled"
    ) -> None:
        names = checked_names(f"CompiledFlow `{name}`", f, state_names)
        self._f = compiled(
            f, f"the right-hand side f of CompiledFlow `{name}`", kind="rhs"
        )
        self.name, self.state_names = name, names
        self._check_size()
        self._t_block = np.empty(BLOCK)
        self._x_block = np.empty((BLOCK, len(names)))

    @property
    def f(self) -> Callable:
        """The compiled right-hand side f(t, x), for kernels that call it."""
        return self._f

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return f(t, x), called from Python."""
        return self._f(float(t), np.ascontiguousarray(x, dtype=float))

    def _check_size(self) -> None:
        """Refuse an f that returns the wrong number of values: the compiled loops
        read them unchecked. Probed at x = 0, t = 0 (where it may be undefined:
        only the size is checked)."""
        x = np.zeros(len(self.state_names))
        with np.errstate(all="ignore"):
            dx = self._f(0.0, x)
        if dx.shape != x.shape:
            raise FmibridgeError(
                f"CompiledFlow `{self.name}`: f (`{_name_of(self._f)}`) returned "
                f"{dx.size} value(s) {dx.tolist()} at t = 0, x = {x.tolist()}; "
                f"expected {x.size}, one per state {list(self.state_names)}."
            )

    def advance(self, t: float, x: np.ndarray, h: float, scheme: Scheme) -> np.ndarray:
        """Return x(t + h): one step of `scheme`, compiled."""
        return self.advance_from(t, x, h, scheme, _NO_SLOPE)

    def advance_from(
        self, t: float, x: np.ndarray, h: float, scheme: Scheme, slope: np.ndarray
    ) -> np.ndarray:
        """Return x(t + h): one compiled step of `scheme` whose first stage is
        `slope` (f(t, x) itself where it is empty)."""
        if self._f not in _STEPPERS:
            _STEPPERS[self._f] = _kernels().stepper(self._f)
        a, b, c = scheme.arrays
        return _STEPPERS[self._f](
            float(t),
            np.ascontiguousarray(x, dtype=float),
            float(h),
            a,
            b,
            c,
            np.ascontiguousarray(slope, dtype=float),
        )

    def steps_inside(
        self,
        guards,
        t,
        x,
        h,
        t_end,
        scheme,
        max_steps,
        reach_tol,
        locate_tol=None,
        max_iter=0,
    ):
        """Take the steps between events in one compiled loop (`Flow.steps_inside`),
        where every guard is compiled; else None."""
        if not all(is_compiled(g.fn) for g in guards):
            return None
        key = (self._f, *(g.fn for g in guards))
        if key not in _FLIGHTS:
            kernels = _kernels()
            _FLIGHTS[key] = kernels.flight_loop(self._f, kernels.guard_vector(key[1:]))
        x = np.ascontiguousarray(x, dtype=float)
        x_lo, g, ends = np.empty(len(x)), np.empty((2, len(guards))), np.empty(3)
        a, b, c = scheme.arrays
        n = _FLIGHTS[key](
            guard_sides(guards),
            a,
            b,
            c,
            float(t),
            x,
            float(h),
            float(t_end),
            int(min(max_steps, BLOCK)),
            float(reach_tol),
            0.0 if locate_tol is None else float(locate_tol),
            int(max_iter),
            RATE_STEP * float(h),
            self._t_block,
            self._x_block,
            x_lo,
            g,
            ends,
        )
        return compiled_steps(t, x, self._t_block, self._x_block, n, x_lo, g, ends)

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = compiled:NAME``."""
        return {"flow": f"compiled:{self.name}"}


@functools.cache
def _kernels():
    """Import the compiled kernels on first use (numba loads them from its cache)."""
    from . import _kernels as module

    return module
