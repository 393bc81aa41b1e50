"""FMPy's functions for scripts written for FMPy: change the import, keep the code.

``import fmibridge as fmpy`` gives `simulate_fmu` with `fmpy.simulate_fmu`'s
parameters, order and defaults (but `DIFFERENT_DEFAULTS`), returning a Result
that indexes as FMPy's structured array. `read_model_description` and `dump`
are FMPy's own; `plot_result` draws with matplotlib.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fmpy import dump, read_model_description  # FMPy's own, re-exported

from .core.errors import FmibridgeError
from .core.numbers import as_float, is_number
from .core.result import Result
from .flows.fmu import interface_type
from .flows.fmu_archive import FmuArchive
from .fmpy_keywords import FIXED
from .simulation import (
    default_output_interval,
    fmpy_communication_step,
    fmpy_step,
    simulate,
)

__all__ = ["dump", "plot_result", "read_model_description", "simulate_fmu"]

# fmpy.simulate_fmu's defaults that simulate_fmu changes: name -> (FMPy's, ours,
# why); the others are FMPy's (tests/test_fmpy_compat.py compares the signatures)
DIFFERENT_DEFAULTS = {
    "start_values": ({}, None, "no mutable default; None sets no start value"),
    "early_return_allowed": (False, True, FIXED["early_return_allowed"].instead),
    "use_event_mode": (False, True, FIXED["use_event_mode"].instead),
    "set_stop_time": (True, False, FIXED["set_stop_time"].instead),
}
# FMPy's numbers may be given as text (its command line passes them so)
NUMBERS = (
    "start_time", "stop_time", "step_size", "relative_tolerance", "output_interval",
    "timeout",
)  # fmt: skip
# keywords passed to `simulate` as given
PASSED = ("input", "output", "debug_logging", "fmi_call_logger", *FIXED)


def simulate_fmu(
    filename: str | Path,
    validate: bool = True,
    start_time: float | str | None = None,
    stop_time: float | str | None = None,
    solver: str = "CVode",
    step_size: float | str | None = None,
    relative_tolerance: float | str | None = None,
    output_interval: float | str | None = None,
    record_events: bool = True,
    fmi_type: str | None = None,
    start_values: Mapping[str, object] | None = None,
    apply_default_start_values: bool = False,
    input: object = None,  # noqa: A002 - FMPy's name
    output: Sequence[str] | None = None,
    timeout: float | str | None = None,
    debug_logging: bool = False,
    visible: bool = False,
    logger: Callable | None = None,
    fmi_call_logger: Callable[[str], None] | None = None,
    step_finished: Callable | None = None,
    model_description: object = None,
    fmu_instance: object = None,
    set_input_derivatives: bool = False,
    remote_platform: str | None = "auto",
    early_return_allowed: bool = True,
    use_event_mode: bool = True,
    initialize: bool = True,
    terminate: bool = True,
    fmu_state: object = None,
    set_stop_time: bool = False,
) -> Result:
    """Simulate an FMU as `fmpy.simulate_fmu` does, with fmibridge; return the Result.

    Where `fmibridge.simulate` chooses otherwise, this chooses as FMPy:
    Co-Simulation where offered, a stop time of start + 1 s, FMPy's output grid
    (`fmpy_interval`), 'CVode' only for a Model Exchange FMU with states, a step
    at most the span, and no event rows in Co-Simulation. The FMU is read once,
    with `validate`; a value fmibridge cannot honour is refused with the reason.

    Parameters
    ----------
    filename : path
        The FMU (.fmu; for an SSP or an adapter file use `fmibridge.simulate`).
    validate, ..., set_stop_time :
        `fmpy.simulate_fmu`'s; numbers may be given as text, as FMPy's.

    Returns
    -------
    Result
        Indexed as FMPy's result: ``result['h']``, ``result[-1]``,
        ``len(result)``, ``np.asarray(result)`` (the structured array).

    Raises
    ------
    FmibridgeError
        For a file that is not an FMU, a number that is not one, and every
        keyword value `fmibridge.simulate` refuses.
    """
    given = dict(locals())
    if not isinstance(filename, str | os.PathLike):
        raise FmibridgeError(
            f"`filename` must be the path of an FMU (.fmu), got {filename!r}."
        )
    path = Path(filename)
    if path.suffix.lower() != ".fmu":
        raise FmibridgeError(
            f"{path}: simulate_fmu takes an FMU (.fmu); run an SSP or an adapter "
            f"file with fmibridge.simulate."
        )
    numbers = {name: _number(name, given[name]) for name in NUMBERS}
    if not isinstance(validate, bool):
        raise FmibridgeError(f"`validate` must be True or False, got {validate!r}.")
    archive = FmuArchive(path, validate=validate)  # read once: simulate runs it
    is_cs = (  # FMPy's choice: Co-Simulation where the FMU offers it
        "CoSimulation" in archive.interfaces
        if fmi_type is None
        else interface_type(fmi_type) == "CoSimulation"
    )
    t0, t_end = numbers["start_time"], numbers["stop_time"]
    experiment = archive.experiment  # a value is read only where not given
    if t0 is None:
        t0 = 0.0 if experiment.start is None else experiment.start
    if t_end is None:
        t_end = t0 + 1.0 if experiment.stop is None else experiment.stop
    gap = as_float(t_end) - as_float(t0) if is_number(t0) and is_number(t_end) else 0
    span = gap if 0 < gap < math.inf else None  # else `simulate` refuses it
    step = numbers["step_size"]
    if not is_cs and step is None and solver == "Euler" and span:
        step = fmpy_step(span)
    if span is not None and is_number(step) and step > span:
        step = span  # FMPy's steps end at the stop time
    interval = numbers["output_interval"]
    if interval is None and span is not None:
        interval = fmpy_interval(archive, is_cs, span, step)
    # FMPy's solver where it applies: 'CVode' only to a Model Exchange FMU with states
    applies = solver != "CVode" or (not is_cs and archive.state_names)
    keywords: dict[str, Any] = {
        **numbers,
        "stop_time": t_end,
        "step_size": step,
        "output_interval": interval,
        "record_events": False if is_cs and record_events is True else record_events,
        "fmi_type": fmi_type or ("CoSimulation" if is_cs else "ModelExchange"),
        "start_values": start_values or None,
        "solver": solver if applies else None,
        **{name: given[name] for name in PASSED},
    }
    return simulate(archive, **keywords)


def _number(name: str, value: object) -> Any:
    """`value`, with a number given as text converted."""
    if not isinstance(value, str):
        return value
    try:
        return float(value)
    except ValueError:
        raise FmibridgeError(f"`{name}` must be a number, got {value!r}.") from None


def fmpy_interval(
    archive: FmuArchive, is_cs: bool, span: float, step: float | None
) -> float:
    """Return FMPy's default output interval (fmpy.simulate_fmu, FMPy 0.3); in
    Co-Simulation from the fixedInternalStepSize, else the stepSize."""
    if not is_cs:
        return default_output_interval(span, step or fmpy_step(span))
    fixed = archive.fixed_internal_step
    base = fixed if fixed is not None else archive.experiment.step
    return fmpy_communication_step(base, span)


def plot_result(
    result: Result,
    reference: Any = None,
    names: Sequence[str] | None = None,
    filename: str | Path | None = None,
    window_title: str | None = None,
    events: bool = False,
    markers: bool = False,
    height: int | None = None,
) -> None:
    """Plot a Result as `fmpy.util.plot_result` does, with `Result.plot`.

    Parameters
    ----------
    result : Result
        The run to draw, one subplot per column against time.
    reference : structured array or Result, optional
        Drawn dashed under each column it has ('time' first).
    names : sequence of str, optional
        The columns to draw (default: every state, then every output).
    filename, window_title : str, optional
        Save the figure there instead of showing it; the window's title.
    events, markers : bool
        Mark the events with thin grey lines; each sample with a dot.
    height : int, optional
        The figure's height in pixels.
    """
    import matplotlib.pyplot as plt

    if not isinstance(result, Result):
        raise FmibridgeError(
            f"plot_result draws an fmibridge Result, got {type(result).__name__}."
        )
    names = list(result.columns if names is None else names)
    axes = result.plot(names, events=events)
    figure = axes[0].figure
    for ax, name in zip(axes, names, strict=True):
        ax.lines[0].set_marker("." if markers else "")
        if reference is not None and name in (reference.dtype.names or ()):
            ax.plot(reference["time"], reference[name], "--", color="0.5", zorder=0)
    if height is not None:
        figure.set_figheight(height / figure.dpi)
    if window_title is not None and figure.canvas.manager is not None:
        figure.canvas.manager.set_window_title(window_title)
    if filename is None:
        plt.show()
    else:
        figure.savefig(filename)
        plt.close(figure)
