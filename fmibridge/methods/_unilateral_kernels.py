"""The numba kernels behind `Unilateral`: Adams PECE steps limited by the guards.

`flight` takes the steps of Esposito and Kumar's Fig. 5 until an edge is due,
t_end, a bound, or a step that cannot be taken, in one compiled loop; `Unilateral`
fires the due edge in Python. Every path runs this loop: it evaluates the
right-hand side, the guards and their gradients through a context that numba
resolves at compile time (`rhs_at`, `guards_at`, `rates_at`):

* (f, guards, gradients), typed lists of compiled functions, one guard per
  atom (`typed_functions`): a `CompiledFlow` whose guards are compiled;
* (f, (g, picks, starts, columns), gradient) (`typed_vector`): a
  `CompiledFlow` whose guards are the entries of one compiled `VectorGuard` g,
  evaluated once per point (atom a is its entry picks[a]), with one gradient
  for all, read only where its sparsity allows non-zeros (the columns of row r
  are columns[starts[r]:starts[r + 1]]);
* an integer, thrice: the key of a Python `Evaluator` in `EVALUATORS`, called
  back in numba's object mode (about 2 us a call): any other vector field.

So both paths take the same decisions on the same numbers, and the results agree
bit for bit where the functions they call do. The Adams formulas and the first
reach come from `adams` and `polyroots`, compiled from the same source. numba's
cache does not see edits to another file: after changing adams.py,
polyroots.py, unilateral.py or flows/_kernels.py, touch this file.

The guards are the atoms of `unilateral._Bank` (the components of AND guards),
as arrays: `bank` is (owner, starts, base, unilateral, single, curved) with the
edge of each atom, the first atom of each edge, the direction (-1 falling, +1
rising, 0 either) and the flags of `_Bank`. The history (`memory`) is (ts, xs,
fs, gs, lies, norms, sign, state): times, states, x', raw guard values, Lie
derivatives and gradient norms at up to MAX_ORDER nodes, newest first, the
orientation of each atom, and state = (nodes held, error-controlled step).

A step allocates nothing of its own: the predictor, the polynomials, x^p, x^c
and the gradients go to a `workspace` made once per call of `flight`. numba
increfs and decrefs (atomically) every array of a tuple handed to an inlined
helper, at each call: on Example 1 about 150 pairs per step, 38 % of the run.
So the helpers called per atom take scalars (`level_of`), and `flight` reads
the caller's arrays (bank, params, memory and the output buffers) through
`borrowed` views, which hold no reference: about 13 increfs per step remain.
Those views never reach Python, nor does the workspace: Python callbacks get
copies of x^p and x^c (`handed`).

References
----------
Esposito and Kumar (2007), Fig. 5, eqs. 12-21.
"""

from __future__ import annotations

import math
from types import FunctionType

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import adams, polyroots
from .unilateral import (
    BAND_C,
    BISECTIONS,
    MAX_GROWTH,
    MIN_SHRINK,
    MIN_STEP_ULPS,
    SAFETY,
    central_difference,
    central_rows,
)

_jit = numba.njit(cache=True)
_inline = numba.njit(cache=True, inline="always")  # small helpers of the loop


def _compiled(module, names: tuple[str, ...]) -> dict:
    """Compile the plain functions `names` of `module` with numba, each calling
    the compiled others (a plain function calls its module's plain ones)."""
    namespace = dict(vars(module))
    for name in names:
        fn = getattr(module, name)
        plain = FunctionType(fn.__code__, namespace, name, fn.__defaults__)
        namespace[name] = _jit(plain)
    return namespace


_ADAMS = _compiled(
    adams,
    (
        "integral_basis",
        "write_predictor",
        "write_prediction",
        "predict",
        "corrector_weights",
        "correct",
        "integral_of_product",
        "milne",
        "starting_step",
    ),
)
_ROOTS = _compiled(
    polyroots,
    (
        "polyval",
        "degree",
        "bisect",
        "real_roots",
        "_breakpoints",
        "_negative_after_zero",
        "_crossing",
        "first_reach",
    ),
)
integral_basis, write_predictor = _ADAMS["integral_basis"], _ADAMS["write_predictor"]
predict, write_prediction = _ADAMS["predict"], _ADAMS["write_prediction"]
correct = _ADAMS["correct"]
corrector_weights = _ADAMS["corrector_weights"]
milne, starting_step = _ADAMS["milne"], _ADAMS["starting_step"]
first_reach = _ROOTS["first_reach"]

# params: the method's settings, in this order (gamma nan for None)
TOL, RTOL, GAMMA, H, MAX_REJECTIONS, MAX_ORDER, ENDPOINT = range(7)
# out: how the loop ended, the rejected trials, and where (t) it failed
CODE, REJECTED, T_STOP = range(3)
OUT_SIZE = 3
# how `flight` ended: the block is full, t_end, an edge is due, no step (after
# max_rejections), non-finite values at the accepted point (t_stop, x_stop)
FULL, REACHED, DUE, STUCK, NON_FINITE = range(5)
# -- the context: compiled functions, or a Python Evaluator called back -----------

EVALUATORS: dict[int, object] = {}


def rhs_at(context, t, x):
    """Return dx/dt at (t, x) through the context (compiled only)."""
    raise NotImplementedError("`rhs_at` runs only inside numba-compiled kernels")


def guards_at(context, t, x):
    """Return the raw value of every atom at (t, x) (compiled only)."""
    raise NotImplementedError("`guards_at` runs only inside numba-compiled kernels")


def guard_value(context, a, t, x):
    """Return the raw value of atom a at (t, x) (compiled only)."""
    raise NotImplementedError("`guard_value` runs only inside numba-compiled kernels")


def gradients_at(context, bank, t, x, gx, gt):
    """Write each atom's dg/dx to the rows of gx and dg/dt to gt (compiled only)."""
    raise NotImplementedError("`gradients_at` runs only inside numba-compiled kernels")


def _is_compiled(context) -> bool:
    return isinstance(context, types.BaseTuple) and isinstance(
        context[1], types.ListType
    )


def _is_vector(context) -> bool:
    """A compiled context whose guards are one vector function and the entry
    of each atom: (f, (g, picks, starts, columns), gradient) (`typed_vector`)."""
    return isinstance(context, types.BaseTuple) and isinstance(
        context[1], types.BaseTuple
    )


def _is_python(context) -> bool:
    return isinstance(context, types.BaseTuple) and isinstance(
        context[0], types.Integer
    )


@overload(rhs_at)
def _rhs_at(context, t, x):
    if _is_compiled(context) or _is_vector(context):
        return lambda context, t, x: context[0][0](t, x)
    if _is_python(context):

        def call(context, t, x):
            with numba.objmode(dx="float64[::1]"):
                dx = EVALUATORS[context[0]].rhs(t, x)
            return dx

        return call
    return None


@overload(guards_at)
def _guards_at(context, t, x):
    if _is_compiled(context):

        def compiled(context, t, x):
            g = np.empty(len(context[1]))
            for a in range(g.shape[0]):
                g[a] = context[1][a](t, x)
            return g

        return compiled
    if _is_vector(context):
        return lambda context, t, x: context[1][0][0](t, x)[context[1][1]]
    if _is_python(context):

        def call(context, t, x):
            with numba.objmode(g="float64[::1]"):
                g = EVALUATORS[context[0]].guards(t, x)
            return g

        return call
    return None


@overload(guard_value)
def _guard_value(context, a, t, x):
    if _is_compiled(context):
        return lambda context, a, t, x: context[1][a](t, x)
    if _is_vector(context):
        return lambda context, a, t, x: context[1][0][0](t, x)[context[1][1][a]]
    if _is_python(context):

        def call(context, a, t, x):
            with numba.objmode(g="float64"):
                g = EVALUATORS[context[0]].guard(a, t, x)
            return g

        return call
    return None


@overload(gradients_at)
def _gradients_at(context, bank, t, x, gx, gt):
    if _is_compiled(context):

        def compiled(context, bank, t, x, gx, gt):
            for a in range(gt.shape[0]):
                if bank[6][a]:
                    row, value = context[2][a](t, x)
                    gx[a, :] = row
                    gt[a] = value
                else:
                    gt[a] = central(context[1][a], t, x, gx[a])

        return compiled
    if _is_python(context):

        def call(context, bank, t, x, gx, gt):
            with numba.objmode(rows="float64[:, ::1]", times="float64[::1]"):
                rows, times = EVALUATORS[context[0]].gradients(t, x)
            gx[:, :] = rows
            gt[:] = times

        return call
    return None


def rates_at(context, bank, params, memory, gradients, t, x, f):
    """Write each atom's Lie derivative dg/dx f + dg/dt (eq. 2) and gradient norm
    sum_i abs(dg/dx_i) eps_i to the newest rows of the history (compiled only)."""
    raise NotImplementedError("`rates_at` runs only inside numba-compiled kernels")


@_inline
def add_rate(params, x, f, d, i, total, size):
    """(total, size) with the term of dg/dx_i = d added; a zero adds +-0 to sums
    that are never -0, so it is skipped (dense and sparse rows give the same
    bits)."""
    if d == 0.0:
        return total, size
    return total + d * f[i], size + abs(d) * (params[TOL] + params[RTOL] * abs(x[i]))


@overload(rates_at)
def _rates_at(context, bank, params, memory, gradients, t, x, f):
    if _is_vector(context):

        def vector(context, bank, params, memory, gradients, t, x, f):
            fn, picks, starts, columns = context[1]
            if bank[6][0]:  # the vector guard has a gradient
                rows, times = context[2][0](t, x)
            else:
                m = fn[0](t, x).shape[0]
                rows, times = np.empty((m, x.shape[0])), np.empty(m)
                central_vector(fn[0], t, x, rows, times)
            for a in range(picks.shape[0]):  # only the entries of the sparsity
                r, total, size = picks[a], 0.0, 0.0
                for k in range(starts[r], starts[r + 1]):
                    i = columns[k]
                    total, size = add_rate(params, x, f, rows[r, i], i, total, size)
                memory[4][0, a], memory[5][0, a] = total + times[r], size

        return vector

    def dense(context, bank, params, memory, gradients, t, x, f):
        gx, gt = gradients
        gradients_at(context, bank, t, handed(context, x), gx, gt)
        for a in range(gt.shape[0]):
            total, size = 0.0, 0.0
            for i in range(x.shape[0]):
                total, size = add_rate(params, x, f, gx[a, i], i, total, size)
            memory[4][0, a], memory[5][0, a] = total + gt[a], size

    return dense


def handed(context, x):
    """Return x as a callback may keep it (compiled only)."""
    raise NotImplementedError("`handed` runs only inside numba-compiled kernels")


@overload(handed)
def _handed(context, x):
    """x itself for compiled functions; a copy for Python ones, which may keep
    what they are given (the workspace's x^p and x^c change at every step)."""
    if _is_python(context):
        return lambda context, x: x.copy()
    return lambda context, x: x


# `unilateral.central_difference` compiled, for a compiled guard fn (one
# compilation for every guard: fn is a first-class function)
central = numba.njit(
    types.float64(
        types.FunctionType(types.float64(types.float64, types.float64[::1])),
        types.float64,
        types.float64[::1],
        types.float64[::1],
    ),
    cache=True,
)(central_difference)
# `unilateral.central_rows` compiled, for a compiled vector guard fn
VECTOR = types.FunctionType(types.float64[::1](types.float64, types.float64[::1]))
central_vector = numba.njit(
    types.void(
        VECTOR,
        types.float64,
        types.float64[::1],
        types.float64[:, ::1],
        types.float64[::1],
    ),
    cache=True,
)(central_rows)


@intrinsic
def borrowed(typingctx, arrays):
    """Return the array, or the tuple of arrays, as views that hold no reference.

    numba increfs and decrefs every array of a tuple handed to an inlined
    helper, atomically, at each call; a view without a reference count makes
    those no-ops. Only for arrays the caller (Python) keeps alive for the whole
    call, and never boxed back into Python objects.
    """

    def codegen(context, builder, signature, args):
        def strip(ty, value):
            if isinstance(ty, types.Array):  # numba's own model names the fields
                model = context.data_model_manager[ty]
                for name in ("meminfo", "parent"):
                    field = model.get_field_position(name)
                    null = cgutils.get_null_value(value.type.elements[field])
                    value = builder.insert_value(value, null, field)
                return value
            for i, member in enumerate(ty):
                inner = strip(member, builder.extract_value(value, i))
                value = builder.insert_value(value, inner, i)
            return value

        return strip(signature.args[0], args[0])

    return arrays(arrays), codegen


# -- the guards as arrays -------------------------------------------------------


@_inline
def level_of(gamma, c, norm, is_unilateral, is_single):
    """An atom's final level, step level L and band beta (eqs. 19-21) from its
    oriented value c and gradient norm at the newest node (scalars: the hot
    loop copies no tuple of arrays to call it)."""
    beta = norm / BAND_C
    final = -beta if is_unilateral else 0.0
    level = final if math.isnan(gamma) else min(gamma * c, final)
    if is_single and c >= level:  # inside the band moving away: no deeper
        level = max(c, 0.0)
    return final, level, beta


@_inline
def limit(bank, params, memory, buffer, basis, scale, upper):
    """First root of the extrapolation polynomials in (0, upper], eq. 15.

    P(u) = (c_k - L) + sum_j B_j(u) dc/dt_{k-j+1}, with scale B (`basis`) the
    integral basis of the stencil; edges whose P stays below zero on [0, upper]
    by the bound of the positive coefficients are skipped. The polynomials are
    written to `buffer` (the workspace's).
    """
    starts = bank[1]
    gs, lies, sign = memory[3], memory[4], memory[6]
    n_edges, n_atoms, order = starts.shape[0], gs.shape[1], basis.shape[0]
    poly = buffer[: n_atoms * (order + 1)].reshape((n_atoms, order + 1))
    u_max = upper / scale
    u_star = math.inf
    for e in range(n_edges):
        end = starts[e + 1] if e + 1 < n_edges else n_atoms
        reach = True  # else P < 0 on [0, upper] for an atom: no root there
        for a in range(starts[e], end):
            c = sign[a] * gs[0, a]
            _, level, _ = level_of(
                params[GAMMA], c, memory[5][0, a], bank[3][a], bank[4][a]
            )
            for k in range(order + 1):
                total = 0.0
                for j in range(order):
                    total += (scale * basis[j, k]) * (sign[a] * lies[j, a])
                poly[a, k] = total
            poly[a, 0] += c - level
            bound, power = poly[a, 0], 1.0
            for k in range(1, order + 1):
                power *= u_max
                bound += max(poly[a, k], 0.0) * power
            reach = reach and bound >= 0.0
        if reach:
            u_star = min(u_star, first_reach(poly[starts[e] : end], u_max))
    return u_star * scale


@_inline
def next_due(bank, params, memory, first):
    """The first edge from `first` on that is due at the newest node, or -1.

    Extrapolation: all its atoms in their band, the closest approaching. Endpoint
    checks (`EndpointAdams`): crossed between the last two nodes (`Guard.crossed`
    on the max over the atoms).
    """
    starts, base = bank[1], bank[2]
    gs, lies, sign = memory[3], memory[4], memory[6]
    n_edges, endpoint = starts.shape[0], params[ENDPOINT] != 0.0
    if endpoint and memory[7][0] < 2:
        return -1
    for e in range(first, n_edges):
        end = starts[e + 1] if e + 1 < n_edges else gs.shape[1]
        if endpoint:
            g0, g1 = gs[1, starts[e] : end].max(), gs[0, starts[e] : end].max()
            if crossed(base[starts[e]], g0, g1):
                return e
            continue
        closest, gap, inside = starts[e], math.inf, True
        for a in range(starts[e], end):
            c = sign[a] * gs[0, a]
            final, _, beta = level_of(
                params[GAMMA], c, memory[5][0, a], bank[3][a], bank[4][a]
            )
            inside = inside and c >= final - beta
            if c - final < gap:
                closest, gap = a, c - final
        if inside and sign[closest] * lies[0, closest] >= 0.0:
            return e
    return -1


@_jit
def due_edges(bank, params, memory):
    """Edges due at the newest node, in declaration order (`next_due`)."""
    due, n = np.empty(bank[1].shape[0], dtype=np.int64), 0
    e = next_due(bank, params, memory, 0)
    while e >= 0:
        due[n], n = e, n + 1
        e = next_due(bank, params, memory, e + 1)
    return due[:n].copy()


@_inline
def crossed(side, g0, g1):
    """`core.system.Guard.crossed` for a direction given as -1, +1 or 0."""
    falling = g1 < 0.0 and g1 < g0
    rising = g1 > 0.0 and g1 > g0
    if side < 0.0:
        return falling
    if side > 0.0:
        return rising
    return (g0 >= 0.0 and falling) or (g0 <= 0.0 and rising)


@_inline
def beyond(bank, sign, g_now, g):
    """True if a unilateral edge not beyond at g_now is beyond at g."""
    starts, unilateral = bank[1], bank[3]
    n_edges, n_atoms = starts.shape[0], g.shape[0]
    for e in range(n_edges):
        if not unilateral[starts[e]]:
            continue
        end = starts[e + 1] if e + 1 < n_edges else n_atoms
        before, after = True, True
        for a in range(starts[e], end):
            before = before and sign[a] * g_now[a] > 0.0
            after = after and sign[a] * g[a] > 0.0
        if after and not before:
            return True
    return False


@_inline
def finite(v):
    """True if every entry of v is finite."""
    for i in range(v.shape[0]):
        if not math.isfinite(v[i]):
            return False
    return True


@_inline
def spacing(t):
    """The distance from abs(t) >= 1 to the next float (numpy's spacing)."""
    _, exponent = math.frexp(abs(t))
    return math.ldexp(1.0, exponent - 53)


# -- points, the start and the step ---------------------------------------------


@_inline
def shift(rows, keep):
    """Move rows[:keep] to rows[1:keep + 1] (the history ages by one node)."""
    for j in range(keep, 0, -1):
        for i in range(rows.shape[1]):
            rows[j, i] = rows[j - 1, i]


@_inline
def push(context, bank, params, memory, gradients, t, x, f, g):
    """Make (t, x) the newest node (dropping the oldest beyond max_order), with
    its Lie derivatives dg/dx f + dg/dt (eq. 2) and norms sum_i abs(dg/dx_i)
    eps_i (zeros for endpoint checks, which need neither); return False if
    dx/dt, the state or a guard is not finite there. `gradients`: the arrays
    (dg/dx, dg/dt) to write to (the workspace's)."""
    if not (finite(x) and finite(f) and finite(g)):
        return False
    keep = min(int(memory[7][0]), int(params[MAX_ORDER]) - 1)
    for j in range(keep, 0, -1):
        memory[0][j] = memory[0][j - 1]
    shift(memory[1], keep)  # each history array by name: no tuple of views
    shift(memory[2], keep)
    shift(memory[3], keep)
    shift(memory[4], keep)
    shift(memory[5], keep)
    memory[0][0], memory[7][0] = t, keep + 1
    memory[1][0], memory[2][0], memory[3][0] = x, f, g
    memory[4][0], memory[5][0] = 0.0, 0.0
    if params[ENDPOINT] != 0.0 or g.shape[0] == 0:
        return True
    rates_at(context, bank, params, memory, gradients, t, x, f)
    return True


@_jit
def start(context, bank, params, memory, work, t, x):
    """Fresh history at (t, x): order 1, orientation of 'either' guards; return
    False if dx/dt or a guard is not finite there."""
    state, sign, base = memory[7], memory[6], bank[2]
    state[0] = 0.0
    f, g = rhs_at(context, t, x), guards_at(context, t, x)
    if not push(context, bank, params, memory, (work[4], work[5]), t, x, f, g):
        return False
    lie, norm = memory[4][0], memory[5][0]
    eps = params[TOL] + params[RTOL] * np.abs(x)
    for a in range(sign.shape[0]):
        band = norm[a] / BAND_C
        moving = -math.copysign(1.0, lie[a]) if lie[a] != 0.0 else -1.0
        resting = -math.copysign(1.0, g[a]) if g[a] != 0.0 else moving
        either = moving if abs(g[a]) <= 2 * band else resting
        sign[a] = base[a] if base[a] != 0.0 else either
    state[1] = starting_step(x, f, eps, params[H])
    return True


@_inline
def atom_past(bank, params, memory, a, value):
    """Is atom a curved and past its level at the raw guard value `value`?"""
    c = memory[6][a] * memory[3][0, a]
    _, level, _ = level_of(params[GAMMA], c, memory[5][0, a], bank[3][a], bank[4][a])
    return bank[5][a] and memory[6][a] * value > level


@_jit
def edge_over(context, bank, params, memory, predictor, scale, s, e):
    """Is every atom of edge e curved and past its level at x^p(s)? Only its
    atoms are evaluated (a bisection of `predictor_check` follows one edge)."""
    starts, ts, xs = bank[1], memory[0], memory[1]
    end = starts[e + 1] if e + 1 < starts.shape[0] else bank[5].shape[0]
    x = predict(xs[0], predictor, s / scale)
    for a in range(starts[e], end):
        if not bank[5][a]:
            return False
        value = guard_value(context, a, ts[0] + s, x)
        if not atom_past(bank, params, memory, a, value):
            return False
    return True


@_inline
def predictor_check(context, bank, params, memory, predictor, scale, h):
    """Shorten h until no curved unilateral guard is past its level at x^p."""
    starts, ts, xs = bank[1], memory[0], memory[1]
    values = guards_at(context, ts[0] + h, predict(xs[0], predictor, h / scale))
    for e in range(starts.shape[0]):
        end = starts[e + 1] if e + 1 < starts.shape[0] else values.shape[0]
        past = True  # every atom of e past its level at the first h
        for a in range(starts[e], end):
            past = past and atom_past(bank, params, memory, a, values[a])
        if past:
            lo, hi = 0.0, h
            for _ in range(BISECTIONS):  # keep the safe end of the bracket
                mid = 0.5 * (lo + hi)
                if edge_over(context, bank, params, memory, predictor, scale, mid, e):
                    hi = mid
                else:
                    lo = mid
            h = min(h, lo)
    return h


@_jit
def fresh_stencil():
    """An empty cache of the Adams coefficients (`basis_of`, `corrector_of`):
    (m and the nodes, basis, u key, corrector weights, Milne's constant)."""
    return (
        np.full(adams.MAX_ORDER + 1, np.nan),
        np.empty((adams.MAX_ORDER, adams.MAX_ORDER + 1)),
        np.full(1, np.nan),
        np.empty(adams.MAX_ORDER),
        np.empty(1),
    )


@_jit
def workspace(n, n_atoms):
    """The arrays a step writes instead of allocating its own: (predictor,
    polynomials, x^p, x^c, dg/dx, dg/dt) for n states and n_atoms atoms."""
    width = adams.MAX_ORDER + 1
    return (
        np.zeros((width, n)),
        np.empty(n_atoms * width),
        np.empty(n),
        np.empty(n),
        np.empty((n_atoms, n)),
        np.empty(n_atoms),
    )


@_inline
def basis_of(stencil, ts, m, scale):
    """The first m history times relative to the newest over `scale` (the
    nodes) and their `integral_basis`, recomputed only when the nodes differ
    from the cached ones (at a constant step they repeat bit for bit)."""
    key, basis = stencil[0], stencil[1]
    same = key[0] == m
    for j in range(m):
        node = (ts[j] - ts[0]) / scale
        same = same and key[j + 1] == node
        key[j + 1] = node
    nodes = key[1 : m + 1]
    if not same:
        key[0] = m
        stencil[2][0] = math.nan  # the corrector's coefficients are stale
        basis[:m, : m + 1] = integral_basis(nodes)
    return basis[:m, : m + 1], nodes


@_inline
def corrector_of(stencil, nodes, u):
    """`corrector_weights` and `milne` of a step to u from the nodes of the last
    `basis_of`, recomputed only when u or the nodes changed."""
    m = nodes.shape[0]
    if stencil[2][0] != u:
        stencil[2][0] = u
        stencil[3][:m] = corrector_weights(nodes, u)
        stencil[4][0] = milne(nodes, u)
    return stencil[3][:m], stencil[4][0]


@_inline
def step(context, bank, params, memory, stencil, work, t_end, out, x_stop):
    """One accepted PECE step limited by the guards (Fig. 5); returns FULL (taken),
    STUCK or NON_FINITE (then t_stop, x_stop). `stencil`: `fresh_stencil`;
    `work`: `workspace`."""
    ts, xs, fs, _, _, _, sign, state = memory
    xp, xc, gradients, curved = work[2], work[3], (work[4], work[5]), bank[5].any()
    order = min(int(state[0]), int(params[MAX_ORDER]))
    t0, x0, endpoint = ts[0], xs[0], params[ENDPOINT] != 0.0  # x0: until push
    upper = min(state[1], params[H], t_end - t0)
    scale = upper
    if order > 1:
        scale = t0 - ts[1]
        upper = min(upper, MAX_GROWTH * scale)
    basis, nodes = basis_of(stencil, ts, order, scale)
    predictor = work[0][: order + 1]
    write_predictor(basis, fs, scale, predictor)
    h_star = (
        math.inf
        if endpoint
        else limit(bank, params, memory, work[1], basis, scale, upper)
    )
    h_err, h = state[1], min(h_star, upper)
    for _ in range(int(params[MAX_REJECTIONS])):
        if h <= MIN_STEP_ULPS * spacing(max(abs(t0), 1.0)):
            break  # the guard's level is reached within round-off but not due
        if not endpoint and curved:
            h = predictor_check(context, bank, params, memory, predictor, scale, h)
        t = t_end if h >= t_end - t0 else t0 + h
        write_prediction(x0, predictor, h / scale, xp)
        weights, constant = corrector_of(stencil, nodes, h / scale)
        f_predicted = rhs_at(context, t, handed(context, xp))
        correct(x0, weights, fs, scale, f_predicted, xc)
        ratio = 0.0
        for i in range(xp.shape[0]):
            eps = params[TOL] + params[RTOL] * abs(x0[i])
            r = abs(xp[i] - xc[i]) / eps
            ratio = r if (r > ratio or math.isnan(r)) else ratio
        error = constant * ratio
        if error > 1.0 or ratio > 1.0 / BAND_C:
            out[REJECTED] += 1
            factor = SAFETY * max(error, ratio * BAND_C) ** (-1.0 / (order + 1))
            h_err = h * max(MIN_SHRINK, factor)
            h = min(h_star, h_err)
            continue
        g = guards_at(context, t, handed(context, xc))
        if not endpoint and beyond(bank, sign, memory[3][0], g):
            out[REJECTED] += 1  # a curved guard outran the band: halve
            h /= 2
            continue
        grow = min(MAX_GROWTH, SAFETY * max(error, 1e-12) ** (-1.0 / (order + 1)))
        f = rhs_at(context, t, handed(context, xc))
        if not push(context, bank, params, memory, gradients, t, xc, f, g):
            out[T_STOP] = t
            x_stop[:] = xc
            return NON_FINITE
        state[1] = h * grow if h >= h_err else max(h * grow, h_err)
        return FULL
    return STUCK


@_jit
def flight(f, guards, gradients, bank, params, memory, t, x, limits, ts, xs, out):
    """Take steps from the newest node (from a fresh `start` at (t, x) when the
    history is empty) until an edge is due, t_end, max_steps or a stop; write
    their end times and states to ts[:n], xs[:n] and return n.

    `limits` is (t_end, reach_tol, max_steps): t_end counts as reached within
    reach_tol. out holds how the loop ended (CODE), the rejected trials and,
    for NON_FINITE, t_stop; the state there is xs[n].
    """
    context = (f, guards, gradients)  # typed lists, or an Evaluator's key thrice
    # the caller holds these for the whole call: no reference counts in the loop
    bank, params, memory = borrowed(bank), borrowed(params), borrowed(memory)
    ts, xs, out = borrowed(ts), borrowed(xs), borrowed(out)
    t_end, reach_tol, max_steps = limits[0], limits[1], int(limits[2])
    out[CODE], out[REJECTED] = FULL, 0.0
    work = workspace(x.shape[0], bank[0].shape[0])
    if memory[7][0] == 0.0 and not start(context, bank, params, memory, work, t, x):
        out[CODE], out[T_STOP] = NON_FINITE, t
        xs[0] = x
        return 0
    n, stencil = 0, fresh_stencil()
    while True:
        if next_due(bank, params, memory, 0) >= 0:
            out[CODE] = DUE
            break
        if memory[0][0] >= t_end - reach_tol:
            out[CODE] = REACHED
            break
        if n >= max_steps:
            break
        code = step(context, bank, params, memory, stencil, work, t_end, out, xs[n])
        if code != FULL:
            out[CODE] = code
            break
        ts[n], xs[n] = memory[0][0], memory[1][0]
        n += 1
    return n


def no_gradient(t, x):
    """The gradient list's entry for an atom without one (never called)."""
    return np.empty(0), math.nan


# A vector guard's gradient: (t, x) -> (dg/dx rows, dg/dt), `VectorGuard.gradient`
VECTOR_GRADIENT = types.Tuple((types.float64[:, ::1], types.float64[::1]))(
    types.float64, types.float64[::1]
)


def no_gradients(t, x):
    """The gradient of a vector guard without one (never called)."""
    return np.empty((0, 0)), np.empty(0)


def typed_vector(f, fn, gradient, picks, pattern) -> tuple:
    """Return f, the vector guard fn with the entry of each atom (picks) and the
    columns of dg/dx each entry may have non-zero (pattern: starts, columns, by
    rows), and its gradient, as the compiled context takes them (`no_gradients`
    where it has none: central differences of fn are taken instead)."""
    from numba.typed import List

    from ..flows._kernels import SIGNATURES

    rhs = List.empty_list(types.FunctionType(SIGNATURES["rhs"]))
    rhs.append(f)
    guards = List.empty_list(VECTOR)
    guards.append(fn)
    slopes = List.empty_list(types.FunctionType(VECTOR_GRADIENT))
    slopes.append(gradient or numba.njit(VECTOR_GRADIENT, cache=True)(no_gradients))
    starts, columns = (np.ascontiguousarray(a, dtype=np.int64) for a in pattern)
    picks = np.ascontiguousarray(picks, dtype=np.int64)
    return rhs, (guards, picks, starts, columns), slopes


def typed_functions(f, fns, gradients) -> tuple:
    """Return f, the guards and their gradients as the typed lists of first-class
    functions of the compiled context (an atom without a gradient gets
    `no_gradient`: its central differences are taken instead)."""
    from numba.typed import List

    from ..flows._kernels import SIGNATURES

    rhs = List.empty_list(types.FunctionType(SIGNATURES["rhs"]))
    rhs.append(f)
    guards = List.empty_list(types.FunctionType(SIGNATURES["guard"]))
    slopes = List.empty_list(types.FunctionType(SIGNATURES["gradient"]))
    placeholder = numba.njit(SIGNATURES["gradient"], cache=True)(no_gradient)
    for fn, gradient in zip(fns, gradients, strict=True):
        guards.append(fn)
        slopes.append(placeholder if gradient is None else gradient)
    return rhs, guards, slopes
