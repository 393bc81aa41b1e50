"""Native flows compiled with numba: the right-hand side and guards as machine code.

The compiled loops call them at C addresses (numba ``cfunc`` wrappers, built
once per function), with no Python in between. numba is imported on first use.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from ..core._functions import CAddress, Function, PythonVector
from ..core.errors import FmibridgeError
from ..core.guards import GuardEntry, VectorGuard
from .base import VectorField, checked_names

# What `compiled` compiles (signatures: `signatures`); `Q_KINDS` are a Lagrangian
# model's functions of its coordinates q.
Q_KINDS = ("mass_matrix", "bias", "gap", "gap_gradient", "gap_hessian")
KINDS = (
    "guard", "rhs", "force", "hessian", "gradient", "reset", "vector_gradient",
    *Q_KINDS,
)  # fmt: skip
# Each VectorGuard's g by (id, n states), dropped when it is collected.
_VECTORS: dict[tuple[int, int], Function] = {}


@functools.cache
def signatures() -> dict:
    """The numba signature of each of the KINDS (numba imported here)."""
    from numba import types

    array, matrix, f64 = types.float64[::1], types.float64[:, ::1], types.float64
    rhs = array(f64, array)
    return {
        "guard": f64(f64, array),
        "rhs": rhs,
        "force": array(f64, array, f64),
        "hessian": matrix(f64, array),
        "gradient": types.Tuple((array, f64))(f64, array),
        "reset": rhs,
        "vector_gradient": types.Tuple((matrix, array))(f64, array),
        "mass_matrix": matrix(array),  # M(q)
        "bias": array(f64, array, array),  # bias(t, q, qdot)
        "gap": f64(array),  # h(q)
        "gap_gradient": array(array),  # dh(q)
        "gap_hessian": matrix(array),  # H(q)
    }


def compiled(fn: Callable, what: str = "guard", *, kind: str = "guard") -> Callable:
    """Return fn compiled by numba as one of the KINDS (default: a guard
    g(t, x) -> float); t is a float, x a contiguous float64 array.

    Division by zero gives inf or nan as in numpy. A function compiled once can
    be handed to many flows. Where numba cannot compile it, an FmibridgeError
    names `what`."""
    if kind not in KINDS:
        raise FmibridgeError(f"`kind` must be one of {KINDS}, got {kind!r}.")
    return compiled_as(fn, signatures()[kind], what)


def compiled_as(fn: Callable, signature, what: str) -> Callable:
    """Return fn compiled by numba for `signature`, or fn itself if it is
    compiled already (then also for that signature); an FmibridgeError names
    `what` and numba's reason where numba cannot."""
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


@functools.cache
def c_function(fn: Callable, kind: str, n: int, n_out: int | None = None) -> Function:
    """Return the numba function fn as a Function the compiled loops call at
    its C address (a ``cfunc`` writing to the loop's buffer), built once.

    For n states: "guard" and "gap" give one value; "rhs", "reset" and "force"
    (x then lam in: n + 1 values) give n_out (default n); "hessian" its n_out
    entries by rows; "gradient" n + 1 (dg/dx, dg/dt). The `Q_KINDS` read q =
    x[:n] ("bias" (t, q, qdot): 2n values); "mass_matrix" and "gap_hessian" give
    n x n by rows."""
    import numba
    from numba import types

    what = f"{kind} `{_name_of(fn)}`"
    fn = compiled(fn, what, kind=kind)
    pointer = types.CPointer(types.float64)
    signature = types.void(types.float64, pointer, pointer)
    n_in = {"force": n + 1, "bias": 2 * n}.get(kind, n)
    size = n if n_out is None else n_out
    if kind == "bias":
        evaluate = numba.njit(lambda t, x: fn(t, x[:n], x[n:]))
    elif kind == "force":
        evaluate = numba.njit(lambda t, x: fn(t, x[:n], x[n]))
    elif kind == "hessian":
        evaluate = numba.njit(lambda t, x: fn(t, x).ravel())
    elif kind in ("mass_matrix", "gap_hessian"):
        evaluate, size = numba.njit(lambda t, x: fn(x).ravel()), n * n
    elif kind in Q_KINDS:
        evaluate = numba.njit(lambda t, x: fn(x))
    else:
        evaluate = fn
    if kind in ("guard", "gap"):

        def scalar(t, x_at, out):
            out[0] = evaluate(t, numba.carray(x_at, n_in))

        wrapper, size = numba.cfunc(signature)(scalar), 1
    elif kind == "gradient":

        def gradient(t, x_at, out):
            row, value = fn(t, numba.carray(x_at, n))
            for i in range(n):
                out[i] = row[i]
            out[n] = value

        wrapper, size = numba.cfunc(signature)(gradient), n + 1
    else:

        def vector(t, x_at, out):
            values = evaluate(t, numba.carray(x_at, n_in))
            for i in range(size):
                out[i] = values[i]

        wrapper = numba.cfunc(signature)(vector)
    return CAddress(wrapper.address, n_in, size, what, keep=wrapper)


def c_gradient_rows(
    fn: Callable,
    n: int,
    starts: np.ndarray,
    columns: np.ndarray,
    what: str,
    sparse: bool = False,
) -> Function:
    """Return a VectorGuard's numba gradient as a Function writing dg/dx at
    `columns` row by row (row r's at columns[starts[r]:starts[r + 1]]), then
    dg/dt per row; a `sparse` gradient returns those values in that order.
    Sizes are not checked here."""
    import numba
    from numba import types

    fn = compiled(fn, what, kind="vector_gradient")
    starts = np.asarray(starts, dtype=np.int64)
    m, nnz = len(starts) - 1, len(columns)
    # each value's place in dg/dx flattened (row by row), or in the sparse values
    rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(starts))
    at = np.arange(nnz) if sparse else rows * n + np.asarray(columns, dtype=np.int64)
    pointer = types.CPointer(types.float64)

    def gradient(t, x_at, out):
        gx, gt = fn(t, numba.carray(x_at, n))
        flat = gx.ravel()
        for k in range(nnz):
            out[k] = flat[at[k]]
        for r in range(m):
            out[nnz + r] = gt[r]

    wrapper = numba.cfunc(types.void(types.float64, pointer, pointer))(gradient)
    return CAddress(wrapper.address, n, nnz + m, what, keep=wrapper)


def vector_function(vector: VectorGuard, n: int) -> Function:
    """Return the VectorGuard's g of n states as the loops call it."""
    key = (id(vector), n)
    found = _VECTORS.get(key)
    if found is None:
        what = f"VectorGuard `{vector.name}`"
        if is_compiled(vector.fn):
            with np.errstate(all="ignore"):
                vector.values(0.0, np.zeros(n))  # raises if the size is wrong
            found = c_function(vector.fn, "rhs", n, vector.size)
        else:
            found = PythonVector(vector.fn, n, vector.size, what)
        _VECTORS[key] = found
        weakref.finalize(vector, _VECTORS.pop, key, None)
    return found


def engine_entry(fn: object, n: int) -> tuple[Function, int] | None:
    """Return a guard's compiled form (Function, entry), or None for Python."""
    entry = getattr(fn, "engine_entry", None)
    if entry is not None:
        return entry(n)
    if isinstance(fn, GuardEntry):
        return vector_function(fn.vector, n), fn.index
    if is_compiled(fn):
        return c_function(fn, "guard", n), 0
    return None


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
        self.f = compiled(
            f, f"the right-hand side f of CompiledFlow `{name}`", kind="rhs"
        )
        self.name, self.state_names = name, names
        x = np.zeros(len(names))
        with np.errstate(all="ignore"):
            dx = self.f(0.0, x)
        if dx.shape != x.shape:
            raise FmibridgeError(
                f"CompiledFlow `{name}`: f (`{_name_of(self.f)}`) returned "
                f"{dx.size} value(s) {dx.tolist()} at t = 0, x = {x.tolist()}; "
                f"expected {x.size}, one per state {list(names)}."
            )

    def rhs_function(self) -> Function:
        """Return f as the loops call it: at its C address."""
        return c_function(self.f, "rhs", len(self.state_names))

    def describe(self) -> dict[str, str]:
        """Return the provenance entry ``flow = compiled:NAME``."""
        return {"flow": f"compiled:{self.name}"}
