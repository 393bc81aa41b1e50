"""Every FMI call of a run goes to `fmi_call_logger`, in FMPy's format.

The compiled loops call the FMU's C functions directly (`flows._fmi`: doStep,
get and set of reals, setTime, setContinuousStates, the derivatives and event
indicators); given a logger, each logs itself after it returns, as fmpy's
wrappers log the calls made through them (instantiation, initialization,
events). The lines carry the arguments' values and the status, so they are
checked here against the run's own numbers: the states after each doStep are
the Result's rows, FMI 3.0's lastSuccessfulTime is the step's end, and a
Model Exchange FMU's derivatives are its equations at the states logged just
before. A logger changes no result: the runs with and without one are the same
bit for bit, on the compiled path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd
import pytest

import fmibridge
from fmibridge.core.errors import FmibridgeError, FmibridgeWarning
from fmibridge.core.result import Result
from fmibridge.models import bouncing_ball

REFERENCE = Path(os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "/nonexistent"))
CALL = re.compile(r"^(fmi[123]\w+)\((.*)\)(?: -> (\w+))?$")
ARGUMENT = re.compile(r"(\w+)=(\[[^\]]*\]|[^,]*)")
G = 9.81  # fmus/BouncingBallEvents/model.toml: g


def parsed(lines: list[str]) -> list[tuple[str, dict[str, str], str | None]]:
    """Each logged call as (function, {argument: value text}, status)."""
    calls = []
    for line in lines:
        match = CALL.match(line)
        assert match is not None, line
        name, arguments, status = match.groups()
        calls.append((name, dict(ARGUMENT.findall(arguments)), status))
    return calls


def numbers(text: str) -> list[float]:
    """The values of an array argument ("[1.0, 2.0]")."""
    return [float(v) for v in text.strip("[]").split(", ") if v]


def logged_run(path: Path, **keywords) -> tuple[Result, list[str]]:
    """The run with a logger, after checking it equals the run without one."""
    lines: list[str] = []
    logged = fmibridge.simulate(path, fmi_call_logger=lines.append, **keywords)
    plain = fmibridge.simulate(path, **keywords)
    np.testing.assert_array_equal(logged.t, plain.t)
    pd.testing.assert_frame_equal(logged.to_pandas(), plain.to_pandas())
    assert logged.provenance["flows"] == plain.provenance["flows"]
    return logged, lines


def states_after_steps(calls, do_step: str, get: str) -> tuple[list, list]:
    """Each doStep's arguments, and the values of the get right after it (the
    states, read first)."""
    steps, states = [], []
    for k, (name, arguments, _) in enumerate(calls):
        if name == do_step:
            steps.append(arguments)
            after, values, _ = calls[k + 1]
            assert after == get
            states.append(numbers(values.get("value") or values["values"]))
    return steps, states


@pytest.mark.parametrize(
    ("fmu", "do_step", "get"),
    [
        ("BouncingBall.fmu", "fmi2DoStep", "fmi2GetReal"),
        ("BouncingBall_fmi3.fmu", "fmi3DoStep", "fmi3GetFloat64"),
        ("BouncingBall_fmi1cs.fmu", "fmi1DoStep", "fmi1GetReal"),
    ],
)
def test_a_compiled_co_simulation_logs_each_do_step(fmu_dir, fmu, do_step, get):
    """The doSteps made in C (`steps=compiled`), one per communication step
    from each grid time, all OK, each followed by the read of the states the
    Result holds at its end."""
    result, lines = logged_run(
        fmu_dir / fmu, fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01
    )
    assert "steps=compiled" in result.provenance["flows"]
    calls = parsed(lines)
    assert calls[0][0].startswith(do_step[:4] + "Instantiate")
    steps, states = states_after_steps(calls, do_step, get)
    points = [float(a["currentCommunicationPoint"]) for a in steps]
    np.testing.assert_array_equal(points, result.t[:-1])
    sizes = [float(a["communicationStepSize"]) for a in steps]
    ends = [p + h for p, h in zip(points, sizes, strict=True)]
    np.testing.assert_array_equal(ends, result.t[1:])
    np.testing.assert_array_equal(states, result.x[1:])
    assert result.x[-1, 0] < 0.0  # the ball fell (no floor in it): states vary
    assert all(status == "OK" for name, _, status in calls if name == do_step)
    if do_step == "fmi1DoStep":  # fmiTrue, as fmpy logs the first
        assert {arguments["newStep"] for arguments in steps} == {"1"}
    if do_step == "fmi3DoStep":  # completed steps: no event, early return or end
        for arguments, end in zip(steps, ends, strict=True):
            assert float(arguments["lastSuccessfulTime"]) == end
            assert arguments["earlyReturn"] == arguments["eventHandlingNeeded"]
            assert arguments["earlyReturn"] == "False"


# per FMI version: the C names of setContinuousStates, getContinuousStates and
# the derivatives, and the name of their array arguments (fmpy's)
ME_CALLS = {
    "BouncingBallEvents_fmi1me.fmu": (
        ("fmi1SetContinuousStates", "x"),
        ("fmi1GetContinuousStates", "states"),
        ("fmi1GetDerivatives", "derivatives"),
    ),
    "BouncingBallEvents.fmu": (
        ("fmi2SetContinuousStates", "x"),
        ("fmi2GetContinuousStates", "x"),
        ("fmi2GetDerivatives", "derivatives"),
    ),
    "BouncingBallEvents_fmi3.fmu": (
        ("fmi3SetContinuousStates", "continuousStates"),
        ("fmi3GetContinuousStates", "continuousStates"),
        ("fmi3GetContinuousStateDerivatives", "derivatives"),
    ),
}


@pytest.mark.parametrize("fmu", sorted(ME_CALLS))
def test_a_model_exchange_run_logs_time_states_and_derivatives(fmu_dir, fmu):
    """The right-hand side and event indicator evaluated in C: each call
    follows the setContinuousStates of its point (or the states the FMU gave
    after an event) and returns the ball's equations there: der(h) = v,
    der(v) = -g, the indicator h."""
    result, lines = logged_run(fmu_dir / fmu, stop_time=1.5)
    assert len(result.events) >= 2  # impacts, inside the FMU
    assert "C functions called directly" in result.provenance["flows"]
    (set_name, x_name), (get_name, got_name), (derivatives, dx_name) = ME_CALLS[fmu]
    prefix = set_name[:4]
    x = None
    counts = dict.fromkeys(("derivatives", "indicators", "times"), 0)
    for name, arguments, status in parsed(lines):
        if name == set_name:
            x = numbers(arguments[x_name])
        elif name == get_name:
            x = numbers(arguments[got_name])
        elif name == derivatives:
            assert numbers(arguments[dx_name]) == [x[1], -G], arguments
            counts["derivatives"] += 1
        elif name == prefix + "GetEventIndicators":
            assert numbers(arguments["eventIndicators"])[0] == x[0]
            counts["indicators"] += 1
        elif name == prefix + "SetTime":
            counts["times"] += 1
        if name.startswith((prefix + "Set", prefix + "Get")):
            assert status == "OK", name
    assert counts["derivatives"] >= result.stats["n_steps"]
    assert counts["indicators"] > 0 and counts["times"] > 100


@pytest.mark.skipif(
    not REFERENCE.is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
def test_the_do_steps_are_fmpys():
    """fmpy's simulate_fmu and ours, given a logger, log the same doSteps of
    the Reference BouncingBall (FMI 2.0), in the same words."""
    path = REFERENCE / "fmi2" / "BouncingBall.fmu"
    ours: list[str] = []
    fmibridge.simulate_fmu(path, fmi_type="CoSimulation", fmi_call_logger=ours.append)
    theirs: list[str] = []
    fmpy.simulate_fmu(path, fmi_type="CoSimulation", fmi_call_logger=theirs.append)

    def steps(lines):
        keep = ("currentCommunicationPoint", "communicationStepSize")
        return [
            (name, [arguments[k] for k in keep], status)
            for name, arguments, status in parsed(lines)
            if name == "fmi2DoStep"
        ]

    assert steps(ours) == steps(theirs)
    assert len(steps(ours)) > 100


def test_a_logger_that_is_not_callable_is_refused(fmu_dir):
    with pytest.raises(FmibridgeError, match="`fmi_call_logger` must be a function"):
        fmibridge.simulate(fmu_dir / "BouncingBall.fmu", fmi_call_logger="calls.txt")


def test_a_logger_for_a_hybrid_system_is_refused():
    """A HybridSystem's FMUs (if any) were instantiated before the call."""
    with pytest.raises(FmibridgeError, match="fmi_call_logger.*before this call"):
        fmibridge.simulate(bouncing_ball(), stop_time=1.0, fmi_call_logger=print)


def test_a_logged_run_with_a_timeout_stays_in_this_process(fmu_dir):
    """The logger is called here, not in a supervised child, and says so."""
    lines: list[str] = []
    with pytest.warns(FmibridgeWarning, match="`fmi_call_logger` is called in this"):
        fmibridge.simulate(
            fmu_dir / "BouncingBall.fmu",
            stop_time=0.1,
            timeout=60.0,
            fmi_call_logger=lines.append,
        )
    assert parsed(lines)[-1][0] == "fmi2FreeInstance"
