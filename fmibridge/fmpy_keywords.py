"""FMPy's `simulate_fmu` keywords as `fmibridge.simulate` takes them.

Each keyword of `fmpy.simulate_fmu` (FMPy 0.3) is taken with FMPy's meaning
or, in `FIXED`, accepted at the value that means what fmibridge always does
and refused otherwise with the reason; none is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from .core.errors import did_you_mean

SOLVERS = {"Euler": "euler", "CVode": "cvode"}  # FMPy's `solver` -> our integrator


class Fixed(NamedTuple):
    """An FMPy keyword whose `accepted` values mean what fmibridge always does;
    any other value is refused with `instead`."""

    accepted: tuple[object, ...]
    instead: str


FIXED = {
    "apply_default_start_values": Fixed(
        (False,),
        "the FMU starts from its own declared start values, as FMI specifies; "
        "give the values to set in `start_values`",
    ),
    "visible": Fixed((False,), "fmibridge instantiates FMUs in batch mode only"),
    "logger": Fixed(
        (None,),
        "`debug_logging=True` prints the FMU's log messages; without it fmibridge "
        "keeps the last ones for its error messages",
    ),
    "step_finished": Fixed(
        (None,),
        "fmibridge's loops do not call back after each step: limit a run with "
        "`timeout`, watch it with `progress=True`, and read its samples in the "
        "Result",
    ),
    "model_description": Fixed(
        (None,), "fmibridge reads the FMU's modelDescription.xml itself"
    ),
    "fmu_instance": Fixed(
        (None,),
        "fmibridge instantiates the FMU itself (it saves, restores and resets its "
        "own instance); pass the FMU's path",
    ),
    "fmu_state": Fixed(
        (None,), "fmibridge starts the FMU from its start values (`start_values`)"
    ),
    "initialize": Fixed(
        (True,), "fmibridge always initializes the FMU it instantiates"
    ),
    "terminate": Fixed(
        (True,), "fmibridge always terminates and frees its FMU at the run's end"
    ),
    "set_stop_time": Fixed(
        (False,),
        "fmibridge gives the FMU no stop time (stopTimeDefined = false); the run's "
        "end is `stop_time`",
    ),
    "set_input_derivatives": Fixed(
        (False,),
        "fmibridge sets inputs at each communication point, not their derivatives",
    ),
    "remote_platform": Fixed(
        (None, "auto"),
        "fmibridge runs the FMU's binary for this platform only (no remoting)",
    ),
    "use_event_mode": Fixed(
        (True,),
        "fmibridge uses Event Mode wherever an FMI 3 Co-Simulation FMU offers it, "
        "to handle the FMU's events at their time; it cannot be turned off",
    ),
    "early_return_allowed": Fixed(
        (True,),
        "fmibridge allows early return wherever an FMI 3 Co-Simulation FMU in "
        "Event Mode may return early, to stop at its events; it cannot be turned "
        "off",
    ),
}


def fixed_problems(given: Mapping[str, object]) -> list[str]:
    """The messages for FMPy keywords at values fmibridge cannot honour."""
    return [
        f"`{name}={value!r}`: {FIXED[name].instead}"
        for name, value in given.items()
        if not any(
            value is a or (isinstance(value, bool | str) and value == a)
            for a in FIXED[name].accepted
        )
    ]


def refuse_unknown(given: Iterable[str], known: Iterable[str]) -> None:
    """Raise TypeError for keywords neither simulate's nor FMPy's, with hints."""
    known = [*known, *FIXED]
    hints = [
        f"{name!r}{did_you_mean(name, known)}" for name in given if name not in known
    ]
    if hints:
        raise TypeError(
            f"simulate() got unexpected keyword argument(s) {', '.join(hints)}."
        )
