"""Unilateral's steps, compiled: Adams PECE steps limited by the guards.

`flight` takes the steps of Esposito and Kumar's Fig. 5 until an edge is due
(`due_edges`), t_end, a bound, or a step that cannot be taken. The guards are
the atoms of a `Bank` (edge e's are starts[e] to starts[e + 1]); `Rates` gives
their Lie derivatives dg/dx f + dg/dt (eq. 2) from their gradients (`Rows`).

References
----------
Esposito and Kumar (2007), Fig. 5, eqs. 12-21.
"""

from libc.math cimport INFINITY, NAN, copysign, fabs, frexp, isnan, ldexp, pow
from libc.string cimport memmove

import numpy as np

from ..core._functions cimport Function, new_array
from ..core.events cimport all_finite, crossed as guard_crossed
from .adams cimport (
    MAX_ORDER, correct, corrector, starting_step, write_basis, write_prediction,
    write_predictor,
)
from .polyroots cimport MAX_WIDTH, first_reach_in, first_reach_scratch

# Smallest constant-step Milne constant of orders 1-4 (ABM4, 19/270; eq. 16).
# An accepted step has |x^p - x^c| <= eps / BAND_C componentwise, so an affine
# guard moves by at most beta = sum |dg/dx_i| eps_i / BAND_C (eq. 19).
cdef double _BAND_C = 19.0 / 270.0
BAND_C = _BAND_C
# step-controller safety factor (Hairer, Norsett and Wanner, Sec. II.4)
cdef double SAFETY = 0.9
# bound on h_{k+1}/h_k (and on h_err growth): Adams ratio stability
cdef double MAX_GROWTH = 5.0
cdef double MIN_SHRINK = 0.2  # bound on the shrink factor after a rejection
# central differences: eps^(1/3) balances truncation and round-off
FD_STEP = float(np.finfo(float).eps ** (1.0 / 3.0))
cdef double _FD_STEP = FD_STEP
# halvings of [0, h] that reach the round-off of h (2**-52 < 2**-60)
cdef long BISECTIONS = 60
# a step below 16 ulps of t makes no progress in t (round-off)
cdef double MIN_STEP_ULPS = 16.0

# how `flight` ended: the block is full, t_end, an edge is due, no step after
# max_rejections, non-finite values at an accepted point
cpdef enum:
    FULL = 0
    REACHED = 1
    DUE = 2
    STUCK = 3
    NON_FINITE = 4


cdef class Rows:
    """Where a gradient's values go, for m rows (guards) of n states: dg/dx of
    row r at columns[starts[r]:starts[r + 1]], then dg/dt of each row (at
    nnz + r). With a sparsity (`mask`, m by n) a non-zero elsewhere is refused:
    `refuse(gx, t, x)` raises."""

    cdef readonly Py_ssize_t m, n, nnz
    cdef Py_ssize_t[::1] starts, columns
    cdef const unsigned char[:, ::1] mask
    cdef bint has_mask
    cdef object refuse

    def __init__(self, starts, columns, Py_ssize_t n, mask=None, refuse=None):
        self.starts = np.ascontiguousarray(starts, dtype=np.intp)
        self.columns = np.ascontiguousarray(columns, dtype=np.intp)
        self.m, self.n, self.nnz = self.starts.shape[0] - 1, n, self.columns.shape[0]
        self.has_mask = mask is not None
        if self.has_mask:
            self.mask = np.ascontiguousarray(mask, dtype=np.uint8)
        self.refuse = refuse

    @staticmethod
    def dense(Py_ssize_t m, Py_ssize_t n):
        """Every entry of m rows of n, in order."""
        return Rows(np.arange(m + 1) * n, np.tile(np.arange(n), m), n)

    cdef int write(self, const double* gx, const double* gt, double t, const double* x,
                   double* out) except -1:
        """Check dense dg/dx (m rows of n) and write it with dg/dt to out."""
        cdef Py_ssize_t r, i, k, n = self.n
        if self.has_mask:
            for r in range(self.m):
                for i in range(n):
                    if gx[r * n + i] != 0.0 and not self.mask[r, i]:
                        self.refuse(new_array(gx, self.m * n).reshape(self.m, n), t,
                                    new_array(x, n))
        for r in range(self.m):
            for k in range(self.starts[r], self.starts[r + 1]):
                out[k] = gx[r * n + self.columns[k]]
            out[self.nnz + r] = gt[r]
        return 0


cdef class CentralDifferences(Function):
    """dg/dx and dg/dt of the guards g by central differences of step FD_STEP
    max(1, |x_i|) (Nocedal and Wright, Sec. 8.1), in the layout of `rows`."""

    cdef Function g
    cdef Rows rows
    cdef double[::1] probe, up, down, gx, gt

    def __init__(self, Function g, Rows rows, str what):
        super().__init__(g.n_in, rows.nnz + rows.m, what)
        self.g, self.rows = g, rows
        n, m = max(g.n_in, 1), max(g.n_out, 1)
        self.probe, self.up, self.down = np.empty(n), np.empty(m), np.empty(m)
        self.gx, self.gt = np.empty(m * n), np.empty(m)

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t n = self.n_in, m = self.g.n_out, i, r
        cdef double d
        for i in range(n):
            self.probe[i] = x[i]
        for i in range(n):  # x with one component moved
            d = _FD_STEP * max(1.0, fabs(x[i]))
            self.probe[i] = x[i] + d
            self.g.call(t, &self.probe[0], &self.up[0])
            self.probe[i] = x[i] - d
            self.g.call(t, &self.probe[0], &self.down[0])
            for r in range(m):
                self.gx[r * n + i] = (self.up[r] - self.down[r]) / (2 * d)
            self.probe[i] = x[i]
        d = _FD_STEP * max(1.0, fabs(t))
        self.g.call(t + d, x, &self.up[0])
        self.g.call(t - d, x, &self.down[0])
        for r in range(m):
            self.gt[r] = (self.up[r] - self.down[r]) / (2 * d)
        return self.rows.write(&self.gx[0], &self.gt[0], t, x, out)


cdef class PythonGradient(Function):
    """A Python gradient fn(t, x) -> (dg/dx, m by n; dg/dt, m) as float64
    arrays, in the layout of `rows`; `sparse`: dg/dx as the nnz values."""

    cdef object fn
    cdef Rows rows
    cdef bint sparse

    def __init__(self, fn, Rows rows, str what, bint sparse=False):
        super().__init__(rows.n, rows.nnz + rows.m, what)
        self.fn, self.rows, self.sparse = fn, rows, sparse

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t k, nnz = self.rows.nnz
        cdef const double[::1] values
        cdef double[:, ::1] rows
        cdef double[::1] times
        gx, gt = self.fn(t, new_array(x, self.n_in))
        times = gt
        if self.sparse:
            values = gx
            for k in range(nnz):
                out[k] = values[k]
            for k in range(self.rows.m):
                out[nnz + k] = times[k]
            return 0
        rows = gx
        return self.rows.write(&rows[0, 0], &times[0], t, x, out)


cdef class Rates:
    """Each atom's Lie derivative dg/dx f + dg/dt (eq. 2) and gradient norm
    sum_i abs(dg/dx_i) eps_i, from gradient Functions (`parts`, with their
    `Rows`): atom a reads row row_of[a] of part part_of[a]."""

    cdef tuple parts
    cdef Py_ssize_t[::1] offsets, columns, col_lo, col_hi, val_lo, time_at
    cdef double[::1] values

    def __init__(self, parts, layouts, part_of, row_of):
        cdef Rows rows
        self.parts = tuple(parts)
        columns = [np.asarray((<Rows> rows).columns) for rows in layouts]
        column_starts = np.cumsum([0] + [len(c) for c in columns])
        offsets = np.cumsum([0] + [(<Function> part).n_out for part in self.parts])
        self.offsets = offsets[:-1].astype(np.intp)
        self.values = np.empty(max(offsets[-1], 1))
        self.columns = np.concatenate(columns or [np.empty(0)]).astype(np.intp)
        self.col_lo, self.col_hi, self.val_lo, self.time_at = np.empty(
            (4, len(part_of)), np.intp)
        for a, (p, r) in enumerate(zip(part_of, row_of)):
            rows = layouts[p]
            self.col_lo[a] = column_starts[p] + rows.starts[r]
            self.col_hi[a] = column_starts[p] + rows.starts[r + 1]
            self.val_lo[a] = offsets[p] + rows.starts[r]
            self.time_at[a] = offsets[p] + rows.nnz + r

    cdef int write(self, double t, const double* x, const double* f, double tol,
                   double rtol, double* lies, double* norms) except -1:
        """Write each atom's Lie derivative and norm at (t, x), f = dx/dt there."""
        cdef Py_ssize_t p, a, k, i
        cdef double total, size, d
        for p in range(len(self.parts)):
            (<Function> self.parts[p]).call(t, x, &self.values[self.offsets[p]])
        for a in range(self.col_lo.shape[0]):
            total, size = 0.0, 0.0
            for k in range(self.col_hi[a] - self.col_lo[a]):
                d = self.values[self.val_lo[a] + k]
                if d == 0.0:  # dense and sparse rows give the same bits
                    continue
                i = self.columns[self.col_lo[a] + k]
                total = total + d * f[i]
                size = size + fabs(d) * (tol + rtol * fabs(x[i]))
            lies[a], norms[a] = total + self.values[self.time_at[a]], size
        return 0


cdef class _Work


cdef class Bank:
    """A mode's right-hand side, its guards' atoms as one Function and each alone,
    their `rates` (None until needed) and the last flight's arrays. Per atom: its
    edge's `base` direction (-1, +1, 0 either), is its edge unilateral, its only
    atom, curved."""

    cdef readonly str name
    cdef readonly Py_ssize_t n, n_atoms, n_edges
    cdef Py_ssize_t widest
    cdef readonly Function rhs, guards
    cdef tuple singles
    cdef Py_ssize_t[::1] starts
    cdef double[::1] base
    cdef const unsigned char[::1] unilateral, single, curved
    cdef bint any_curved
    cdef public Rates rates
    cdef _Work spare

    def __init__(self, str name, Function rhs, Function guards, singles, owner, base,
                 unilateral, curved, Py_ssize_t n_edges):
        owner = np.asarray(owner, dtype=np.intp)
        self.name, self.rhs, self.guards = name, rhs, guards
        self.n, self.n_atoms, self.n_edges = rhs.n_in, guards.n_out, n_edges
        self.singles = tuple(singles)
        self.starts = np.searchsorted(owner, np.arange(n_edges + 1)).astype(np.intp)
        sizes = np.bincount(owner, minlength=n_edges)
        self.widest = max(sizes.max(initial=0), 1)
        self.base = np.ascontiguousarray(base, dtype=float)
        self.unilateral = np.ascontiguousarray(unilateral, dtype=np.uint8)
        self.single = (sizes[owner] == 1).astype(np.uint8)
        self.curved = np.ascontiguousarray(curved, dtype=np.uint8)
        self.any_curved = bool(np.any(curved))


ctypedef struct Settings:
    double tol, rtol, gamma, h, t_tol
    long max_rejections, max_order
    bint endpoint


cdef Settings settings_of(method):
    """A Unilateral's parameters as the loop reads them (None: gamma nan, t_tol inf)."""
    cdef Settings s
    s.tol, s.rtol, s.h = method.tol, method.rtol, method.h
    s.gamma = NAN if method.gamma is None else method.gamma
    s.t_tol = INFINITY if method.t_tol is None else method.t_tol
    s.max_rejections, s.max_order = method.max_rejections, method.max_order
    s.endpoint = method.endpoint
    return s


cdef class History:
    """The last MAX_ORDER nodes of a run, newest first (t, x, x', guards, Lie
    derivatives, gradient norms; `held` 0: start afresh), and at the newest each
    atom's orientation, c and levels (`set_levels`)."""

    cdef double[::1] ts, sign, c, final, level, beta, fine
    cdef bint has_fine
    cdef double[:, ::1] xs, fs, gs, lies, norms
    cdef readonly long held
    cdef double h_err
    cdef Py_ssize_t n

    def __init__(self, Bank bank):
        cdef Py_ssize_t n = max(bank.n, 1), a = max(bank.n_atoms, 1)
        self.n, self.ts = bank.n, np.zeros(MAX_ORDER)
        self.xs, self.fs = np.zeros((2, MAX_ORDER, n))
        self.gs, self.lies, self.norms = np.zeros((3, MAX_ORDER, a))
        self.sign, self.c, self.final, self.level = np.zeros((4, a))
        self.beta, self.fine = np.zeros((2, a))

    @property
    def t(self):
        """The newest node's time."""
        return self.ts[0]

    @property
    def x(self):
        """The newest node's state (a new array)."""
        return np.array(self.xs[0, :self.n])


cdef class _Work:
    """The arrays a flight writes: the predictor, the polynomials, x^p, f(x^p),
    x^c, f(x^c), g(x^c), a predicted state and its guards, `first_reach_in`'s
    scratch, and the Adams coefficients of the last nodes and step."""

    cdef double[::1] predictor, poly, xp, fp, xc, f, g, xq, values, scratch
    cdef double[::1] key, basis, weights
    cdef double u_key, constant
    cdef Py_ssize_t rows
    cdef long rejected
    cdef double t_stop

    def __init__(self, Bank bank):
        cdef Py_ssize_t n = max(bank.n, 1), a = max(bank.n_atoms, 1)
        self.predictor = np.zeros(MAX_WIDTH * n)
        self.poly = np.empty(a * MAX_WIDTH)
        self.xp, self.fp, self.xc, self.f, self.xq = np.empty((5, n))
        self.g, self.values = np.empty((2, a))
        self.scratch = np.empty(first_reach_scratch(bank.widest, MAX_WIDTH))
        self.key = np.full(MAX_ORDER + 1, NAN)
        self.basis = np.empty(MAX_ORDER * MAX_WIDTH)
        self.weights = np.empty(MAX_ORDER)


cdef void set_levels(Bank bank, Settings s, History memory) noexcept:
    """Each atom's c = sign g, final level, step level L and band beta (eqs.
    19-21, beta capped at |dc/dt| t_tol / 2, where eq. 20 no longer bounds the
    guard's move: the next step tests it against `fine`) at the newest node."""
    cdef Py_ssize_t a
    cdef double c, rate, beta, final, level
    memory.has_fine = False
    for a in range(bank.n_atoms):
        c, rate = memory.sign[a] * memory.gs[0, a], memory.sign[a] * memory.lies[0, a]
        beta = memory.norms[0, a] / _BAND_C
        if 0.5 * s.t_tol * fabs(rate) < beta:  # false for t_tol = inf (and nan)
            beta = 0.5 * s.t_tol * fabs(rate)
        final = -beta if bank.unilateral[a] else 0.0
        level = final if isnan(s.gamma) else min(s.gamma * c, final)
        if bank.single[a] and c >= level:  # inside the band moving away: no deeper
            level = max(c, 0.0)
        memory.c[a], memory.final[a], memory.level[a] = c, final, level
        memory.beta[a], memory.fine[a] = beta, max(beta, fabs(c))
        if memory.fine[a] < memory.norms[0, a] / _BAND_C:
            memory.has_fine = True


cdef Py_ssize_t next_due(Bank bank, Settings s, History memory,
                         Py_ssize_t first) noexcept:
    """The first edge from `first` on that is due at the newest node, or -1."""
    cdef Py_ssize_t e, a, closest
    cdef double g0, g1, gap
    cdef bint inside
    if s.endpoint and memory.held < 2:
        return -1
    for e in range(first, bank.n_edges):
        if s.endpoint:  # crossed between the last two nodes (max of the atoms)
            g0, g1 = memory.gs[1, bank.starts[e]], memory.gs[0, bank.starts[e]]
            for a in range(bank.starts[e] + 1, bank.starts[e + 1]):
                g0, g1 = max(g0, memory.gs[1, a]), max(g1, memory.gs[0, a])
            if guard_crossed(-bank.base[bank.starts[e]], g0, g1):
                return e
            continue
        closest, gap, inside = bank.starts[e], INFINITY, True  # all in their band
        for a in range(bank.starts[e], bank.starts[e + 1]):
            inside = inside and memory.c[a] >= memory.final[a] - memory.beta[a]
            if memory.c[a] - memory.final[a] < gap:
                closest, gap = a, memory.c[a] - memory.final[a]
        if inside and memory.sign[closest] * memory.lies[0, closest] >= 0.0:
            return e
    return -1


def due_edges(Bank bank, method, History memory):
    """Edges due at the newest node, in declaration order (`next_due`)."""
    due = []
    cdef Settings s = settings_of(method)
    cdef Py_ssize_t e = next_due(bank, s, memory, 0)
    while e >= 0:
        due.append(e)
        e = next_due(bank, s, memory, e + 1)
    return due


cdef bint beyond(Bank bank, History memory, const double* g) noexcept:
    """True if a unilateral edge not beyond at the newest node is beyond at g."""
    cdef Py_ssize_t e, a
    cdef bint before, after
    for e in range(bank.n_edges):
        if not bank.unilateral[bank.starts[e]]:
            continue
        before, after = True, True
        for a in range(bank.starts[e], bank.starts[e + 1]):
            before = before and memory.sign[a] * memory.gs[0, a] > 0.0
            after = after and memory.sign[a] * g[a] > 0.0
        if after and not before:
            return True
    return False


cdef double guard_error(Bank bank, History memory, _Work w, double t) except? -1.0:
    """The largest move of a guard from x^p to x^c (w.g) over `fine`."""
    cdef Py_ssize_t a
    cdef double worst = 0.0
    if not memory.has_fine:
        return 0.0
    bank.guards.call(t, &w.xp[0], &w.values[0])
    for a in range(bank.n_atoms):
        if w.g[a] != w.values[a]:  # fine may be 0 (on the surface at rest)
            worst = max(worst, fabs(w.g[a] - w.values[a]) / memory.fine[a])
    return worst


cdef void shift(double[:, ::1] rows, long keep) noexcept:
    """Move rows[:keep] to rows[1:keep + 1]."""
    memmove(&rows[1, 0], &rows[0, 0], keep * rows.shape[1] * sizeof(double))


cdef int push(Bank bank, Settings s, History memory, double t, const double* x,
              const double* f, const double* g) except -1:
    """Make (t, x) the newest node; 0 if a value there is not finite, else 1."""
    cdef Py_ssize_t n = bank.n, m = bank.n_atoms, i
    cdef long keep
    if not (all_finite(x, n) and all_finite(f, n) and all_finite(g, m)):
        return 0
    keep = min(memory.held, s.max_order - 1)
    memmove(&memory.ts[1], &memory.ts[0], keep * sizeof(double))
    shift(memory.xs, keep)  # each history array by name: no tuple of views
    shift(memory.fs, keep)
    shift(memory.gs, keep)
    shift(memory.lies, keep)
    shift(memory.norms, keep)
    memory.ts[0], memory.held = t, keep + 1
    for i in range(n):
        memory.xs[0, i], memory.fs[0, i] = x[i], f[i]
    for i in range(m):
        memory.gs[0, i], memory.lies[0, i], memory.norms[0, i] = g[i], 0.0, 0.0
    if s.endpoint or m == 0:
        return 1
    bank.rates.write(t, x, f, s.tol, s.rtol, &memory.lies[0, 0], &memory.norms[0, 0])
    return 1


cdef int start(Bank bank, Settings s, History memory, _Work w, double t,
               const double* x) except -1:
    """Fresh history at (t, x); 0 if a value there is not finite, else 1."""
    cdef Py_ssize_t a
    cdef double band, lie, g, moving, resting, either
    memory.held = 0
    bank.rhs.call(t, x, &w.f[0])
    if bank.n_atoms:
        bank.guards.call(t, x, &w.g[0])
    if not push(bank, s, memory, t, x, &w.f[0], &w.g[0]):
        return 0
    for a in range(bank.n_atoms):
        band = memory.norms[0, a] / _BAND_C
        lie, g = memory.lies[0, a], w.g[a]
        moving = -copysign(1.0, lie) if lie != 0.0 else -1.0
        resting = -copysign(1.0, g) if g != 0.0 else moving
        either = moving if fabs(g) <= 2 * band else resting
        memory.sign[a] = bank.base[a] if bank.base[a] != 0.0 else either
    if not s.endpoint:
        set_levels(bank, s, memory)
    memory.h_err = starting_step(x, &w.f[0], bank.n, s.tol, s.rtol, s.h)
    return 1


cdef double predictor_check(Bank bank, Settings s, History memory, _Work w,
                            double scale, double h) except? -1.0:
    """Shorten h until no curved unilateral guard is past its level at x^p."""
    cdef Py_ssize_t e, a
    cdef double lo, hi, mid, value
    cdef bint past
    cdef long _k
    write_prediction(&memory.xs[0, 0], bank.n, &w.predictor[0], w.rows, h / scale,
                     &w.xq[0])
    bank.guards.call(memory.ts[0] + h, &w.xq[0], &w.values[0])
    for e in range(bank.n_edges):
        past = True  # every atom of e past its level at the first h
        for a in range(bank.starts[e], bank.starts[e + 1]):
            past = past and bank.curved[a] and (
                memory.sign[a] * w.values[a] > memory.level[a])
        if past:
            lo, hi = 0.0, h
            for _k in range(BISECTIONS):  # keep the safe end of the bracket
                mid = 0.5 * (lo + hi)
                write_prediction(&memory.xs[0, 0], bank.n, &w.predictor[0], w.rows,
                                 mid / scale, &w.xq[0])
                for a in range(bank.starts[e], bank.starts[e + 1]):
                    (<Function> bank.singles[a]).call(memory.ts[0] + mid, &w.xq[0],
                                                      &value)
                    if not memory.sign[a] * value > memory.level[a]:
                        lo = mid
                        break
                else:
                    hi = mid  # every atom of e past its level at x^p(mid)
            h = min(h, lo)
    return h


cdef double limit(Bank bank, Settings s, History memory, _Work w, Py_ssize_t order,
                  double scale, double upper) noexcept:
    """First root in (0, upper] of P(u) = (c_k - L) + sum_j B_j(u) dc/dt_{k-j+1}
    (eq. 15) over the edges."""
    cdef Py_ssize_t e, a, k, j, width = order + 1, m = memory.lies.shape[1]
    cdef double u_max = upper / scale, u_star = INFINITY, rate, bound, power = 1.0
    cdef double weights[MAX_ORDER * MAX_WIDTH]  # scale B, zero beyond the order
    cdef double powers[MAX_WIDTH]  # u_max ** k as the bound multiplies it up
    cdef double p[MAX_WIDTH]  # one atom's P, coefficient by coefficient
    cdef const double* lies = &memory.lies[0, 0]
    cdef const double* row
    cdef bint reach
    for j in range(order):
        for k in range(MAX_WIDTH):
            weights[j * MAX_WIDTH + k] = (
                scale * w.basis[j * MAX_WIDTH + k] if k <= order else 0.0
            )
    for k in range(1, order + 1):
        power *= u_max
        powers[k] = power
    for e in range(bank.n_edges):
        reach = True  # else P < 0 on [0, upper] for an atom: no root there
        for a in range(bank.starts[e], bank.starts[e + 1]):
            for k in range(MAX_WIDTH):
                p[k] = 0.0
            for j in range(order):  # each coefficient sums over j in order
                rate, row = memory.sign[a] * lies[j * m + a], &weights[j * MAX_WIDTH]
                for k in range(MAX_WIDTH):
                    p[k] += row[k] * rate
            p[0] += memory.c[a] - memory.level[a]
            bound = p[0]
            for k in range(1, order + 1):
                bound += max(p[k], 0.0) * powers[k]
            reach = reach and bound >= 0.0
            for k in range(width):
                w.poly[a * width + k] = p[k]
        if reach:
            u_star = min(u_star, first_reach_in(
                &w.poly[bank.starts[e] * width], bank.starts[e + 1] - bank.starts[e],
                width, u_max, &w.scratch[0],
            ))
    return u_star * scale


cdef void basis_of(_Work w, History memory, Py_ssize_t m, double scale) noexcept:
    """The first m nodes (w.key[1:]) and their integral basis, if they changed."""
    cdef bint same = w.key[0] == m
    cdef Py_ssize_t j
    cdef double node
    for j in range(m):
        node = (memory.ts[j] - memory.ts[0]) / scale
        same = same and w.key[j + 1] == node
        w.key[j + 1] = node
    if not same:
        w.key[0] = m
        w.u_key = NAN  # the corrector's coefficients are stale
        write_basis(&w.key[1], m, &w.basis[0], MAX_WIDTH)


cdef int step(Bank bank, Settings s, History memory, _Work w, double t_end) except -1:
    """One accepted PECE step limited by the guards (Fig. 5): FULL, STUCK or
    NON_FINITE (w.t_stop, the state in w.xc)."""
    cdef Py_ssize_t n = bank.n, order = min(memory.held, s.max_order), i
    cdef double t0 = memory.ts[0], upper, scale, h_star, h_err, h, t, ratio, r, eps
    cdef double error, factor, grow, moved
    cdef const double* x0 = &memory.xs[0, 0]  # until push
    cdef long _k
    cdef int exponent
    upper = min(memory.h_err, s.h, t_end - t0)
    scale = upper
    if order > 1:
        scale = t0 - memory.ts[1]
        upper = min(upper, MAX_GROWTH * scale)
    basis_of(w, memory, order, scale)
    w.rows = order + 1
    write_predictor(&w.basis[0], MAX_WIDTH, order, &memory.fs[0, 0], n, scale,
                    &w.predictor[0])
    h_star = INFINITY if s.endpoint else limit(bank, s, memory, w, order, scale, upper)
    h_err, h = memory.h_err, min(h_star, upper)
    frexp(max(fabs(t0), 1.0), &exponent)  # ldexp(1, exponent - 53): t0's spacing
    for _k in range(s.max_rejections):
        if h <= MIN_STEP_ULPS * ldexp(1.0, exponent - 53):
            break  # the guard's level is reached within round-off but not due
        if not s.endpoint and bank.any_curved:
            h = predictor_check(bank, s, memory, w, scale, h)
        t = t_end if h >= t_end - t0 else t0 + h
        write_prediction(x0, n, &w.predictor[0], w.rows, h / scale, &w.xp[0])
        if w.u_key != h / scale:  # the corrector's weights and Milne's constant
            w.u_key = h / scale
            w.constant = corrector(&w.key[1], order, w.u_key, &w.weights[0])
        bank.rhs.call(t, &w.xp[0], &w.fp[0])
        correct(x0, n, &w.weights[0], order, &memory.fs[0, 0], scale, &w.fp[0],
                &w.xc[0])
        ratio = 0.0
        for i in range(n):
            eps = s.tol + s.rtol * fabs(x0[i])
            r = fabs(w.xp[i] - w.xc[i]) / eps
            ratio = r if (r > ratio or isnan(r)) else ratio
        error = w.constant * ratio
        if error > 1.0 or ratio > 1.0 / _BAND_C:
            w.rejected += 1
            factor = SAFETY * pow(max(error, ratio * _BAND_C), -1.0 / (order + 1))
            h_err = h * max(MIN_SHRINK, factor)
            h = min(h_star, h_err)
            continue
        if bank.n_atoms:
            bank.guards.call(t, &w.xc[0], &w.g[0])
        moved = 0.0 if s.endpoint else guard_error(bank, memory, w, t)
        if moved > 1.0:
            w.rejected += 1  # a guard moved more than its band or distance allows
            h_err = h * max(MIN_SHRINK, SAFETY * pow(moved, -1.0 / (order + 1)))
            h = min(h_star, h_err)
            continue
        error = max(error, moved)
        if not s.endpoint and beyond(bank, memory, &w.g[0]):
            w.rejected += 1  # a curved guard outran the band: halve
            h /= 2
            continue
        grow = min(MAX_GROWTH, SAFETY * pow(max(error, 1e-12), -1.0 / (order + 1)))
        bank.rhs.call(t, &w.xc[0], &w.f[0])
        if not push(bank, s, memory, t, &w.xc[0], &w.f[0], &w.g[0]):
            w.t_stop = t
            return NON_FINITE
        if not s.endpoint:
            set_levels(bank, s, memory)
        memory.h_err = h * grow if h >= h_err else max(h * grow, h_err)
        return FULL
    return STUCK


def flight(Bank bank, method, History memory, double t, x, double t_end,
           double reach_tol, long max_steps, double[::1] ts, double[:, ::1] xs):
    """Take `method`'s steps from the newest node (a fresh `start` at (t, x) for an
    empty history) until an edge is due, t_end (within reach_tol), max_steps or a
    stop, writing them to ts[:k], xs[:k]. Returns k, the end code, the rejected
    trials and, for NON_FINITE, the point with non-finite values."""
    cdef _Work w = bank.spare
    cdef Settings s = settings_of(method)
    cdef long k = 0, code = FULL
    cdef Py_ssize_t i
    point = np.zeros(max(bank.n, 1))
    point[:bank.n] = x
    cdef double[::1] start_x = point
    if w is None:
        w = _Work(bank)
    bank.spare = None  # a flight inside a callback builds its own
    w.key[0] = NAN  # the nodes and the corrector's coefficients are stale
    w.u_key, w.constant, w.rejected, w.t_stop = NAN, 0.0, 0, NAN
    try:
        if memory.held == 0 and not start(bank, s, memory, w, t, &start_x[0]):
            return 0, NON_FINITE, 0, t, np.array(start_x[:bank.n])
        while True:
            if next_due(bank, s, memory, 0) >= 0:
                code = DUE
                break
            if memory.ts[0] >= t_end - reach_tol:
                code = REACHED
                break
            if k >= max_steps:
                break
            code = step(bank, s, memory, w, t_end)
            if code != FULL:
                break
            ts[k] = memory.ts[0]
            for i in range(bank.n):
                xs[k, i] = memory.xs[0, i]
            k += 1
        if code == NON_FINITE:
            return k, code, w.rejected, w.t_stop, np.array(w.xc[:bank.n])
        return k, code, w.rejected, NAN, None
    finally:
        bank.spare = w
