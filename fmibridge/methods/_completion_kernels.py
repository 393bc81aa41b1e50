"""The numba kernel behind Completion's compiled run around Halving: the flights,
impacts, truncation tests, switches, constrained phases and lift-offs of a run
in one call.

`run` takes the attempts that `Completion._attempt` takes around
`Halving._attempt` (Illinois location), each with the kernel the Python path
calls for it, and compiles the Python code between them operation by
operation: `_halving_kernels.fly_and_fire` for a flight and its event,
`Completion._series`, `_truncates` and `_geometric` (the model-free test of
the module doc of `completion`) after each impact, `_check_resolution`,
`_switch`, `_contact_kernels.constrained_phase` for the constrained steps and
the lift-off, and `_leave`. It writes the samples and the events to arrays that
`Completion._compiled_run` hands to the Recorder.

An attempt whose outcome needs Python is undone and the call returns before it,
so Python takes it as it always does: a flight that stops without an event
before t_end (a dip, a bracket still wide, non-finite values), a reset that
fails its check, a constrained phase that is stuck or gives non-finite values,
an attempt that advances time by less than the watchdog's CRAWL_FRACTION of h
(the watchdog counts those, one by one, for its stall and crawl tests). The
call also returns after an event that makes ZENO_SERIES transitions of one
edge in a row (the watchdog looks at them), and when its buffers are full.
numba's cache does not see edits to another file: after changing
`_halving_kernels.py`, `_contact_kernels.py` or `flows/_kernels.py`, touch
this file.

References
----------
Or and Ames, Def. 7, Theorem 3 and Sec. V (the truncation, R* and the
constrained phase); Dowell and Jarratt, BIT 11 (1971) (the Illinois location).
"""

from __future__ import annotations

import numba
import numpy as np

from ..flows._kernels import rk_step
from . import _contact_kernels as contacts
from . import _halving_kernels as firing

# mode codes of the samples and events
FREE, LIFTED_MODE, CONSTRAINED = 0, 1, 2
# numbers: floats in, and the time and last constrained step in and out
(
    T, T_END, H, REACH, END_TOL, T_TOL, D, TOL, PHASE_T_TOL, LAM_CHANGE, E, EPS_T,
    EPS_Q, EPS_V, IS_LIMIT, LAST, LAST_EVENT_T, RATIO_SPREAD, SAFETY, CRAWL,
) = range(20)  # fmt: skip
N_NUMBERS = 20
# counts: integers in and out
(
    MODE, N_STEPS, N_REJECTED, N_SILENT, EVENTS_LEFT, MAX_STEPS, MAX_HALVINGS,
    PHASE_HALVINGS, RUN_CODE, RUN, ZENO_SERIES, N_SERIES, N_SAMPLES, N_EVENTS,
    N_ATTEMPTS, LIFT_CODE, ZENO_CODE, FIRED_EDGE, INNER_MAX_STEPS,
) = range(19)  # fmt: skip
N_COUNTS = 19
# outcomes of one attempt
DONE, UNDO, STOP = 0, 1, 2
BLOCK = 4096  # samples of one flight or phase, as `flows.compiled.BLOCK`
ROOM = 8  # samples an attempt needs besides its steps (events, switch)


@numba.njit(cache=True)
def _sample(samples, counts, t, x, mode, lam):
    """Append the sample (t, x) in `mode` with contact force lam (nan: none)."""
    ts, xs, modes, lams = samples
    k = counts[N_SAMPLES]
    ts[k], modes[k], lams[k] = t, mode, lam
    xs[k, :] = x
    counts[N_SAMPLES] = k + 1


@numba.njit(cache=True)
def _event(events, counts, numbers, t, code, source, x_before, x_after):
    """Append an event (its edge's name code, source and target mode, states)
    with no simultaneous edges; follow the run of one edge for the watchdog."""
    e_t, e_code, e_modes, e_x, _, e_n_group = events
    k = counts[N_EVENTS]
    e_t[k], e_code[k], e_n_group[k] = t, code, 0
    e_modes[k, 0], e_modes[k, 1] = source, -1
    e_x[k, 0, :] = x_before
    e_x[k, 1, :] = x_after
    counts[N_EVENTS] = k + 1
    counts[EVENTS_LEFT] -= 1
    counts[RUN] = counts[RUN] + 1 if code == counts[RUN_CODE] else 1
    counts[RUN_CODE] = code
    numbers[LAST_EVENT_T] = t


@numba.njit(cache=True)
def _norm_of_difference(u, v, index):
    """np.linalg.norm(u[index] - v[index]): the root of the sum of squares."""
    total = 0.0
    for k in range(index.shape[0]):
        d = u[index[k]] - v[index[k]]
        total += d * d
    return np.sqrt(total)


@numba.njit(cache=True)
def _geometric(contact, indices, series, n, numbers):
    """`Completion._geometric` on the last N_SERIES impacts (t, x, rate, x*)."""
    _, _, scalars = contact
    iq, iv = indices
    s_t, s_x, s_rate, s_star = series
    m = s_t.shape[0]
    if n < m:
        return False
    lo_interval, lo_rate, hi_ratio, lo_ratio = np.inf, np.inf, -np.inf, np.inf
    for k in range(m):
        lo_rate = min(lo_rate, abs(s_rate[k]))
        if k:
            lo_interval = min(lo_interval, s_t[k] - s_t[k - 1])
            ratio = abs(s_rate[k]) / abs(s_rate[k - 1])
            hi_ratio, lo_ratio = max(hi_ratio, ratio), min(lo_ratio, ratio)
    if lo_interval <= 0 or lo_rate <= 0 or s_t[m - 1] - s_t[m - 2] >= s_t[1] - s_t[0]:
        return False
    r = hi_ratio
    if r >= 1.0 or r - lo_ratio > numbers[RATIO_SPREAD]:
        return False
    a = -scalars[2](s_t[m - 1], s_star[m - 1])
    if not a > 0.0:
        return False
    s = numbers[SAFETY] * r / (1.0 - r)
    dq = _norm_of_difference(s_x[m - 1], s_x[m - 2], iq)
    dv = _norm_of_difference(s_star[m - 1], s_star[m - 2], iv)
    return (
        2.0 * abs(s_rate[m - 1]) / a * s < numbers[EPS_T]
        and dq * s < numbers[EPS_Q]
        and dv * s < numbers[EPS_V]
    )


@numba.njit(cache=True)
def _truncates(contact, indices, series, n, numbers):
    """`Completion._truncates` without bounds: the model-free test (e > 0) and
    condition (i), lam(R* x) > 0; R* of the last two impacts goes to s_star."""
    dynamics, project, _ = contact
    s_t, s_x, s_rate, s_star = series
    m = s_t.shape[0]
    e = numbers[E]
    if not (s_rate[m - 1] < 0 and e < 1.0):
        return False
    if e != 0.0 and n < m:
        return False  # `_geometric`'s first test
    s_star[m - 1, :] = project[0](s_t[m - 1], s_x[m - 1])
    if e != 0.0:
        s_star[m - 2, :] = project[0](s_t[m - 2], s_x[m - 2])
        if not _geometric(contact, indices, series, n, numbers):
            return False
    return dynamics[0](s_t[m - 1], s_star[m - 1], np.empty(s_x.shape[1])) > 0


@numba.njit(cache=True)
def _impact(contact, series, resolutions, counts, t, x):
    """Add the impact at (t, x) to the series (`Completion._series`) and its
    time resolution |h| / |hdot| (`Method.time_resolution`) to resolutions."""
    _, _, scalars = contact
    s_t, s_x, s_rate, _ = series
    m = s_t.shape[0]
    for k in range(m - 1):  # the newest last
        s_t[k], s_rate[k] = s_t[k + 1], s_rate[k + 1]
        s_x[k, :] = s_x[k + 1]
    rate = scalars[1](t, x)
    s_t[m - 1], s_rate[m - 1] = t, rate
    s_x[m - 1, :] = x
    gap = scalars[0](t, x)
    resolutions[counts[N_SERIES]] = abs(gap) / abs(rate) if rate else np.inf
    counts[N_SERIES] += 1


@numba.njit(cache=True)
def _switch(contact, tableau, series, numbers, counts, samples, events, x):
    """`Completion._switch`: apply R* to the truncating impact, carry it to the
    predicted Zeno time (switch='limit'), log "zeno" and write the state to x;
    return the switching time."""
    dynamics, project, scalars = contact
    a, b, c = tableau
    s_t, s_x, s_rate, s_star = series
    m = s_t.shape[0]
    t, e = s_t[m - 1], numbers[E]
    z = s_star[m - 1].copy()
    if numbers[IS_LIMIT] > 0 and e > 0.0:
        hddot = scalars[2](t, z)
        rest = 2.0 * e * abs(s_rate[m - 1]) / ((1.0 - e) * -hddot)
        rest = min(rest, numbers[T_END] - t)
        if rest > 0.0:
            slope = np.empty(z.shape[0])
            dynamics[0](t, z, slope)
            z = contacts.advance(dynamics[0], project[0], t, z, rest, a, b, c, slope)
            t += rest
    lam = dynamics[0](t, z, np.empty(z.shape[0]))
    _event(events, counts, numbers, t, counts[ZENO_CODE], FREE, s_x[m - 1], z)
    events[2][counts[N_EVENTS] - 1, 1] = CONSTRAINED
    _sample(samples, counts, t, z, CONSTRAINED, lam)
    x[:] = z
    return t


@numba.njit(cache=True)
def _flight(fns, edges, tableau, numbers, counts, x, samples, events, scratch):
    """One attempt of `Halving._attempt` in the free or lifted mode by
    `fly_and_fire`: the steps, and the event it fired (logged as `_fired`
    logs it). Returns DONE, or UNDO where Python must take the attempt, or
    STOP after steps that ended without an event before t_end (Python goes
    on from there); writes the new state to x and numbers[T]."""
    fs, gs, rs = fns
    sides, is_self_loop, is_beyond, codes, _ = edges
    a, b, c = tableau
    mode, t, n_x, n_g = counts[MODE], numbers[T], x.shape[0], sides.shape[0]
    room = samples[0].shape[0] - counts[N_SAMPLES] - ROOM
    limit = max(min(counts[INNER_MAX_STEPS] - counts[N_STEPS], BLOCK, room), 0)
    ts, xs, _ = scratch
    info = np.empty(firing.INFO_SIZE)
    bracket = (np.empty(n_x), np.empty((2, n_g)), np.empty(3))
    fired = (np.empty(n_x), np.empty(n_x), np.empty(n_g, dtype=np.int64))
    limits = (
        numbers[T_END], limit, numbers[REACH], numbers[T_TOL], counts[MAX_HALVINGS],
        numbers[D],
    )  # fmt: skip
    n = firing.fly_and_fire(
        fs, gs, rs, (sides, is_self_loop, is_beyond, a, b, c), t, x, numbers[H],
        limits, ts, xs, bracket, fired, info,
    )  # fmt: skip
    code = info[firing.CODE]
    has_fired = code == firing.FIRED or code == firing.SILENT
    if not has_fired and (code != firing.NONE or n == 0 or bracket[2][2] >= 0):
        return UNDO  # Python locates, halves, or raises for the reset
    for k in range(n):
        _sample(samples, counts, ts[k], xs[k], mode, np.nan)
    counts[N_STEPS] += n
    if n:
        numbers[T] = ts[n - 1]
        x[:] = xs[n - 1]
    if not has_fired:
        return DONE if n == limit or numbers[T] == numbers[T_END] else STOP
    x_event, x_after, group = fired
    t_event, i = info[firing.T_EVENT], int(info[firing.EDGE])
    counts[N_REJECTED] += int(info[firing.N_TRIALS])
    _sample(samples, counts, t_event, x_event, mode, np.nan)
    numbers[T], counts[FIRED_EDGE] = t_event, i
    if code == firing.SILENT:
        counts[N_SILENT] += 1
        counts[EVENTS_LEFT] -= 1
        x[:] = x_event
        return DONE
    _sample(samples, counts, t_event, x_after, FREE, np.nan)
    _event(events, counts, numbers, t_event, codes[i], mode, x_event, x_after)
    k, size = counts[N_EVENTS] - 1, int(info[firing.N_GROUP])
    events[2][k, 1] = FREE
    events[5][k] = size - 1
    for j in range(1, size):
        events[4][k, j - 1] = codes[group[j]]
    x[:] = x_after
    counts[MODE] = FREE
    return DONE


@numba.njit(cache=True)
def _phase(contact, tableau, numbers, counts, x, samples, events, scratch):
    """One attempt of `Completion._constrained_block`: constrained steps up to a
    lift-off (logged as `_lifted` logs it), t_end or the step bound. Returns
    DONE, or UNDO for a phase that is stuck or gives non-finite values."""
    dynamics, project, _ = contact
    a, b, c = tableau
    room = samples[0].shape[0] - counts[N_SAMPLES] - ROOM
    limit = min(counts[MAX_STEPS] - counts[N_STEPS], BLOCK, room)
    ts, xs, lams = scratch
    out = np.empty(contacts.OUT_SIZE)
    n = contacts.constrained_phase(
        dynamics[0], project[0], a, b, c, numbers[T], x, numbers[LAST], numbers[H],
        numbers[T_END], numbers[TOL], numbers[PHASE_T_TOL], numbers[REACH],
        numbers[LAM_CHANGE], counts[PHASE_HALVINGS], limit, ts, xs, lams, out,
    )  # fmt: skip
    status = out[contacts.STATUS]
    if status != contacts.LIFTED and status != contacts.STEPPED:
        return UNDO
    counts[N_STEPS] += n
    counts[N_REJECTED] += int(out[contacts.REJECTED])
    numbers[LAST] = out[contacts.LAST_STEP]
    for k in range(n):
        _sample(samples, counts, ts[k], xs[k], CONSTRAINED, lams[k])
    if n:
        numbers[T] = ts[n - 1]
        x[:] = xs[n - 1]
    if status == contacts.LIFTED:
        t = numbers[T]
        _event(events, counts, numbers, t, counts[LIFT_CODE], CONSTRAINED, x, x)
        events[2][counts[N_EVENTS] - 1, 1] = LIFTED_MODE
        _sample(samples, counts, t, x, LIFTED_MODE, np.nan)
        counts[MODE] = LIFTED_MODE
    return DONE


@numba.njit(cache=True)
def _leave(f, tableau, numbers, counts, x, samples):
    """`Completion._leave`: one plain step of h after a lift-off."""
    a, b, c = tableau
    t, t_end = numbers[T], numbers[T_END]
    hs = min(numbers[H], t_end - t)
    x[:] = rk_step(f, t, x, hs, a, b, c)
    numbers[T] = t_end if t + hs >= t_end - numbers[END_TOL] else t + hs
    counts[N_STEPS] += 1
    _sample(samples, counts, numbers[T], x, LIFTED_MODE, np.nan)


@numba.njit(cache=True)
def _attempt(free, lifted, contact, tableau, numbers, counts, x, out):
    """One attempt of `Completion._attempt` in the current mode (DONE, UNDO or
    STOP), with the impact series and its truncation test after an impact."""
    samples, events, series, resolutions, indices, scratch = out
    mode, t_start = counts[MODE], numbers[T]
    if mode == CONSTRAINED:
        return _phase(contact, tableau, numbers, counts, x, samples, events, scratch)
    is_lifted = mode == LIFTED_MODE
    if is_lifted and counts[RUN_CODE] == counts[LIFT_CODE]:
        if numbers[LAST_EVENT_T] == t_start:
            _leave(lifted[0][0][0], tableau, numbers, counts, x, samples)
            return DONE
    fns, edges = lifted if is_lifted else free
    n_events = counts[N_EVENTS]
    outcome = _flight(fns, edges, tableau, numbers, counts, x, samples, events, scratch)
    if outcome != DONE or counts[N_EVENTS] == n_events:
        return outcome
    if numbers[T] - t_start < numbers[CRAWL]:
        return UNDO  # the watchdog counts the attempts that may stall or crawl
    if is_lifted or not edges[4][counts[FIRED_EDGE]]:
        counts[N_SERIES] = 0  # anything but an impact ends the series
        return DONE
    k = counts[N_EVENTS] - 1
    _impact(contact, series, resolutions, counts, numbers[T], events[3][k, 0])
    if not _truncates(contact, indices, series, counts[N_SERIES], numbers):
        return DONE
    late = 0.0
    for j in range(counts[N_SERIES] - 1, -1, -1):  # as `_check_resolution` sums
        late += resolutions[j]
    if late > 0.5 * numbers[EPS_T]:
        return UNDO  # Python warns that the impacts are placed too coarsely
    numbers[LAST] = 0.0  # a new constrained phase starts from h
    numbers[T] = _switch(contact, tableau, series, numbers, counts, samples, events, x)
    counts[MODE], counts[N_SERIES] = CONSTRAINED, 0
    return DONE


@numba.njit(cache=True)
def run(
    fs, gs, rs, free_edges, lfs, lgs, lrs, lifted_edges, dynamics, project, scalars,
    rest,
):  # fmt: skip
    """Take `Completion._attempt`'s attempts until t_end, a bound, or an attempt
    that needs Python (module doc); return the attempts taken.

    fs, gs, rs and lfs, lgs, lrs: the typed lists of `compiled_mode` of the
    free and the lifted mode; free_edges, lifted_edges: (sides, is_self_loop,
    is_beyond, name codes, is_impact). dynamics, project, scalars:
    `CompiledContact.functions`.
    rest: (tableau (a, b, c), numbers, counts, x, out) with numbers and counts
    the run's state and parameters (slots named above) and x the state, in and
    out; out: (samples (t, x, mode, lam), events (t, name code, modes (source,
    target), states (before, after), simultaneous name codes, their number),
    the impact series (t, x, rate, R* x), the impacts' time resolutions,
    (q_index, v_index), scratch (t, x, lam) for BLOCK steps). Typed lists
    are passed one by one: numba types a tuple that holds them in Python,
    about 0.2 ms a call.
    """
    tableau, numbers, counts, x, out = rest
    free, lifted = ((fs, gs, rs), free_edges), ((lfs, lgs, lrs), lifted_edges)
    contact = (dynamics, project, scalars)
    ts, events = out[0][0], out[1][0]
    x_saved = np.empty_like(x)
    numbers_saved, counts_saved = numbers.copy(), counts.copy()
    for _ in range(ts.shape[0]):  # each attempt adds a sample at least
        if numbers[T] >= numbers[T_END] - numbers[END_TOL]:
            break
        if counts[N_STEPS] >= counts[MAX_STEPS] or counts[EVENTS_LEFT] <= 0:
            break
        if counts[RUN] >= counts[ZENO_SERIES]:
            break  # the watchdog looks at this series
        if ts.shape[0] - counts[N_SAMPLES] < 2 * ROOM:
            break
        if events.shape[0] - counts[N_EVENTS] < 2:
            break
        x_saved[:] = x
        numbers_saved[:] = numbers
        counts_saved[:] = counts
        t_start = numbers[T]
        outcome = _attempt(free, lifted, contact, tableau, numbers, counts, x, out)
        if outcome == UNDO or numbers[T] - t_start < numbers[CRAWL]:
            x[:] = x_saved
            numbers[:] = numbers_saved
            counts[:] = counts_saved
            break
        counts[N_ATTEMPTS] += 1
        if outcome == STOP:
            break
    return counts[N_ATTEMPTS]
