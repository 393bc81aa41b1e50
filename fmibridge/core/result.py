"""Result of a run: samples, modes, event log, status and provenance.

The Recorder that methods write samples to keeps them in arrays within a
memory budget (SAMPLE_BUDGET_BYTES): a run that would exceed it keeps every
second sample, then every fourth, and so on, and warns. Inside `recording()` a
caller can still build the Result of a run that an error or Ctrl-C cut short.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import FmibridgeError, FmibridgeWarning

if TYPE_CHECKING:  # pandas is imported where a frame is made, not with fmibridge
    import pandas as pd

    from ._local_errors import LocalErrors
from .journal import Journal
from .outputs import write_atomically

# bytes of samples one run keeps, about 9.6 million samples of a two-state model
# (8 bytes per time and state, 4 per mode): beyond it the Recorder thins them.
SAMPLE_BUDGET_BYTES = 256 * 2**20
FIRST_CAPACITY = 1024  # samples; the arrays double from here up to the budget
MAX_GRAZES_LISTED = 20  # grazes written out in the provenance (all are counted)
REPR_NAMES = 6  # state names a Result's repr lists before it counts them instead


class Status(enum.Enum):
    """Why a run stopped; each value is the message shown to the user.

    A stopped run's `Result.detail` adds what the message cannot know: the time,
    the guard or reset at fault, and the events counted.
    """

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
    def is_success(self) -> bool:
        """True where the run ended as the model asked: at t_end, or where the
        FMU itself ended the simulation."""
        return self in (Status.REACHED_END, Status.TERMINATED)


@dataclass(frozen=True)
class Event:
    """One discrete transition.

    Attributes
    ----------
    t : float
        Time of the transition, s.
    edge : str
        Name of the edge that fired.
    source, target : str
        Modes before and after.
    x_before, x_after : ndarray
        State on the guard and after the reset.
    simultaneous : tuple of str
        Other edges whose guards were crossed within the time tolerance; they
        fire next if their guard is still crossed in the target mode.
    t_tol : float
        How closely the method located t, s (`Method.location_tolerance`:
        Halving's bracket t_tol, Relaxation's strip width eps); nan where not
        stated.
    """

    t: float
    edge: str
    source: str
    target: str
    x_before: np.ndarray
    x_after: np.ndarray
    simultaneous: tuple[str, ...] = ()
    t_tol: float = math.nan


@dataclass(frozen=True, repr=False)
class Result:
    """The outcome of one run, pandas-first and self-describing.

    Its repr is one line (status, span, states, samples, events, wall time);
    the arrays are behind the attributes below.

    Attributes
    ----------
    t : ndarray, shape (n_samples,)
        Sample times; an event adds two samples at its time (before, after).
    x : ndarray, shape (n_samples, n_states)
        States; time runs down the rows.
    mode : ndarray of str, shape (n_samples,)
    state_names : tuple of str
    events : tuple of Event
    status : Status
    stats : mapping
        n_steps (accepted), n_rejected, n_events, n_silent_events (FMU events
        that changed nothing).
    provenance : mapping
        Method and its parameters, system, library versions, wall time.
    outputs : mapping
        Extra columns aligned with `t` (for example the contact force `lam`).
    units : mapping
        The unit of each column that has one (an FMU's variables), for plots.
    detail : str
        For a run that stopped early: where and why, naming the guard, reset or
        function at fault ("" when it reached t_end).

    Examples
    --------
    >>> from fmibridge import Halving
    >>> from fmibridge.models import bouncing_ball
    >>> result = Halving(h=1e-2).run(bouncing_ball(), 1.0, t_eval=[0.0, 0.5, 1.0])
    >>> result["time"].round(6).tolist()  # the grid and the impact's two rows
    [0.0, 0.451524, 0.451524, 0.5, 1.0]
    >>> result.to_structured().dtype.names
    ('time', 'h', 'v')
    >>> result  # doctest: +ELLIPSIS
    <Result REACHED_END t = 0 .. 1 s, states h, v, 5 samples, 1 event, wall ... s>
    """

    t: np.ndarray
    x: np.ndarray
    mode: np.ndarray
    state_names: tuple[str, ...]
    events: tuple[Event, ...]
    status: Status
    stats: Mapping[str, int]
    provenance: Mapping[str, str]
    outputs: Mapping[str, np.ndarray] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""

    def __repr__(self) -> str:
        """One line: status, span, states, samples, events and wall time."""
        span = "no samples"
        if len(self.t):
            span = f"t = {self.t[0]:.6g} .. {self.t[-1]:.6g} s"
            t_end = self.provenance.get("t_end")
            if not self.status.is_success and t_end is not None:
                span += f" of {float(t_end):.6g}"
        names = list(self.state_names[:REPR_NAMES])
        if len(self.state_names) > REPR_NAMES:
            names.append(f"... ({len(self.state_names)} in all)")
        n_events = len(self.events)
        parts = [
            f"<Result {self.status.name} {span}",
            f"states {', '.join(names)}" if names else "no states",
            f"{len(self.t)} sample{'s' * (len(self.t) != 1)}",
            f"{n_events} event{'s' * (n_events != 1)}",
        ]
        if self.outputs:
            n_out = len(self.outputs)
            parts.insert(2, f"{n_out} output column{'s' * (n_out != 1)}")
        wall = self.provenance.get("wall_time_s")
        if wall is not None:
            parts.append(f"wall {float(wall):.3g} s")
        return ", ".join(parts) + ">"

    @property
    def message(self) -> str:
        """The status message, with the detail of a stopped run."""
        return f"{self.status.value} {self.detail}".rstrip()

    @property
    def columns(self) -> tuple[str, ...]:
        """The names of the numeric columns: the states, then the outputs."""
        return (*self.state_names, *self.outputs)

    def __getitem__(self, name: str) -> np.ndarray:
        """Return one column by name: 'time', a state or an output."""
        if name == "time":
            return self.t
        if name in self.state_names:
            return self.x[:, self.state_names.index(name)]
        if name in self.outputs:
            return self.outputs[name]
        raise KeyError(
            f"{name!r} is not in this Result; columns are {['time', *self.columns]}."
        )

    @property
    def event_times(self) -> np.ndarray:
        """The time of each event, s."""
        return np.array([e.t for e in self.events])

    def to_structured(self, columns: Sequence[str] | None = None) -> np.ndarray:
        """Return the samples as FMPy's result: a structured array with 'time' first.

        Parameters
        ----------
        columns : sequence of str, optional
            The columns after 'time' (default: every state, then every output).
        """
        names = list(self.columns if columns is None else columns)
        array = np.empty(len(self.t), dtype=[(n, np.float64) for n in ["time", *names]])
        for name in ["time", *names]:
            array[name] = self[name]
        return array

    def to_pandas(self) -> pd.DataFrame:
        """Return the samples as a DataFrame indexed by time."""
        import pandas as pd

        frame = pd.DataFrame(
            self.x, columns=list(self.state_names), index=pd.Index(self.t, name="time")
        )
        for name, values in self.outputs.items():
            frame[name] = values
        frame["mode"] = self.mode
        frame.attrs = {
            "status": self.status.name,
            "detail": self.detail,
            **self.provenance,
        }
        return frame

    def events_frame(self) -> pd.DataFrame:
        """Return the event log: one row per transition, states before and after."""
        import pandas as pd

        rows = []
        for e in self.events:
            row = {"time": e.t, "edge": e.edge, "source": e.source, "target": e.target}
            row.update(
                {
                    f"{n}_before": v
                    for n, v in zip(self.state_names, e.x_before, strict=True)
                }
            )
            row.update(
                {
                    f"{n}_after": v
                    for n, v in zip(self.state_names, e.x_after, strict=True)
                }
            )
            row["simultaneous"] = ";".join(e.simultaneous)
            row["t_tol"] = e.t_tol
            rows.append(row)
        columns = ["time", "edge", "source", "target"]
        columns += [f"{n}_before" for n in self.state_names]
        columns += [f"{n}_after" for n in self.state_names]
        columns += ["simultaneous", "t_tol"]
        return pd.DataFrame(rows, columns=columns)

    def to_csv(self, path: str | Path) -> Path:
        """Write the samples as CSV (a `time` column, one per state, `mode`).

        `pandas.read_csv(path, index_col="time")` reads it back identically. The
        file is written whole or not at all (`write_atomically`).
        """
        return write_atomically(path, self.to_pandas().to_csv)

    def events_to_csv(self, path: str | Path) -> Path:
        """Write the event log (`events_frame`) as CSV, whole or not at all."""
        frame = self.events_frame()
        return write_atomically(path, lambda p: frame.to_csv(p, index=False))

    def raise_for_status(self) -> Result:
        """Raise FmibridgeError if the run stopped before its end; else return
        this Result (so calls chain; the REPL shows its one-line repr)."""
        if not self.status.is_success:
            where = f"t = {float(self.t[-1])!r}" if len(self.t) else "its start"
            raise FmibridgeError(f"Run stopped at {where}: {self.message}")
        return self

    def plot(self, columns: Sequence[str] | None = None, *, axes=None):
        """Plot each column in its own subplot against time; return the axes.

        Each subplot's label carries the column's unit, and thin grey lines
        mark the events.

        Parameters
        ----------
        columns : sequence of str, optional
            The columns to draw (default: every state, then every output).
        axes : sequence of matplotlib Axes, optional
            One per column; by default a new figure with one subplot each.
        """
        import matplotlib.pyplot as plt

        names = list(self.columns if columns is None else columns)
        if axes is None:
            _, axes = plt.subplots(
                len(names),
                1,
                sharex=True,
                squeeze=False,
                figsize=(6, 1 + 1.6 * len(names)),
            )
            axes = axes[:, 0]
        for ax, name in zip(axes, names, strict=True):
            ax.plot(self.t, self[name])
            unit = self.units.get(name)
            ax.set_ylabel(f"{name} / {unit}" if unit else name)
            for e in self.events:
                ax.axvline(e.t, color="0.85", lw=0.5, zorder=0)
        axes[-1].set_xlabel("time / s")
        return axes


def events_path(path: str | Path) -> Path:
    """The event log's file beside a samples CSV: ball.csv -> ball.events.csv."""
    path = Path(path)
    return path.with_name(path.stem + ".events.csv")


_RECORDING: contextvars.ContextVar[Recording | None] = contextvars.ContextVar(
    "fmibridge_recording", default=None
)


class Recording:
    """The samples of the latest run started inside `recording()`, and the
    journal its Recorder streams them to (if any)."""

    def __init__(self, journal: Journal | None = None) -> None:
        self.recorder: Recorder | None = None
        self.journal = journal

    def result(self, status: Status, provenance: Mapping[str, str]) -> Result | None:
        """The Result of the samples so far, with `status`; None if there are none."""
        if self.recorder is None or self.recorder.n_samples == 0:
            return None
        return self.recorder.result(status, provenance)


@contextlib.contextmanager
def recording(journal: Journal | None = None) -> Iterator[Recording]:
    """Keep hold of the samples of a run, to save them if it is cut short.

    With a `journal`, the run's Recorder also appends them to it as they come,
    for a supervising process to replay if this one dies (`core.journal`).

    Examples
    --------
    >>> with recording() as rec:  # a run cut short after its first sample
    ...     log = Recorder(("h",))
    ...     log.sample(0.0, np.array([1.0]), "flight")
    >>> rec.result(Status.INTERRUPTED, {}).t
    array([0.])
    """
    record = Recording(journal)
    token = _RECORDING.set(record)
    try:
        yield record
    finally:
        _RECORDING.reset(token)


# (t, x, mode) -> (extra column values, events as (t, name, x_before, x_after) and
# optionally the extra columns before and after)
Observer = Callable[[float, np.ndarray, str], tuple[Mapping[str, float], tuple]]


class Recorder:
    """Collects samples and events during a run and builds the Result.

    An `observer(t, x, mode)` returns, for each sample, the values of extra
    columns (an FMU's outputs, read where the sample is taken) and the events
    the flow handled itself inside the step that ended there (an FMU's own
    events in Co-Simulation), which are logged before the sample.

    Samples are rows (t, x, outputs) of one float array and a mode code each,
    grown by doubling up to SAMPLE_BUDGET_BYTES. When the budget is full, every
    second row kept is dropped and from then on only every `stride`-th sample
    is kept (stride 2, 4, ...); the latest sample is always kept, and events
    are logged exactly.
    """

    def __init__(
        self,
        state_names: tuple[str, ...],
        output_names: tuple[str, ...] = (),
        observer: Observer | None = None,
    ):
        self.state_names = state_names
        self.output_names = output_names
        self.observer = observer
        self.warnings: list[str] = []
        self._warned: set = set()
        # the run's step error estimates (Method.run)
        self.local_errors: LocalErrors | None = None
        self.events: list[Event] = []
        self.n_steps = 0
        self.n_rejected = 0
        self.n_silent_events = 0
        self.grazes: list[tuple[float, str, float]] = []  # (t, edge, v_n) (`Edge`)
        self.stride = 1  # keep the samples whose number is a multiple of this
        self._x_end = 1 + len(state_names)  # columns: t, x, outputs
        width = self._x_end + len(output_names)
        self._max_rows = max(4, SAMPLE_BUDGET_BYTES // (8 * width + 4))
        self._rows = np.empty((min(FIRST_CAPACITY, self._max_rows), width))
        self._modes = np.empty(len(self._rows), dtype=np.int32)
        self._mode_codes: dict[str, int] = {}
        self._n = 0  # rows kept
        self._n_seen = 0  # samples offered
        self._has_tail = False  # row _n holds the latest sample, not kept
        record = _RECORDING.get()
        if record is not None:
            record.recorder = self
        self._journal = None if record is None else record.journal
        if self._journal is not None:
            self._journal.begin(state_names, output_names)

    def sample(self, t: float, x: np.ndarray, mode: str, **outputs: float) -> None:
        """Record the state at time t."""
        if self.observer is not None:
            observed, events = self.observer(t, x, mode)
            for t_event, name, x_before, x_after, *outputs_around in events:
                before, after = outputs_around or ({}, {})
                self._append(t_event, x_before, mode, before)
                self._append(t_event, x_after, mode, after)
                self.event(Event(t_event, name, mode, mode, x_before, x_after))
            outputs = {**observed, **outputs}
        self._append(t, x, mode, outputs)

    def _append(self, t: float, x: np.ndarray, mode: str, outputs) -> None:
        if self.stride == 1 and self._n + 2 <= len(self._rows):  # `_extend`, in place
            row = self._rows[self._n]
            self._modes[self._n] = self._code(mode)
            self._n += 1
            self._n_seen += 1
            self._has_tail = False
        else:
            row = np.empty(self._rows.shape[1])
        self._fill(row, t, x, outputs)
        if row.base is not self._rows:
            self._extend(row[np.newaxis], mode)
        else:
            self._journaled(self._n - 1)

    def _fill(self, row: np.ndarray, t: float, x: np.ndarray, outputs) -> None:
        """Write one sample into `row`: t, x, the outputs (missing ones nan)."""
        row[0] = t
        row[1 : self._x_end] = x
        if outputs:
            row[self._x_end :] = [outputs.get(n, np.nan) for n in self.output_names]
        else:
            row[self._x_end :] = np.nan

    def samples(
        self, t: np.ndarray, x: np.ndarray, mode: str, **outputs: np.ndarray
    ) -> None:
        """Record a block of samples in one mode (rows of x), with outputs as
        arrays of the same length (missing ones nan)."""
        if self.observer is not None:
            for k, (t_k, x_k) in enumerate(zip(t.tolist(), x, strict=True)):
                self.sample(t_k, x_k, mode, **{n: v[k] for n, v in outputs.items()})
            return
        n = len(t)
        in_place = self.stride == 1 and self._n + n + 1 <= len(self._rows)
        block = (
            self._rows[self._n : self._n + n]
            if in_place
            else np.empty((n, self._rows.shape[1]))
        )
        block[:, 0] = t
        block[:, 1 : self._x_end] = x.reshape(n, -1)
        for i, name in enumerate(self.output_names):
            block[:, self._x_end + i] = outputs.get(name, np.nan)
        if not in_place:
            self._extend(block, mode)
            return
        self._modes[self._n : self._n + n] = self._code(mode)
        self._n += n
        self._n_seen += n
        self._has_tail = False
        self._journaled(self._n - n)

    def coded_samples(
        self,
        t: np.ndarray,
        x: np.ndarray,
        codes: np.ndarray,
        modes: Sequence[str],
        **outputs: np.ndarray,
    ) -> None:
        """Record a block of samples in several modes: row k in modes[codes[k]]
        (`samples`, once per run of one mode where the rows do not fit in place)."""
        n = len(t)
        if self.observer is not None or not (
            self.stride == 1 and self._n + n + 1 <= len(self._rows)
        ):
            cuts = [0, *(np.flatnonzero(np.diff(codes)) + 1).tolist(), n]
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                parts = {name: v[a:b] for name, v in outputs.items()}
                self.samples(t[a:b], x[a:b], modes[codes[a]], **parts)
            return
        lookup = np.array([self._code(m) for m in modes], dtype=np.int32)
        block = self._rows[self._n : self._n + n]
        block[:, 0] = t
        block[:, 1 : self._x_end] = x
        for i, name in enumerate(self.output_names):
            block[:, self._x_end + i] = outputs.get(name, np.nan)
        self._modes[self._n : self._n + n] = lookup[codes]
        self._n += n
        self._n_seen += n
        self._has_tail = False
        self._journaled(self._n - n)

    def event(self, event: Event) -> None:
        """Record a transition and its before/after samples."""
        self.events.append(event)
        if self._journal is not None:
            self._journal.event(event)

    def graze(self, t: float, edge: str, approach: float) -> None:
        """Log a crossing whose impact reset did not apply: the contact was not
        approaching (`Edge.approach` >= 0)."""
        self.grazes.append((t, edge, approach))

    def warn(self, message: str) -> None:
        """Warn now (FmibridgeWarning) and keep the message in the provenance."""
        self.warnings.append(message)
        warnings.warn(message, FmibridgeWarning, stacklevel=4)

    def warn_once(self, key: object, message: str) -> None:
        """`warn` that the run may be inaccurate, once per key."""
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    @property
    def is_journaled(self) -> bool:
        """True if the samples stream to a journal: a loop that gathers them in
        blocks hands each over at once, for the journal to outlive a crash."""
        return self._journal is not None

    @property
    def n_samples(self) -> int:
        """Samples held (after thinning)."""
        return self._n + self._has_tail

    def result(
        self, status: Status, provenance: Mapping[str, str], detail: str = ""
    ) -> Result:
        """Build the Result of the samples so far."""
        n = self.n_samples
        rows = self._rows[:n]
        names = np.array(list(self._mode_codes), dtype=object)
        provenance = dict(provenance)
        if self.warnings:
            provenance["warnings"] = " | ".join(self.warnings)
        if self.stride > 1:
            provenance["sample_stride"] = str(self.stride)
        stats = {
            "n_steps": self.n_steps,
            "n_rejected": self.n_rejected,
            "n_events": len(self.events),
            "n_silent_events": self.n_silent_events,
        }
        if self.grazes:
            stats["n_grazes"] = len(self.grazes)
            provenance["grazes"] = "; ".join(
                f"t = {t:.9g} s {edge} (v_n = {v:.3g})"
                for t, edge, v in self.grazes[:MAX_GRAZES_LISTED]
            ) + ("; ..." if len(self.grazes) > MAX_GRAZES_LISTED else "")
        return Result(
            t=rows[:, 0].copy(),
            x=rows[:, 1 : self._x_end].copy(),
            mode=names[self._modes[:n]] if n else np.array([], dtype=object),
            state_names=self.state_names,
            events=tuple(self.events),
            status=status,
            stats=stats,
            provenance=provenance,
            outputs={
                name: rows[:, self._x_end + i].copy()
                for i, name in enumerate(self.output_names)
            },
            detail=detail,
        )

    def finish(
        self, status: Status, provenance: Mapping[str, str], detail: str = ""
    ) -> Result:
        """Build the Result, warning once if the run stopped early or was thinned."""
        if self.stride > 1:
            self.warn(
                f"Kept every {self.stride}th of the run's {self._n_seen} samples "
                f"({self.n_samples}) to stay within the sample budget of "
                f"{SAMPLE_BUDGET_BYTES / 2**20:.3g} MiB; the events are logged "
                f"exactly. Raise h or shorten the run to keep every sample."
            )
        self._warn_only_grazes()
        result = self.result(status, provenance, detail)
        if not status.is_success:
            t_last = result.t[-1] if len(result.t) else float("nan")
            warnings.warn(
                f"Run stopped at t = {t_last:.6g} s: {result.message}",
                FmibridgeWarning,
                stacklevel=3,
            )
        return result

    def _warn_only_grazes(self) -> None:
        """Warn of an edge whose crossings were all grazes (`Edge.approach` >= 0)
        and never an impact: an `approach` of the wrong sign makes every impact
        a graze, which nothing else would show."""
        fired = {event.edge for event in self.events}
        counts: dict[str, int] = {}
        for _, edge, _ in self.grazes:
            if edge not in fired:
                counts[edge] = counts.get(edge, 0) + 1
        for edge, n in counts.items():
            self.warn(
                f"edge {edge!r}: all its {n} crossing(s) were grazes (its `approach`, "
                f"the contact's normal velocity, was >= 0 each time) and none an "
                f"impact. If the bodies did collide, the approach has the wrong "
                f"sign: it must be negative while the contact closes."
            )

    def _extend(self, block: np.ndarray, mode: str) -> None:
        """Keep the rows of `block` whose sample number is a multiple of the stride."""
        code = self._code(mode)
        while len(block):
            if self._n + 2 > len(self._rows):
                self._make_room()
            room = len(self._rows) - 1 - self._n  # one row is left for the tail
            chunk, block = block[: room * self.stride], block[room * self.stride :]
            kept = chunk[(-self._n_seen) % self.stride :: self.stride]
            self._rows[self._n : self._n + len(kept)] = kept
            self._modes[self._n : self._n + len(kept)] = code
            self._n += len(kept)
            self._n_seen += len(chunk)
            self._journaled(self._n - len(kept))
            self._has_tail = (self._n_seen - 1) % self.stride != 0
            if self._has_tail:
                self._rows[self._n], self._modes[self._n] = chunk[-1], code
                self._journal_latest(chunk[-1], code)

    def _code(self, mode: str) -> int:
        """The number of `mode` in this run (a new one is journaled)."""
        code = self._mode_codes.get(mode)
        if code is None:
            code = self._mode_codes[mode] = len(self._mode_codes)
            if self._journal is not None:
                self._journal.mode(mode)
        return code

    def _journaled(self, start: int) -> None:
        """Journal the rows kept from `start` on (the last ones), if journaling."""
        if self._journal is not None and start < self._n:
            self._journal.rows(
                self._rows[start : self._n],
                self._modes[start : self._n],
                self.n_steps,
                self.n_rejected,
            )

    def _journal_latest(self, row: np.ndarray, code: int) -> None:
        """Journal the latest sample, not kept (yet), if journaling."""
        if self._journal is not None:
            self._journal.latest(row, code)

    def _make_room(self) -> None:
        """Double the arrays, or, at the budget, drop every second row kept."""
        n = self._n + self._has_tail
        if len(self._rows) < self._max_rows:
            size = min(2 * len(self._rows), self._max_rows)
            self._rows = np.concatenate(
                [self._rows[:n], np.empty((size - n, self._rows.shape[1]))]
            )
            self._modes = np.concatenate(
                [self._modes[:n], np.empty(size - n, np.int32)]
            )
            return
        latest = self._n if self._has_tail else self._n - 1
        row, code = self._rows[latest].copy(), self._modes[latest]
        kept = (self._n + 1) // 2
        self._rows[:kept] = self._rows[0 : self._n : 2]
        self._modes[:kept] = self._modes[0 : self._n : 2]
        self._n, self.stride = kept, 2 * self.stride
        self._has_tail = (self._n_seen - 1) % self.stride != 0
        if self._has_tail:
            self._rows[kept], self._modes[kept] = row, code
