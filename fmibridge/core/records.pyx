"""The plain records a run passes between its Python layers and its compiled
kernels: `Status`, `Event`, `State`, `Rated`, `Waiting`, `Step`, the
tolerances `ON_SURFACE` and `TIME_RTOL`, and the errors `non_finite` and
`unstable`. The floor of the wall between Python and compiled code (DESIGN.md,
fourth round): it imports nothing of fmibridge but `core.errors`.
"""

import enum
import math

cimport cython
import numpy as np

from .errors import FmibridgeError

# |g| below this (SI units) counts as on the guard's surface: far above the
# round-off of a located crossing, far below any gap a model resolves.
ON_SURFACE = 1e-8
TIME_RTOL = 1e-9  # times closer than TIME_RTOL * h count as equal
# the key of the compiled forms a method keeps in a Mode's __dict__ (not pickled)
COMPILED_FORMS = "_compiled_forms"


class Status(enum.Enum):
    """Why a run stopped; each value is the message shown to the user (a
    stopped run's `Result.detail` adds the time and the guard or reset at fault)."""

    REACHED_END = "Reached t_end."
    MAX_STEPS = "Stopped after max_steps steps; raise max_steps or h."
    MAX_EVENTS = (
        "Stopped after max_events transitions; raise max_events, or continue a Zeno "
        "execution with completion (--zeno complete)."
    )
    NO_PROGRESS = (
        "Stopped: time does not advance. A guard or reset keeps the state where no "
        "step can be taken (named below), or h is too large; fix that guard or "
        "reset, or lower h."
    )
    ZENO = (
        "Stopped at a Zeno point: impacts accumulate (or the state sticks to a "
        "guard), which this method cannot pass. To continue, declare the contact "
        "(`[constraint]` gap, velocity and restitution in the adapter file, or "
        "HybridSystem(constraint=...)) and complete the execution (--zeno complete, "
        "or Completion(method))."
    )
    ZENO_NOT_TRUNCATED = (
        "Stopped at a Zeno point that completion did not truncate: the inner method "
        "did not resolve the impacts finely enough for completion's eps before "
        "where it placed them set their rates. Loosen completion's eps (a warning "
        "before the stop names the factor where it can), or have the inner method "
        "place the impacts closer to the surface (Unilateral's tol, Halving's "
        "t_tol, Relaxation's eps)."
    )
    TERMINATED = "The FMU ended the simulation (terminateSimulation)."
    STIFF = (
        "Stopped: the model is stiff for the explicit integrator (its steps are "
        "held by stability, not by the tolerance, and the span left would take "
        "too many); use an implicit one: integrator='cvode' (--integrator cvode)."
    )
    OVERSTEPPED = (
        "Stopped: a Co-Simulation step went beyond a guard, and the FMU can neither "
        "save its state nor reset to replay its steps, so the crossing cannot be "
        "located (the guard, the time and how far beyond are named below). Lower h, "
        "or use an FMU with state saving, fmiReset or Model Exchange."
    )
    INTERRUPTED = "Interrupted (Ctrl-C or SIGTERM); the samples up to here are kept."
    TIME_LIMIT = (
        "Stopped at its time limit (timeout); the samples up to here are kept. Raise "
        "the limit, or make the run cheaper (a larger h, a shorter span)."
    )
    FAILED = "Stopped by an error (see its message); the samples up to here are kept."

    @property
    def is_success(self):
        """True at t_end, or where the FMU itself ended the simulation."""
        return self in (Status.REACHED_END, Status.TERMINATED)


@cython.dataclasses.dataclass(frozen=True)
cdef class Event:
    """One discrete transition at time t: edge `edge` from mode `source` to
    `target`, state `x_before` on the guard and `x_after` the reset. Edges
    crossed within the time tolerance are `simultaneous` (they fire next if
    still crossed); `t_tol` is how closely t was located (nan: not stated)."""

    t: object
    edge: object
    source: object
    target: object
    x_before: object
    x_after: object
    simultaneous: object = ()
    t_tol: object = math.nan


@cython.dataclasses.dataclass(frozen=True)
cdef class State:
    """Where a run is: time, continuous state and mode name."""

    t: object
    x: object
    mode: object


@cython.dataclasses.dataclass(frozen=True)
cdef class Rated(State):
    """A State with its guards' rates dg/dt, dx/dt (the next step's first
    stage) and, under a tolerance, the adaptive stepper's next step."""

    rates: object = cython.dataclasses.field(default=None, repr=False, compare=False)
    slope: object = cython.dataclasses.field(default=None, repr=False, compare=False)
    h_next: object = cython.dataclasses.field(default=None, repr=False, compare=False)


@cython.dataclasses.dataclass(frozen=True)
cdef class Waiting(State):
    """A State on a relaxation strip whose wait outlasts the attempt: edge
    number `edge` (and the `others`) fires at `t_reset`, x held meanwhile
    (Burden et al., Fig. 12, Steps 13-14)."""

    t_reset: object = 0.0
    edge: object = 0
    others: object = ()


@cython.dataclasses.dataclass(frozen=True)
cdef class Step:
    """What one attempt produced: the next state, or a reason to stop and its
    detail."""

    state: object
    stop: object = None
    detail: object = ""


def non_finite(mode, t, x, g):
    """The error for a non-finite state (naming the flow) or guard value at (t, x)."""
    if not np.all(np.isfinite(x)):
        return FmibridgeError(
            f"Mode {mode.name!r}: the flow gives non-finite states {x.tolist()} at "
            f"t = {t!r} ({_describe(mode)}); check its right-hand side there."
        )
    names = dict(zip(mode.flow.state_names, x.tolist(), strict=True))
    bad = next(i for i, g_i in enumerate(g) if not math.isfinite(g_i))
    guard = mode.edges[bad].guard
    return FmibridgeError(
        f"Guard {guard.name!r} (`{name_of(guard.fn)}`) of mode {mode.name!r} "
        f"returned {g[bad]!r} at t = {t!r}, x = {names}; a guard must be finite "
        f"wherever the flow is defined."
    )


def unstable(name, scheme, mode, growth):
    """The error for fixed steps whose error estimates grow geometrically
    (`LocalErrors.add`), naming a step stable on the implied pole."""
    h = growth["h"]
    rate = scheme.pole_rate(h, growth["growth"])
    h_stable = scheme.stable_step(rate)
    return FmibridgeError(
        f"Mode {mode.name!r}: {name}'s {scheme.name} steps of h = {h:.3g} s "
        f"are unstable on this flow ({_describe(mode)}): the local error "
        f"estimate grew {growth['n_steps']} steps in a row, {growth['growth']:.3g} "
        f"times in the step to t = {growth['t']:.6g} s, as a pole of "
        f"{-rate:.4g} 1/s grows beyond {scheme.name}'s stability bound |h lambda| "
        f"<= {scheme.stability_boundary:.4g}. Steps of h <= {h_stable:.3g} s are "
        f"stable; or give a tolerance (rtol) with integrator='cvode' for a stiff "
        f"flow."
    )


def _describe(mode):
    return ", ".join(f"{k}={v}" for k, v in mode.flow.describe().items())


def name_of(fn):
    """The name of a function (or of its class) for messages."""
    return getattr(fn, "__name__", type(fn).__name__)
