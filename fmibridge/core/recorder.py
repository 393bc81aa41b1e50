"""The Recorder a method writes its samples and events to, and that builds the
Result; `recording()` keeps the samples of a run cut short.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .errors import FmibridgeWarning
from .records import Event, Status
from .result import Result

if TYPE_CHECKING:  # a journal is made by `core.supervision`, not with a run
    from ._local_errors import LocalErrors
    from .journal import Journal

# bytes of samples one run keeps, about 9.6 million samples of a two-state model
# (8 bytes per time and state, 4 per mode): beyond it the Recorder thins them.
SAMPLE_BUDGET_BYTES = 256 * 2**20
FIRST_CAPACITY = 1024  # samples; the arrays double from here up to the budget
MAX_GRAZES_LISTED = 20  # grazes written out in the provenance (all are counted)

_RECORDING: contextvars.ContextVar[Recording | None] = contextvars.ContextVar(
    "fmibridge_recording", default=None
)


class Recording:
    """The latest run started inside `recording()`, and its journal (if any)."""

    def __init__(self, journal: Journal | None = None) -> None:
        self.recorder: Recorder | None = None
        self.journal = journal

    def result(
        self, status: Status, provenance: Mapping[str, str], detail: str = ""
    ) -> Result | None:
        """The Result of the samples so far; None if there are none."""
        if self.recorder is None or self.recorder.n_samples == 0:
            return None
        return self.recorder.result(status, provenance, detail)


@contextlib.contextmanager
def recording(journal: Journal | None = None) -> Iterator[Recording]:
    """Keep hold of the samples of a run, to save them if it is cut short
    (with a `journal`, also streamed to it: `core.journal`).

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
# optionally the extra columns before and after; name None: a silent event, one
# that changed neither, counted in `n_silent_events`)
Observer = Callable[[float, np.ndarray, str], tuple[Mapping[str, float], tuple]]


class Recorder:
    """Collects samples and events during a run and builds the Result.

    An `observer(t, x, mode)` returns, per sample, extra columns (an FMU's
    outputs) and the flow's own events in the step. Beyond SAMPLE_BUDGET_BYTES
    only every `stride`-th sample is kept (2, 4, ...), the latest always.
    """

    # an event's rows may come in a block (not where only some rows are kept)
    blocks_event_rows: bool = True
    # a compiled loop that fires transitions returns after each one (Completion)
    each_transition: bool = False

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
        self.local_errors: LocalErrors | None = None
        self.events: list[Event] = []
        self.n_steps = 0
        self.n_rejected = 0
        self.n_silent_events = 0
        self.grazes: list[tuple[float, str, float]] = []  # (t, edge, v_n) (`Edge`)
        self._rate_grazes: set[str] = set()  # edges whose v_n was the guard's rate
        self.units: dict[str, str] = {}  # of the columns, for the Result
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
        # a loop that gathers samples in blocks hands each over at once
        self.is_journaled = self._journal is not None
        if self._journal is not None:
            self._journal.begin(state_names, output_names)

    def sample(self, t: float, x: np.ndarray, mode: str, **outputs: float) -> None:
        """Record the state at time t."""
        if self.observer is not None:
            observed, events = self.observer(t, x, mode)
            for t_event, name, x_before, x_after, *outputs_around in events:
                if name is None:  # an FMU event that changed nothing read here
                    self.n_silent_events += 1
                    continue
                before, after = outputs_around or ({}, {})
                self._append(t_event, x_before, mode, before)
                self._append(t_event, x_after, mode, after)
                self.event(Event(t_event, name, mode, mode, x_before, x_after))
            outputs = {**observed, **outputs}
        self._append(t, x, mode, outputs)

    def _append(self, t: float, x: np.ndarray, mode: str, outputs) -> None:
        n = self._n
        if self.stride == 1 and n + 2 <= len(self._rows):  # `_extend`, in place
            row = self._rows[n]
            code = self._mode_codes.get(mode)
            self._modes[n] = self._code(mode) if code is None else code
            self._fill(row, t, x, outputs)
            self._n, self._n_seen, self._has_tail = n + 1, self._n_seen + 1, False
            if self._journal is not None:
                self._journaled(n)
            return
        row = np.empty(self._rows.shape[1])
        self._fill(row, t, x, outputs)
        self._extend(row[np.newaxis], mode)

    def _fill(self, row: np.ndarray, t: float, x: np.ndarray, outputs) -> None:
        """Write one sample into `row`: t, x, the outputs (missing ones nan)."""
        row[0] = t
        row[1 : self._x_end] = x
        if outputs:
            row[self._x_end :] = [outputs.get(n, np.nan) for n in self.output_names]
        elif self.output_names:
            row[self._x_end :] = np.nan

    def samples(
        self, t: np.ndarray, x: np.ndarray, mode: str, **outputs: np.ndarray
    ) -> None:
        """Record a block of samples in one mode (rows of x; outputs alike)."""
        if self.observer is not None:
            for k, (t_k, x_k) in enumerate(zip(t.tolist(), x, strict=True)):
                self.sample(t_k, x_k, mode, **{n: v[k] for n, v in outputs.items()})
            return
        self.read_samples(t, x, mode, outputs)

    def read_samples(
        self, t: np.ndarray, x: np.ndarray, mode: str, outputs: Mapping[str, np.ndarray]
    ) -> None:
        """Record a block of samples with their outputs (missing ones nan),
        without asking the observer (a compiled loop's)."""
        n = len(t)
        in_place = self.stride == 1 and self._n + n + 1 <= len(self._rows)
        width = self._rows.shape[1]
        block = self._rows[self._n : self._n + n] if in_place else np.empty((n, width))
        block[:, 0] = t
        block[:, 1 : self._x_end] = x.reshape(n, -1)
        for i, name in enumerate(self.output_names):
            block[:, self._x_end + i] = outputs.get(name, np.nan)
        self._extend(block, mode)  # in place: the rows are where they go

    def coded_rows(
        self, rows: np.ndarray, codes: np.ndarray, modes: Sequence[str]
    ) -> None:
        """Record whole rows (t, x, outputs), row k in mode modes[codes[k]]."""
        starts = np.flatnonzero(np.diff(codes, prepend=-1)).tolist()
        for a, b in zip(starts, [*starts[1:], len(rows)], strict=True):
            self._extend(rows[a:b], modes[codes[a]])

    def event(self, event: Event) -> None:
        """Record a transition and its before/after samples."""
        self.events.append(event)
        if self._journal is not None:
            self._journal.event(event)

    def graze(
        self, t: float, edge: str, approach: float, is_given: bool = True
    ) -> None:
        """Log a crossing whose impact reset did not apply (v_n >= 0, from
        `Edge.approach` if `is_given`, else the guard's own rate)."""
        self.grazes.append((t, edge, approach))
        if not is_given:
            self._rate_grazes.add(edge)

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
            units=dict(self.units),
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
        """Warn of an edge that only grazed (an `approach` of the wrong sign?)."""
        fired = {event.edge for event in self.events} | self._rate_grazes
        counts = Counter(edge for _, edge, _ in self.grazes if edge not in fired)
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
                if self._journal is not None:
                    self._journal.latest(chunk[-1], code)

    def _code(self, mode: str) -> int:
        """The number of `mode` in this run (a new one is journaled)."""
        code = self._mode_codes.get(mode)
        if code is None:
            code = self._mode_codes[mode] = len(self._mode_codes)
            if self._journal is not None:
                self._journal.mode(mode)
        return code

    def _journaled(self, start: int) -> None:
        """Journal the rows kept from `start` on, if journaling."""
        if self._journal is not None and start < self._n:
            self._journal.rows(
                self._rows[start : self._n],
                self._modes[start : self._n],
                self.n_steps,
                self.n_rejected,
            )

    def _make_room(self) -> None:
        """Double the arrays, or, at the budget, drop every second row kept."""
        n = self._n + self._has_tail
        if len(self._rows) < self._max_rows:
            size = min(2 * len(self._rows), self._max_rows)
            self._rows = np.resize(self._rows[:n], (size, self._rows.shape[1]))
            self._modes = np.resize(self._modes[:n], size)
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
