"""The FMUs built from fmus/: valid, equal to the Python equations, restartable."""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Model, FMU2Slave
from fmpy.fmi3 import FMU3Model, FMU3Slave
from models_reference import REFERENCES

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted(REFERENCES)
VERSIONS = {2: "", 3: "_fmi3"}  # FMI version -> FMU file suffix
N_RANDOM_STATES = 20
DERIVATIVE_RTOL = 1e-12  # the brief: derivatives equal the Python equations to 1e-12


def fmu_path(fmu_dir, model, version):
    return fmu_dir / f"{model}{VERSIONS[version]}.fmu"


@contextlib.contextmanager
def open_fmu(path, kind, tmp_path):
    """Yield an instantiated low-level fmpy FMU (kind "ME" or "CS") and free it."""
    md = fmpy.read_model_description(path)
    unzipped = fmpy.extract(path, unzipdir=tmp_path / f"{path.stem}_{kind}")
    is_fmi3 = md.fmiVersion.startswith("3")
    classes = {
        ("ME", False): FMU2Model,
        ("CS", False): FMU2Slave,
        ("ME", True): FMU3Model,
        ("CS", True): FMU3Slave,
    }
    token = md.instantiationToken if is_fmi3 else md.guid
    fmu = classes[kind, is_fmi3](
        guid=token,
        unzipDirectory=unzipped,
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName="test",
    )
    fmu.instantiate()
    try:
        yield fmu, md
    finally:
        fmu.freeInstance()


def initialize(fmu, start_time=0.0):
    """Initialize; a Model Exchange FMU then leaves Event Mode, as FMI asks."""
    if isinstance(fmu, (FMU2Model, FMU2Slave)):
        fmu.setupExperiment(startTime=start_time)
        fmu.enterInitializationMode()
    else:
        fmu.enterInitializationMode(startTime=start_time)
    fmu.exitInitializationMode()
    if isinstance(fmu, FMU2Model):
        fmu.newDiscreteStates()
        fmu.enterContinuousTimeMode()
    elif isinstance(fmu, FMU3Model):
        fmu.updateDiscreteStates()
        fmu.enterContinuousTimeMode()


def vrs(md):
    return {v.name: v for v in md.modelVariables}


def set_value(fmu, var, value):
    if var.type in ("Integer", "Int32"):
        (fmu.setInteger if hasattr(fmu, "setInteger") else fmu.setInt32)(
            [var.valueReference], [int(value)]
        )
    else:
        (fmu.setReal if hasattr(fmu, "setReal") else fmu.setFloat64)(
            [var.valueReference], [float(value)]
        )


def get_reals(fmu, md, names):
    get = fmu.getReal if hasattr(fmu, "getReal") else fmu.getFloat64
    return np.array(get([vrs(md)[n].valueReference for n in names]))


# ---- every FMU is valid and simulates ----


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("fmi_type", ["ModelExchange", "CoSimulation"])
def test_fmu_validates_and_simulates(fmu_dir, model, version, fmi_type, capsys):
    path = fmu_path(fmu_dir, model, version)
    fmpy.dump(str(path))
    assert model in capsys.readouterr().out
    md = fmpy.read_model_description(path, validate=True)
    assert md.fmiVersion.startswith(str(version))
    result = fmpy.simulate_fmu(
        path, fmi_type=fmi_type, stop_time=0.1, output_interval=0.01
    )
    assert np.isclose(result["time"][-1], 0.1)
    assert all(np.all(np.isfinite(result[n])) for n in result.dtype.names)


# ---- derivatives equal the native Python equations ----


def random_inputs(md, rng):
    """Perturbed parameters and random inputs, by name (cs_substep untouched)."""
    values = {}
    for var in md.modelVariables:
        if var.causality == "parameter" and var.type in ("Real", "Float64"):
            values[var.name] = float(var.start) * rng.uniform(0.5, 1.5)
        elif var.causality in ("parameter", "input") and var.type in (
            "Integer",
            "Int32",
        ):
            values[var.name] = int(rng.integers(0, 4 if var.name == "contact" else 2))
        elif var.causality == "input":
            values[var.name] = rng.normal(0.0, 2.0)
    return values


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("model", MODELS)
def test_derivatives_equal_python_reference(fmu_dir, tmp_path, model, version):
    rng = np.random.default_rng(3)
    with open_fmu(fmu_path(fmu_dir, model, version), "ME", tmp_path) as (fmu, md):
        values = random_inputs(md, rng)
        for name, value in values.items():
            set_value(fmu, vrs(md)[name], value)
        initialize(fmu)
        n = md.numberOfContinuousStates
        x, dx = (ctypes.c_double * n)(), (ctypes.c_double * n)()
        get_derivatives = (
            getattr(fmu, "getDerivatives", None) or fmu.getContinuousStateDerivatives
        )
        for _ in range(N_RANDOM_STATES):
            t, state = rng.uniform(-5, 5), rng.normal(0.0, 2.0, n)
            x[:] = state
            fmu.setTime(t)
            fmu.setContinuousStates(x, n)
            get_derivatives(dx, n)
            expected = REFERENCES[model](t, state, values)
            np.testing.assert_allclose(
                np.array(dx),
                expected,
                rtol=DERIVATIVE_RTOL,
                atol=DERIVATIVE_RTOL * np.abs(expected).max(),
            )


# ---- Co-Simulation: get/set and serialized FMU state ----


def co_simulate(fmu, md, n_steps, t0, h=0.05):
    """Do n_steps doSteps of h from t0; return the states after each."""
    states = [v.derivative.name for v in md.modelVariables if v.derivative is not None]
    rows = []
    for k in range(n_steps):
        fmu.doStep(t0 + k * h, h)
        rows.append(get_reals(fmu, md, states))
    return np.array(rows)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("model", ["BouncingBallEvents", "Pronk"])
def test_fmu_state_round_trip_is_bit_exact(fmu_dir, tmp_path, model, version):
    path = fmu_path(fmu_dir, model, version)
    with open_fmu(path, "CS", tmp_path) as (fmu, md):
        initialize(fmu)
        co_simulate(fmu, md, 8, 0.0)  # past the first impact of the ball
        get_state = getattr(fmu, "getFMUstate", None) or fmu.getFMUState
        set_state = getattr(fmu, "setFMUstate", None) or fmu.setFMUState
        serialize = getattr(fmu, "serializeFMUstate", None) or fmu.serializeFMUState
        state = get_state()
        first = co_simulate(fmu, md, 12, 0.4)
        set_state(state)
        second = co_simulate(fmu, md, 12, 0.4)
        data = serialize(state)
    np.testing.assert_array_equal(first, second)
    with open_fmu(path, "CS", tmp_path / "fresh") as (fresh, md):
        initialize(fresh)
        deserialize = (
            getattr(fresh, "deSerializeFMUstate", None) or fresh.deserializeFMUState
        )
        (getattr(fresh, "setFMUstate", None) or fresh.setFMUState)(deserialize(data))
        third = co_simulate(fresh, md, 12, 0.4)
    np.testing.assert_array_equal(first, third)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_discrete_variable_is_set_by_when_and_saved_with_the_fmu_state(
    fmu_dir, tmp_path, version
):
    """BouncingBallRest's `resting` (kind "discrete": a local discrete Real) turns
    1 at the impact that rests the ball (t = 2.5581 s), turns gravity off, and
    comes back with a saved FMU state, as the states do."""
    path = fmu_path(fmu_dir, "BouncingBallRest", version)
    (resting,) = [
        v
        for v in fmpy.read_model_description(path).modelVariables
        if v.name == "resting"
    ]
    assert (resting.causality, resting.variability) == ("local", "discrete")
    with open_fmu(path, "CS", tmp_path) as (fmu, md):
        initialize(fmu)
        get_state = getattr(fmu, "getFMUstate", None) or fmu.getFMUState
        set_state = getattr(fmu, "setFMUstate", None) or fmu.setFMUState
        start = get_state()
        flight = co_simulate(fmu, md, 51, 0.0)  # to 2.55 s, before the rest
        assert get_reals(fmu, md, ["resting"])[0] == 0.0
        rest = co_simulate(fmu, md, 2, 2.55, h=0.025)  # past 2.5581 s: at rest
        assert get_reals(fmu, md, ["resting"])[0] == 1.0
        assert rest[-1, 1] == 0.0 and rest[-1, 0] == rest[-2, 0]
        set_state(start)
        assert get_reals(fmu, md, ["resting"])[0] == 0.0
        np.testing.assert_array_equal(co_simulate(fmu, md, 51, 0.0), flight)


@pytest.mark.parametrize("version", VERSIONS)
def test_cs_states_are_set_by_reset_and_start_values_not_in_step_mode(
    fmu_dir, tmp_path, version, capsys
):
    with open_fmu(fmu_path(fmu_dir, "BouncingBall", version), "CS", tmp_path) as (
        fmu,
        md,
    ):
        initialize(fmu)
        fmu.doStep(0.0, 0.1)
        with pytest.raises(FMICallException):  # FMI: outputs are not set in Step Mode
            set_value(fmu, vrs(md)["v"], 2.0)
        assert "`v` cannot be set in phase StepMode" in capsys.readouterr().out
        fmu.reset()  # the standard way: reset, then re-initialise with new start values
        set_value(fmu, vrs(md)["h"], 3.0)
        initialize(fmu, start_time=0.2)
        fmu.doStep(0.2, 0.1)
        assert get_reals(fmu, md, ["h"])[0] == pytest.approx(
            3 - 9.81 * 0.1**2 / 2, abs=1e-12
        )


@pytest.mark.parametrize("version", VERSIONS)
def test_calls_in_the_wrong_state_fail_with_a_logged_reason(
    fmu_dir, tmp_path, version, capsys
):
    with open_fmu(fmu_path(fmu_dir, "BouncingBall", version), "CS", tmp_path) as (
        fmu,
        md,
    ):
        with pytest.raises(FMICallException, match="DoStep"):
            fmu.doStep(0.0, 0.1)  # before initialization
        initialize(fmu)
        with pytest.raises(FMICallException):
            set_value(fmu, vrs(md)["g"], 1.0)  # a fixed parameter after initialization
        with pytest.raises(FMICallException):
            get_reals_by_vr(fmu, 999)  # unknown value reference
        fmu.doStep(0.0, 0.1)  # the instance still works
    log = capsys.readouterr().out
    assert "not allowed in phase Instantiated" in log
    assert "`g` cannot be set in phase StepMode" in log
    assert "unknown value reference 999" in log


def get_reals_by_vr(fmu, vr):
    return (fmu.getReal if hasattr(fmu, "getReal") else fmu.getFloat64)([vr])


# ---- internal events: BouncingBallEvents through fmpy ----


def exact_impact_times(n, h0=1.0, g=9.81, e=0.8):
    """Impacts of a ball dropped from h0: t1 = sqrt(2 h0/g), then 2 e^k v1/g apart."""
    v1 = np.sqrt(2 * g * h0)
    return np.sqrt(2 * h0 / g) + np.concatenate(
        [[0.0], np.cumsum([2 * e**k * v1 / g for k in range(1, n)])]
    )


def impact_times(result):
    """Times at which v jumps from negative to positive (event rows repeat the time)."""
    t, v = result["time"], result["v"]
    jumps = (np.diff(t) == 0) & (v[:-1] < 0) & (v[1:] > 0)
    return t[:-1][jumps]


def test_bouncing_ball_events_me_cvode_impact_times(fmu_dir):
    result = fmpy.simulate_fmu(
        fmu_path(fmu_dir, "BouncingBallEvents", 2),
        fmi_type="ModelExchange",
        solver="CVode",
        stop_time=2.7,
        relative_tolerance=1e-10,
        output_interval=0.01,
        record_events=True,
    )
    np.testing.assert_allclose(
        impact_times(result)[:5], exact_impact_times(5), atol=1e-6
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_bouncing_ball_events_cs_locates_impacts_inside_do_step(
    fmu_dir, tmp_path, version
):
    with open_fmu(fmu_path(fmu_dir, "BouncingBallEvents", version), "CS", tmp_path) as (
        fmu,
        md,
    ):
        initialize(fmu)
        fmu.doStep(0.0, 1.0)  # one impact at 0.4515 inside the step
        h, v = get_reals(fmu, md, ["h", "v"])
    t1, v1 = exact_impact_times(1)[0], np.sqrt(2 * 9.81)
    tau = 1.0 - t1
    assert h == pytest.approx(0.8 * v1 * tau - 9.81 * tau**2 / 2, abs=1e-9)
    assert v == pytest.approx(0.8 * v1 - 9.81 * tau, abs=1e-9)


# ---- the builder ----


def test_build_is_incremental_and_deterministic(builder, fmu_dir, tmp_path):
    again = builder.build_fmus(out_dir=tmp_path, models=["BouncingBall"])
    first = {k: p.read_bytes() for k, p in again.items()}
    mtimes = {k: p.stat().st_mtime_ns for k, p in again.items()}
    rebuilt = builder.build_fmus(out_dir=tmp_path, models=["BouncingBall"])
    assert {k: p.stat().st_mtime_ns for k, p in rebuilt.items()} == mtimes
    forced = builder.build_fmus(out_dir=tmp_path, models=["BouncingBall"], force=True)
    assert {k: p.read_bytes() for k, p in forced.items()} == first
    assert first["BouncingBall"] == (fmu_dir / "BouncingBall.fmu").read_bytes()


def test_the_development_entry_point_builds_the_models_named(fmu_dir):
    """`python fmus/build.py MODEL` builds into fmus/build/ and lists each FMU;
    an unknown model ends it with exit code 2 and the known ones."""
    script = [sys.executable, str(ROOT / "fmus" / "build.py")]
    done = subprocess.run(
        [*script, "BouncingBall"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    suffixes = ("", "_cs_bare", "_fmi1cs", "_fmi1me", "_fmi3", "_fmi3_cs_bare")
    assert done.stdout.splitlines() == [
        f"BouncingBall{s}: {fmu_dir / f'BouncingBall{s}.fmu'}" for s in suffixes
    ]
    done = subprocess.run(
        [*script, "Nope"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2
    assert "unknown model(s) ['Nope']; known: [" in done.stderr


def test_build_error_names_the_model_and_gcc_message(builder, fmu_dir, tmp_path):
    source = fmu_dir.parent
    for name in ("common", "include", "BouncingBall"):
        shutil.copytree(source / name, tmp_path / name)
    c_file = tmp_path / "BouncingBall" / "BouncingBall.c"
    c_file.write_text(c_file.read_text().replace("x[X_v];", "x[X_v]"))
    with pytest.raises(
        builder.BuildError, match=r"(?s)Model `BouncingBall`: gcc failed.*error"
    ):
        builder.build_fmus(tmp_path)


def test_model_structure_declares_direct_feedthrough(builder, fmu_dir, tmp_path):
    """`depends_on` becomes the outputs' `dependencies`; a state depends on itself."""
    for version in VERSIONS:
        md = fmpy.read_model_description(
            fmu_path(fmu_dir, "MassSpringStop", version), validate=True
        )
        found = {u.variable.name: u.dependencies for u in md.outputs}
        assert [v.name for v in found["a"]] == ["x", "v", "F"]
        assert [v.name for v in found["x"]] == ["x"]
    shutil.copytree(fmu_dir.parent / "MassSpringStop", tmp_path / "MassSpringStop")
    table = tmp_path / "MassSpringStop" / "model.toml"
    table.write_text(table.read_text().replace('["x"]', '["x", "k"]'))
    with pytest.raises(
        builder.BuildError, match="`depends_on` of `gap` must .* \\['k'\\]"
    ):
        builder.read_table(table)


# ---- the Modelica sources agree with the C (rumoca) ----

RUMOCA_RTOL = 1e-11  # rumoca's BDF tolerances, well below the 1e-6 asserted
# before the first impact (the ball's at 0.4515 s)
FLIGHT_TIME = {
    "BouncingBallEvents": 0.4,
    "BouncingBallRest": 0.4,
    # the first impact is at 0.0345 s; rumoca 0.10.2's sampler refuses the stiff
    # current at 0.03 s (its check of an interval's endpoint, off by 8e-11)
    "DcMotorStopEvents": 0.02,
}


@pytest.mark.parametrize("model", MODELS)
def test_modelica_source_matches_fmu_in_flight(fmu_dir, model):
    rumoca = pytest.importorskip("rumoca")
    stop_time = FLIGHT_TIME.get(model, 1.0)
    compiled = rumoca.Session().load(
        str(fmu_dir.parent / model / f"{model}.mo"), model=model
    )
    config = rumoca.SimConfig(rtol=RUMOCA_RTOL, atol=RUMOCA_RTOL)
    frame = compiled.simulate(t=(0, stop_time), dt=0.01, config=config).to_dataframe()
    path = fmu_path(fmu_dir, model, 2)
    md = fmpy.read_model_description(path)
    result = fmpy.simulate_fmu(
        path, fmi_type="CoSimulation", stop_time=stop_time, output_interval=0.01
    )
    for var in (v.derivative for v in md.modelVariables if v.derivative is not None):
        modelica = np.interp(result["time"], frame.index.values, frame[var.name].values)
        np.testing.assert_allclose(
            result[var.name], modelica, atol=1e-6, err_msg=var.name
        )
