"""Our FMUs refuse illegal FMI call sequences, as the standard and Reference FMUs do.

Each case drives a real FMU built from fmus/ through fmpy into one call that
FMI 2.0 / 3.0 forbids in that state, and checks that the call returns an error
status (fmpy raises FMICallException) and that the FMU logs why. The first
case is the mistake issue 14 found in fmibridge itself: fmi3EnterStepMode
after initialization of an FMU that does not use Event Mode.
"""

from __future__ import annotations

import ctypes

import pytest
from fmpy.fmi1 import FMICallException
from test_fmus import fmu_path, initialize, open_fmu


def _exit_initialization_only(fmu):
    """Initialize but stay where exitInitializationMode leaves the FMU."""
    if hasattr(fmu, "setupExperiment"):
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
    else:
        fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()


def _raw(fmu, name, *args):
    """Call an FMI function by name on the instance, even one fmpy does not wrap."""
    function = getattr(fmu.dll, name)
    function.restype = ctypes.c_int
    return function(ctypes.c_void_p(fmu.component), *args)


def _buffer(n=2):
    return (ctypes.c_double * n)()


CASES = [  # (FMI version, interface, set-up, illegal call, the FMU's log message)
    (3, "CS", initialize, lambda f: f.enterStepMode(), "fmi3EnterStepMode is not"),
    (2, "ME", lambda f: None, lambda f: f.getReal([1]), "GetReal is not allowed in"),
    (3, "ME", lambda f: None, lambda f: f.getFloat64([1]), "GetReal is not allowed"),
    (
        2,
        "ME",
        _exit_initialization_only,
        lambda f: f.setContinuousStates(_buffer(), 2),
        "SetContinuousStates is not allowed in phase EventMode",
    ),
    (
        3,
        "ME",
        _exit_initialization_only,
        lambda f: f.enterEventMode(),
        "EnterEventMode is not allowed in phase EventMode",
    ),
    (
        2,
        "CS",
        initialize,
        lambda f: _raw(f, "fmi2GetDerivatives", _buffer(), ctypes.c_size_t(2)),
        "GetDerivatives is a Model Exchange function",
    ),
    (
        3,
        "CS",
        initialize,
        lambda f: _raw(f, "fmi3SetTime", ctypes.c_double(0.5)),
        "SetTime is a Model Exchange function",
    ),
    (
        2,
        "ME",
        initialize,
        lambda f: _raw(
            f, "fmi2DoStep", ctypes.c_double(0.0), ctypes.c_double(0.1), ctypes.c_int(1)
        ),
        "DoStep is not allowed in phase ContinuousTimeMode",
    ),
]


@pytest.mark.parametrize("version, kind, set_up, call, message", CASES)
def test_an_illegal_call_returns_an_error_and_logs_why(
    fmu_dir, tmp_path, capsys, version, kind, set_up, call, message
):
    path = fmu_path(fmu_dir, "BouncingBall", version)
    with open_fmu(path, kind, tmp_path) as (fmu, _):
        set_up(fmu)
        capsys.readouterr()
        try:
            status = call(fmu)
        except FMICallException as exc:
            status = exc.status
        assert status == 3  # fmi2Error = fmi3Error
    assert message in capsys.readouterr().out


def test_event_mode_is_refused_where_the_fmu_does_not_declare_it(fmu_dir, tmp_path):
    """fmi3InstantiateCoSimulation with eventModeUsed and no hasEventMode: NULL."""
    import fmpy
    from fmpy.fmi3 import FMU3Slave

    path = fmu_path(fmu_dir, "BouncingBall", 3)
    md = fmpy.read_model_description(path)
    assert not md.coSimulation.hasEventMode
    messages = []
    fmu = FMU3Slave(
        guid=md.guid,
        unzipDirectory=fmpy.extract(path, unzipdir=tmp_path / "unzipped"),
        modelIdentifier=md.coSimulation.modelIdentifier,
    )
    with pytest.raises(Exception, match="Failed to instantiate"):
        fmu.instantiate(
            eventModeUsed=True,
            logMessage=lambda env, status, category, text: messages.append(text),
        )
    assert b"hasEventMode is false" in b" ".join(messages)
