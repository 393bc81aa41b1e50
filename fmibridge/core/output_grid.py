"""The output grid: the times at which a run keeps its samples.

A Method given `t_eval` ends a step on each of these times (as FMPy does) and
keeps only the samples there, the two rows of each event and the last sample.
"""

from __future__ import annotations

import array
import bisect
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from ._grid import next_after
from .errors import FmibridgeError
from .numbers import is_real
from .recorder import Recorder
from .records import Status
from .result import Result


class OutputGrid:
    """Output times: finite, strictly increasing, inside [t0, t_end] (or raise).

    Examples
    --------
    >>> grid = OutputGrid([0.0, 0.5, 1.0], 0.0, 1.0)
    >>> grid.next_after(0.5, 1e-12), grid.has(0.5 + 1e-13, 1e-12)
    (1.0, 0.5)
    """

    def __init__(self, times: ArrayLike, t0: float, t_end: float) -> None:
        t = np.ascontiguousarray(times if is_real(times) else [], dtype=float)
        t = t.reshape(-1)
        if not len(t) or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise FmibridgeError(
                "`t_eval` must be finite, strictly increasing times, got "
                f"{np.asarray(times)!r}."
            )
        if t[0] < t0 or t[-1] > t_end:
            raise FmibridgeError(
                f"`t_eval` must lie in [t0, t_end] = [{t0!r}, {t_end!r}], got "
                f"{t[0]!r} ... {t[-1]!r}."
            )
        self.times = t
        self._times = array.array("d", t.tolist())

    def next_after(self, t: float, tol: float) -> float:
        """Return the first output time beyond t + tol (inf if none)."""
        return next_after(self._times, t, tol)

    def has(self, t: float, tol: float) -> float | None:
        """Return the output time within tol of t, or None."""
        k = bisect.bisect_left(self._times, t - tol)
        if k < len(self._times) and self._times[k] <= t + tol:
            return self._times[k]
        return None

    def rows_on(self, t: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Return the first index of the increasing times `t` within tol of each
        output time they meet, and those output times."""
        k = np.searchsorted(self.times, t - tol, side="left")
        hit = k < len(self.times)
        hit[hit] = self.times[k[hit]] <= t[hit] + tol
        rows = np.flatnonzero(hit)
        _, first = np.unique(k[rows], return_index=True)
        rows = rows[first]
        return rows, self.times[k[rows]]


class GridRecorder(Recorder):
    """A Recorder that keeps only the samples of an OutputGrid and the events.

    Rows off the grid wait in `_pending` until the next row shows whether an
    event was logged at their time; a row within `tol` of an output time is
    stored at that time exactly.
    """

    blocks_event_rows = False

    def __init__(self, grid: OutputGrid, tol: float, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.grid, self.tol = grid, tol
        self._pending: list[tuple] = []  # rows at one time, not kept (yet)
        self._n_seen_events = 0

    def _append(self, t: float, x: np.ndarray, mode: str, outputs) -> None:
        if len(self.events) != self._n_seen_events:
            self._keep_event_rows()
        on_grid = self.grid.has(t, self.tol)
        if on_grid is not None:
            self._pending.clear()
            super()._append(on_grid, x, mode, outputs)
            return
        if self._pending and self._pending[-1][0] != t:
            self._pending.clear()
        self._pending.append((t, np.array(x, dtype=float), mode, dict(outputs)))
        if self._journal is not None:  # where the run has got to, off the grid
            row = np.empty(self._rows.shape[1])
            self._fill(row, t, x, outputs)
            self._journal.latest(row, self._code(mode))

    def read_samples(
        self, t: np.ndarray, x: np.ndarray, mode: str, outputs: Mapping[str, np.ndarray]
    ) -> None:
        """Record a block of samples, keeping those on the grid."""
        if not len(t):
            return
        if len(self.events) != self._n_seen_events:
            self._keep_event_rows()
        if len(t) > 1:  # the rows on the grid before the last, at its times exactly
            rows, times = self.grid.rows_on(t[:-1], self.tol)
            if len(rows):
                self._pending.clear()
                parts = {n: v[rows] for n, v in outputs.items()}
                Recorder.read_samples(self, times, x[rows], mode, parts)
        # the last row is kept too: it may be an event's (a time event)
        self._append(float(t[-1]), x[-1], mode, {n: v[-1] for n, v in outputs.items()})

    def finish(self, status: Status, provenance, detail: str = "") -> Result:
        """Keep the last event rows and the final sample, then build the Result."""
        self._keep_event_rows()
        for row in self._pending:  # the run ended here, off the grid
            super()._append(*row)
        self._pending.clear()
        return super().finish(status, provenance, detail)

    def _keep_event_rows(self) -> None:
        """Keep the waiting rows at the time of an event logged since they came."""
        new = self.events[self._n_seen_events :]
        self._n_seen_events = len(self.events)
        times = {e.t for e in new}
        if times and self._pending and self._pending[0][0] in times:
            for row in self._pending:
                super()._append(*row)
            self._pending.clear()
