"""Result of a run: samples, modes, event log, status and provenance (built by
a `core.recorder.Recorder`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np
from numpy.typing import DTypeLike

from .errors import FmibridgeError
from .outputs import write_atomically, write_together
from .records import Event, Status

if TYPE_CHECKING:  # pandas is imported where a frame is made, not with fmibridge
    import pandas as pd

REPR_NAMES = 6  # state names a Result's repr lists before it counts them instead


@dataclass(frozen=True, repr=False)
class Result:
    """The outcome of one run, pandas-first and self-describing.

    Attributes
    ----------
    t : ndarray, shape (n_samples,)
        Sample times; an event adds two samples at its time.
    x : ndarray, shape (n_samples, n_states)
    mode : ndarray of str, shape (n_samples,)
    state_names : tuple of str
    events : tuple of Event
    status : Status
    stats : mapping
        n_steps, n_rejected, n_events, n_silent_events.
    provenance : mapping
        Method and its parameters, system, library versions, wall time.
    outputs : mapping
        Extra columns aligned with `t` (the contact force `lam`, FMU outputs).
    units : mapping
        The unit of each column that has one.
    detail : str
        For a run that stopped early: where and why ("" at t_end).

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
        parts = [
            f"<Result {self.status.name} {span}",
            f"states {', '.join(names)}" if names else "no states",
            *([_counted(len(self.outputs), "output column")] if self.outputs else []),
            _counted(len(self.t), "sample"),
            _counted(len(self.events), "event"),
        ]
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

    @overload
    def __getitem__(self, key: str) -> np.ndarray: ...
    @overload
    def __getitem__(self, key: int) -> np.void: ...
    @overload
    def __getitem__(self, key: slice | list[str] | np.ndarray) -> np.ndarray: ...

    def __getitem__(self, key: Any) -> np.ndarray | np.void:
        """Index the samples as FMPy's structured result: a name, a list of
        names, an integer (a record), a slice or an index array of rows."""
        if isinstance(key, str):
            return self._column(key)
        if isinstance(key, list) and key and all(isinstance(k, str) for k in key):
            return self._structured(key)
        return self.to_structured()[key]  # numpy's own IndexError for a row

    def _column(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        if name in self.state_names:
            return self.x[:, self.state_names.index(name)]
        if name in self.outputs:
            return self.outputs[name]
        raise KeyError(
            f"{name!r} is not in this Result; columns are {['time', *self.columns]}."
        )

    def __len__(self) -> int:
        """The number of samples (rows), as ``len`` of FMPy's result."""
        return len(self.t)

    def __iter__(self) -> Iterator[np.void]:
        """The rows, each a numpy record with 'time' first."""
        return iter(self.to_structured())

    def __array__(
        self, dtype: DTypeLike | None = None, copy: bool | None = None
    ) -> np.ndarray:
        """``np.asarray(result)``: a new array of `to_structured`."""
        array = self.to_structured()
        return array if dtype is None else array.astype(dtype)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of `to_structured`: 'time', then every column, float64."""
        return _dtype(["time", *self.columns])

    @property
    def event_times(self) -> np.ndarray:
        """The time of each event, s."""
        return np.array([e.t for e in self.events])

    def to_structured(self, columns: Sequence[str] | None = None) -> np.ndarray:
        """Return the samples as FMPy's result: a structured array with 'time'
        first, then `columns` (default: every state, then every output)."""
        names = self.columns if columns is None else columns
        return self._structured(["time", *names])

    def _structured(self, names: Sequence[str]) -> np.ndarray:
        array = np.empty(len(self.t), dtype=_dtype(names))
        for name in names:
            array[name] = self._column(name)
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
        frame.attrs = {"status": self.status.name, "detail": self.detail}
        frame.attrs.update(self.provenance)
        return frame

    def events_frame(self) -> pd.DataFrame:
        """Return the event log: one row per transition, states before and after."""
        import pandas as pd

        states = [
            f"{n}_{side}" for side in ("before", "after") for n in self.state_names
        ]
        columns = ["time", "edge", "source", "target", *states, "simultaneous", "t_tol"]
        rows = [
            (e.t, e.edge, e.source, e.target, *e.x_before, *e.x_after)
            + (";".join(e.simultaneous), e.t_tol)
            for e in self.events
        ]
        return pd.DataFrame(rows, columns=columns)

    def to_csv(self, path: str | Path, events: str | Path | None = None) -> Path:
        """Write the samples as CSV (`time`, the columns, `mode`), whole or not
        at all; with `events`, the event log too, as a unit (`write_together`).
        `pandas.read_csv(path, index_col="time")` reads it back identically."""
        writes = {path: self.to_pandas().to_csv}
        if events is not None:
            writes[events] = self._events_writer()
        return write_together(writes)[0]

    def events_to_csv(self, path: str | Path) -> Path:
        """Write the event log (`events_frame`) as CSV, whole or not at all."""
        return write_atomically(path, self._events_writer())

    def _events_writer(self) -> Callable[[Path], object]:
        frame = self.events_frame()
        return lambda p: frame.to_csv(p, index=False)

    def raise_for_status(self) -> Result:
        """Raise FmibridgeError if the run stopped early; else return this Result."""
        if not self.status.is_success:
            where = f"t = {float(self.t[-1])!r}" if len(self.t) else "its start"
            raise FmibridgeError(f"Run stopped at {where}: {self.message}")
        return self

    def plot(
        self, columns: Sequence[str] | None = None, *, axes=None, events: bool = True
    ):
        """Plot each column (labelled with its unit) in its own subplot against
        time; return the axes.

        Parameters
        ----------
        columns : sequence of str, optional
            The columns to draw (default: all).
        axes : sequence of matplotlib Axes, optional
            One per column (default: a new figure).
        events : bool
            Mark each event's time with a thin grey line.
        """
        import matplotlib.pyplot as plt

        names = list(self.columns if columns is None else columns)
        if axes is None:
            size = (6, 1 + 1.6 * len(names))
            axes = plt.subplots(len(names), sharex=True, squeeze=False, figsize=size)
            axes = axes[1][:, 0]
        for ax, name in zip(axes, names, strict=True):
            ax.plot(self.t, self[name])
            unit = self.units.get(name)
            ax.set_ylabel(f"{name} / {unit}" if unit else name)
            for e in self.events if events else ():
                ax.axvline(e.t, color="0.85", lw=0.5, zorder=0)
        axes[-1].set_xlabel("time / s")
        return axes


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _dtype(names: Sequence[str]) -> np.dtype:
    """The structured dtype of float64 columns `names`."""
    return np.dtype([(name, np.float64) for name in names])


def events_path(path: str | Path) -> Path:
    """The event log's file beside a samples CSV: ball.csv -> ball.events.csv."""
    path = Path(path)
    return path.with_name(path.stem + ".events.csv")


# names that moved to `core.recorder` in 0.2, importable from here for one release
MOVED_TO_RECORDER = ("Recorder", "Recording", "recording", "SAMPLE_BUDGET_BYTES")

if not TYPE_CHECKING:  # type checkers see the names where they are

    def __getattr__(name: str):
        """A name that moved to `core.recorder`, with a DeprecationWarning."""
        if name not in MOVED_TO_RECORDER:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        warnings.warn(
            f"fmibridge.core.result.{name} moved to fmibridge.core.recorder.{name}; "
            f"import it from there.",
            DeprecationWarning,
            stacklevel=2,
        )
        import importlib  # absolute: the module may be loaded under its old name

        return getattr(importlib.import_module("fmibridge.core.recorder"), name)
