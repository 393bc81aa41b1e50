"""Result of a run: samples, modes, event log, status and provenance."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import FmibridgeError, FmibridgeWarning


class Status(enum.Enum):
    """Why a run stopped; each value is the message shown to the user."""

    REACHED_END = "Reached t_end."
    MAX_STEPS = "Stopped after max_steps steps; raise max_steps or h."
    MAX_EVENTS = (
        "Stopped after max_events transitions (impacts accumulating?); raise "
        "max_events, or continue the Zeno execution with completion (--zeno complete)."
    )
    NO_PROGRESS = (
        "Stopped: no step could be taken even after max_halvings halvings; the "
        "state leaves the domain where no guard is declared, or h is too large."
    )
    TERMINATED = "The FMU ended the simulation (terminateSimulation)."

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
    """

    t: float
    edge: str
    source: str
    target: str
    x_before: np.ndarray
    x_after: np.ndarray
    simultaneous: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """The outcome of one run, pandas-first and self-describing.

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

    def __getitem__(self, name: str) -> np.ndarray:
        """Return one column (a state or an output) by name."""
        if name in self.state_names:
            return self.x[:, self.state_names.index(name)]
        if name in self.outputs:
            return self.outputs[name]
        raise KeyError(
            f"{name!r} is not in this Result; columns are "
            f"{list(self.state_names) + list(self.outputs)}."
        )

    @property
    def event_times(self) -> np.ndarray:
        return np.array([e.t for e in self.events])

    def to_pandas(self) -> pd.DataFrame:
        """Return the samples as a DataFrame indexed by time."""
        frame = pd.DataFrame(
            self.x, columns=list(self.state_names), index=pd.Index(self.t, name="time")
        )
        for name, values in self.outputs.items():
            frame[name] = values
        frame["mode"] = self.mode
        frame.attrs = {"status": self.status.name, **self.provenance}
        return frame

    def events_frame(self) -> pd.DataFrame:
        """Return the event log: one row per transition, states before and after."""
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
            rows.append(row)
        columns = ["time", "edge", "source", "target"]
        columns += [f"{n}_before" for n in self.state_names]
        columns += [f"{n}_after" for n in self.state_names] + ["simultaneous"]
        return pd.DataFrame(rows, columns=columns)

    def to_csv(self, path: str | Path) -> Path:
        """Write the samples as CSV (a `time` column, one per state, `mode`).

        `pandas.read_csv(path, index_col="time")` reads it back identically.
        """
        path = Path(path)
        if path.parent and not path.parent.exists():
            raise FmibridgeError(
                f"Cannot write {path}: folder {path.parent} does not exist."
            )
        self.to_pandas().to_csv(path)
        return path

    def raise_for_status(self) -> Result:
        """Raise FmibridgeError if the run stopped before its end."""
        if not self.status.is_success:
            raise FmibridgeError(
                f"Run stopped at t = {self.t[-1]!r}: {self.status.value}"
            )
        return self

    def plot(self, columns: list[str] | None = None, ax=None):
        """Plot states (or the named columns) against time; return the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        for name in columns or list(self.state_names):
            ax.plot(self.t, self[name], label=name)
        for e in self.events:
            ax.axvline(e.t, color="0.85", lw=0.5, zorder=0)
        ax.set_xlabel("time / s")
        ax.legend()
        return ax


# (t, x, mode) -> (extra column values, events as (t, name, x_before, x_after) and
# optionally the extra columns before and after)
Observer = Callable[[float, np.ndarray, str], tuple[Mapping[str, float], tuple]]


class Recorder:
    """Collects samples and events during a run and builds the Result.

    An `observer(t, x, mode)` returns, for each sample, the values of extra
    columns (an FMU's outputs, read where the sample is taken) and the events
    the flow handled itself inside the step that ended there (an FMU's own
    events in Co-Simulation), which are logged before the sample.
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
        self._t: list[float] = []
        self._x: list[np.ndarray] = []
        self._mode: list[str] = []
        self._outputs: list[tuple[float, ...]] = []
        self.events: list[Event] = []
        self.n_steps = 0
        self.n_rejected = 0
        self.n_silent_events = 0

    def sample(self, t: float, x: np.ndarray, mode: str, **outputs: float) -> None:
        """Record the state at time t."""
        if self.observer is not None:
            observed, events = self.observer(t, x, mode)
            for t_event, name, x_before, x_after, *outputs_around in events:
                before, after = outputs_around or ({}, {})
                self._append(t_event, x_before, mode, before)
                self._append(t_event, x_after, mode, after)
                self.events.append(Event(t_event, name, mode, mode, x_before, x_after))
            outputs = {**observed, **outputs}
        self._append(t, x, mode, outputs)

    def _append(self, t: float, x: np.ndarray, mode: str, outputs) -> None:
        self._t.append(t)
        self._x.append(x)
        self._mode.append(mode)
        if self.output_names:
            self._outputs.append(
                tuple(outputs.get(n, np.nan) for n in self.output_names)
            )

    def samples(
        self, t: np.ndarray, x: np.ndarray, mode: str, **outputs: np.ndarray
    ) -> None:
        """Record a block of samples in one mode (rows of x), with outputs as
        arrays of the same length (missing ones nan)."""
        if self.observer is not None:
            for k, (t_k, x_k) in enumerate(zip(t.tolist(), x, strict=True)):
                self.sample(t_k, x_k, mode, **{n: v[k] for n, v in outputs.items()})
            return
        self._t.extend(t.tolist())
        self._x.extend(x)
        self._mode.extend([mode] * len(t))
        if self.output_names:
            nan = np.full(len(t), np.nan)
            columns = [outputs.get(n, nan).tolist() for n in self.output_names]
            self._outputs.extend(zip(*columns, strict=True))

    def event(self, event: Event) -> None:
        """Record a transition and its before/after samples."""
        self.events.append(event)

    def warn(self, message: str) -> None:
        """Warn now (FmibridgeWarning) and keep the message in the provenance."""
        self.warnings.append(message)
        warnings.warn(message, FmibridgeWarning, stacklevel=4)

    def finish(self, status: Status, provenance: Mapping[str, str]) -> Result:
        """Build the Result, warning once if the run stopped early."""
        outputs = np.array(self._outputs, dtype=float).reshape(
            len(self._outputs), len(self.output_names)
        )
        result = Result(
            t=np.array(self._t, dtype=float),
            x=np.array(self._x, dtype=float).reshape(
                len(self._t), len(self.state_names)
            ),
            mode=np.array(self._mode, dtype=object),
            state_names=self.state_names,
            events=tuple(self.events),
            status=status,
            stats={
                "n_steps": self.n_steps,
                "n_rejected": self.n_rejected,
                "n_events": len(self.events),
                "n_silent_events": self.n_silent_events,
            },
            provenance={
                **provenance,
                **({"warnings": " | ".join(self.warnings)} if self.warnings else {}),
            },
            outputs={n: outputs[:, i] for i, n in enumerate(self.output_names)},
        )
        if not status.is_success:
            t_last = result.t[-1] if len(result.t) else float("nan")
            warnings.warn(
                f"Run stopped at t = {t_last:.6g} s: {status.value}",
                FmibridgeWarning,
                stacklevel=3,
            )
        return result
