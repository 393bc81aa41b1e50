"""Stiff Model Exchange: CVODE's BDF between events (integrator='cvode').

- Roberts (the Reference FMU, FMI 3.0) from 1e-5 s to its stopTime 1e8 s: its
  state at 1e8 s and the times where y3 rises through 0.01 and y1 falls through
  1e-4 (guards of ours, located on CVODE's dense output) against scipy's Radau
  at rtol 1e-12 (REFERENCE: Radau at rtol 1e-13 agrees with it to 1.6e-13 in y1
  and 1.5e-12 in the event times).
- The stiff drive with its stop (fmus/DcMotorStop, adapters/dc_motor_stop.toml):
  impact times against Halving's fixed RK4 steps of 5e-6 s (its explicit
  stability limit is 2.8e-5 s), and its flight against fmpy's CVode.
- Jacobians: the FMU's directional derivatives where they are right, CVODE's
  difference quotients (with a warning) where the FMU's are wrong (Roberts).
- A failing integrator says where and why.
- An SSP of the drive without a step (issue 38): its default step is stable
  on the drive's pole, not the output interval, and agrees with fmpy's CVode.
- Dormand-Prince chosen by the user on a stiff model over a long span (Roberts
  to 1e8 s, the drive to 100 s) stops after its stiffness detection, naming
  CVODE and the fastest time scale (against the Jacobian's eigenvalue); over a
  short span (the drive to its second impact) it finishes.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest

from fmibridge import (
    Completion,
    Edge,
    FmibridgeError,
    FmibridgeWarning,
    Guard,
    Halving,
    HybridSystem,
    Mode,
    NativeFlow,
    Result,
    simulate,
)
from fmibridge.flows.fmu import fmu_event_edges, open_fmu
from fmibridge.flows.stiff import Stiff
from fmibridge.formats.adapters import load_adapter

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
ROBERTS = Path(FOLDER) / "fmi3" / "Roberts.fmu"
needs_roberts = pytest.mark.skipif(
    not ROBERTS.is_file(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or has no fmi3/Roberts.fmu",
)
ADAPTER = Path(__file__).resolve().parent.parent / "adapters" / "dc_motor_stop.toml"

# scipy.integrate.solve_ivp(Radau, rtol=1e-12, atol=(1e-22, 1e-26), exact
# Jacobian) on y1' = -0.04 y1 + 1e4 y2 y3, y2' = 0.04 y1 - 1e4 y2 y3 - 3e7 y2^2,
# y3 = 1 - y1 - y2, y(1e-5) = (1, 0): 11 500 steps, 8 s
REFERENCE_END = (2.0824175121793717e-05, 8.329841429908602e-11)  # y1, y2 at 1e8 s
REFERENCE_Y3_RISES = 0.26402907818796795  # y3 = 0.01, s
REFERENCE_Y1_FALLS = 20795496.883041047  # y1 = 1e-4, s

# RK4 steps of 5e-6 s on the drive; its first two impacts from CVODE at rtol 1e-8
# and RK4 at 1e-5 and 2e-6 s agree to 1e-9 s (measured)
FINE_STEP = 5e-6
DRIVE_SPAN = 0.13  # s: two impacts (0.0345 s, 0.1212 s)
IMPACT_TOL = 1e-8  # s


def roberts_with_guards():
    """The Reference Roberts with two guards of ours that change mode: y3 rises
    through 0.01 ('start' -> 'mid'), y1 falls through 1e-4 ('mid' -> 'late')."""
    flow = open_fmu(ROBERTS, "me")
    y3 = Edge(Guard(lambda t, x: x[0] + x[1] - 0.99, "falling"), "mid", name="y3")
    y1 = Edge(Guard(lambda t, x: x[0] - 1e-4, "falling"), "late", name="y1")
    modes = [
        Mode("start", flow, (y3, *fmu_event_edges(flow, "start"))),
        Mode("mid", flow, (y1, *fmu_event_edges(flow, "mid"))),
        Mode("late", flow, fmu_event_edges(flow, "late")),
    ]
    return HybridSystem(
        modes, "start", flow.x0, t0=flow.t0, experiment=flow.archive.experiment
    )


@needs_roberts
@pytest.mark.parametrize("rtol, bound", [(1e-6, 1e-4), (1e-8, 1e-6)])
def test_roberts_reaches_its_stop_time_and_agrees_with_radau(rtol, bound):
    """To 1e8 s (its DefaultExperiment); the error of y1, y2 at the end and of the
    two event times relative to the reference is within 100 rtol."""
    system = roberts_with_guards()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FmibridgeWarning)  # its Jacobian, below
            result = Halving(integrator="cvode", rtol=rtol, atol=1e-14).run(system)
    finally:
        system.close()
    assert result.status.is_success and result.t[-1] == 1e8
    errors = np.abs(result.x[-1] - REFERENCE_END) / REFERENCE_END
    assert np.all(errors <= bound), errors
    times = [e.t for e in result.events]
    assert [e.edge for e in result.events] == ["y3", "y1"]
    expected = [REFERENCE_Y3_RISES, REFERENCE_Y1_FALLS]
    assert np.all(np.abs(np.subtract(times, expected)) <= bound * np.array(expected))
    assert result.stats["n_steps"] < 3000  # RK4 at its stable h = 2e-4 s: 5e11


@needs_roberts
def test_roberts_directional_derivatives_are_caught_and_replaced():
    """The Reference Roberts declares directional derivatives that hold y3 fixed;
    the check at CVODE's first Jacobians sees it, says so, and CVODE goes on with
    difference quotients: the answer is that of jacobian='difference'."""
    system = roberts_with_guards()
    try:
        with pytest.warns(FmibridgeWarning, match=r"Roberts.fmu disagrees with"):
            auto = Halving(integrator="cvode", rtol=1e-8, atol=1e-14).run(system)
        plain = Halving(
            integrator=Stiff(jacobian="difference"), rtol=1e-8, atol=1e-14
        ).run(system)
    finally:
        system.close()
    np.testing.assert_allclose(auto.x[-1], plain.x[-1], rtol=1e-6)


def drive(fmu_dir, **parameters):
    return load_adapter(ADAPTER, parameters=parameters or None).system


def test_drive_fmu_jacobian_is_its_directional_derivative(fmu_dir):
    """DcMotorStop's directional derivatives equal forward differences of its
    derivatives to 1e-6 of the matrix, and CVODE takes them (no warning, no
    difference quotient) where the FMU provides them."""
    system = drive(fmu_dir)
    flow = system.mode(system.initial_mode).flow
    try:
        x, t = np.array([0.01, 0.3, 5.0]), 0.1
        jacobian = flow.jacobian_function()(t, x).reshape(3, 3).T
        f0, columns = flow.rhs(t, x), []
        for j in range(3):
            step = 1e-7 * max(1.0, abs(x[j]))
            columns.append((flow.rhs(t, x + step * np.eye(3)[j]) - f0) / step)
        np.testing.assert_allclose(
            jacobian, np.array(columns).T, atol=1e-6 * np.abs(jacobian).max()
        )
        assert jacobian[2, 2] == pytest.approx(-1e5, rel=1e-15)  # -R/L: the stiff mode
        counts = {}
        for how in ("auto", "difference"):
            stepper = Stiff(jacobian=how).adaptive_stepper(flow, 1e-6, 1e-8)
            t, x = 0.0, flow.x0
            with warnings.catch_warnings():
                warnings.simplefilter("error", FmibridgeWarning)  # kept: no warning
                while t < 0.03:
                    h, x = stepper.take(t, x, 0.03 - t)
                    t += h
            counts[how] = stepper.stats()
    finally:
        system.close()
    # CVODE used the FMU's Jacobian, no difference quotient; else 3 per Jacobian
    assert counts["auto"]["n_jacobians"] > 0 == counts["auto"]["n_jacobian_rhs"]
    difference = counts["difference"]
    assert difference["n_jacobian_rhs"] == 3 * difference["n_jacobians"] > 0


def test_drive_impacts_agree_with_fine_fixed_steps(fmu_dir):
    """The first two impacts at the stop: CVODE at rtol 1e-8 against Halving with
    RK4 steps of 5e-6 s, both located to t_tol = 1e-12 s."""
    system = drive(fmu_dir)
    try:
        stiff = Halving(integrator="cvode", rtol=1e-8, atol=1e-10, t_tol=1e-12)
        fine = Halving(h=FINE_STEP, integrator="rk4", t_tol=1e-12)
        ours = stiff.run(system, DRIVE_SPAN)
        with warnings.catch_warnings():  # RK4's estimate (an upper bound) asks 2.5e-6
            warnings.simplefilter("ignore", FmibridgeWarning)
            reference = fine.run(system, DRIVE_SPAN)
    finally:
        system.close()
    assert [e.edge for e in ours.events] == ["stop", "stop"]
    assert len(reference.events) == 2
    times = np.array([e.t for e in ours.events])
    np.testing.assert_allclose(times, [0.0344763, 0.1212484], atol=1e-7)
    np.testing.assert_allclose(
        times, [e.t for e in reference.events], rtol=0, atol=IMPACT_TOL
    )
    velocities = [e.x_before[1] for e in ours.events]
    np.testing.assert_allclose(
        velocities, [e.x_before[1] for e in reference.events], rtol=1e-6
    )
    assert ours.stats["n_steps"] * 20 < reference.stats["n_steps"]


def test_drive_flight_agrees_with_fmpy(fmu_dir):
    """Without the stop (x_stop = 1 m, out of reach) the run is a plain ME
    integration: fmibridge's CVODE at rtol 1e-8 and fmpy's CVode at rtol 1e-10
    agree on fmpy's grid to 1e-6 of each state's range."""
    path = fmu_dir / "DcMotorStop.fmu"
    ref = fmpy.simulate_fmu(
        path,
        fmi_type="ModelExchange",
        relative_tolerance=1e-10,
        stop_time=0.5,
        output_interval=0.01,
        start_values={"x_stop": 1.0},
    )
    system = drive(fmu_dir, x_stop=1.0)
    try:
        ours = Halving(integrator="cvode", rtol=1e-8, atol=1e-10).run(
            system, 0.5, t_eval=ref["time"]
        )
    finally:
        system.close()
    assert not ours.events
    frame = ours.to_pandas()
    for name in ("x", "v", "i"):
        scale = np.abs(ref[name]).max()
        np.testing.assert_allclose(
            frame[name].to_numpy(), ref[name], atol=1e-6 * scale, err_msg=name
        )


def test_zeno_and_completion_work_on_top():
    """The ball (e = 0.5) under CVODE: Halving's resets restart it after each
    impact, the watchdog stops the run at the Zeno point as with RK4, and
    Completion carries it past to t_end."""
    from fmibridge.models import bouncing_ball
    from fmibridge.models.ball import bouncing_ball_impacts, bouncing_ball_zeno_time

    system = bouncing_ball(e=0.5)
    method = Halving(integrator="cvode", rtol=1e-10, atol=1e-12)
    with pytest.warns(FmibridgeWarning):
        stopped = method.run(system, 3.0)
    assert stopped.status.name == "ZENO"
    assert abs(stopped.t[-1] - bouncing_ball_zeno_time(e=0.5)) < 1e-3
    times = [e.t for e in stopped.events[:10]]
    np.testing.assert_allclose(times, bouncing_ball_impacts(10, e=0.5), atol=1e-8)
    completed = Completion(method).run(system, 3.0)
    assert completed.status.is_success and completed.t[-1] == 3.0


def test_a_failing_step_names_the_time_and_the_reason():
    """dx/dt not finite from t = 0.5 s on: CVODE cuts its step until it cannot;
    the error names the flow, the time and CVODE's reason."""

    def f(t, x, u):
        return np.array([-x[0] if t < 0.5 else np.nan])

    system = HybridSystem([Mode("m", NativeFlow(f, ("x",), name="decay"))], "m", [1.0])
    with pytest.raises(
        FmibridgeError, match=r"CVODE could not step from t = 0\.4"
    ) as e:
        Halving(integrator="cvode", rtol=1e-6).run(system, 1.0)
    assert "not finite" in str(e.value)


def test_bench_stiff_rows_are_measured(fmu_dir):
    """`fmibridge bench --only stiff --quick`: every row has a finite fmibridge
    error within what its rtol promises (timings are reported, not asserted)."""
    from benchmarks.suite import BenchOptions, run_bench

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)
        frame = run_bench(BenchOptions.quick_options(), ("stiff",))
    drive = frame[frame["case"] == "DcMotorStop, 12 impacts in 1 s"]
    assert len(drive) == 2 and np.all(drive["fmibridge_error"] < 1e-6)
    assert np.all(drive["peer_error"] < 1e-6)  # fmpy on DcMotorStopEvents: the same
    roberts = frame[frame["case"].str.startswith("Roberts")]
    if ROBERTS.is_file():
        assert list(roberts["fmibridge_error"] < [1e-2, 1e-4]) == [True, True]
        assert np.all(np.isfinite(roberts["fmibridge_s"]))


def stiff_stop(run) -> tuple[float, float, Result]:
    """Run `run()`, which must stop at the stiffness detection with its Result
    (Status.STIFF, one warning naming CVODE, its samples up to the stop); return
    the time it names, the |lambda| it estimates (from its fastest time
    scale) and the Result."""
    with pytest.warns(FmibridgeWarning, match=r"integrator='cvode'"):
        result = run()
    assert result.status.name == "STIFF" and not result.status.is_success
    text = result.detail
    t = float(re.search(r"is stiff at t = (\S+) s", text).group(1))
    scale = float(re.search(r"1/\|lambda\| = (\S+) s", text).group(1))
    assert len(result.t) >= 2 and result.t[0] < result.t[-1] <= t
    return t, 1.0 / scale, result


def roberts_rhs(t, y):
    y1, y2 = y
    return [
        -0.04 * y1 + 1e4 * y2 * (1 - y1 - y2),
        0.04 * y1 - 1e4 * y2 * (1 - y1 - y2) - 3e7 * y2**2,
    ]


def roberts_jacobian(y1, y2):
    """d(y1', y2')/d(y1, y2) with y3 = 1 - y1 - y2 (the FMU's two states)."""
    y3 = 1.0 - y1 - y2
    return np.array(
        [
            [-0.04 - 1e4 * y2, 1e4 * (y3 - y2)],
            [0.04 + 1e4 * y2, -1e4 * (y3 - y2) - 6e7 * y2],
        ]
    )


# Hairer and Wanner's estimate of h |lambda| (Solving ODEs II, Sec. IV.2) is a
# difference quotient along one direction: rough, but near the fastest eigenvalue
# once that mode dominates the last stage's difference
RATE_RTOL = 0.25


@needs_roberts
def test_dopri5_on_roberts_stops_naming_cvode():
    """Roberts to 1e8 s with the user's Dormand-Prince: `simulate` returns the
    samples up to the stop (the last one on scipy's Radau to Dormand-Prince's
    tolerance, rtol = atol = 1e-6), the stop names CVODE and a fastest rate
    near the Jacobian's (from Radau at the stop time); without the explicit
    choice the default (CVODE) reaches the end."""
    from scipy.integrate import solve_ivp

    t, rate, stopped = stiff_stop(
        lambda: simulate(
            ROBERTS,
            stop_time=1e8,
            relative_tolerance=1e-6,
            method_options={"integrator": "dopri5"},
        )
    )
    y = solve_ivp(
        roberts_rhs, (1e-5, t), [1.0, 0.0], method="Radau", rtol=1e-10, atol=1e-14
    ).y[:, -1]
    fastest = np.abs(np.linalg.eigvals(roberts_jacobian(*y))).max()
    assert rate == pytest.approx(fastest, rel=RATE_RTOL)
    last = solve_ivp(
        roberts_rhs,
        (1e-5, stopped.t[-1]),
        [1.0, 0.0],
        method="Radau",
        rtol=1e-10,
        atol=1e-14,
    ).y[:, -1]
    np.testing.assert_allclose(stopped.x[-1], last, rtol=1e-4, atol=1e-6)  # its atol
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)  # its Jacobian, above
        result = simulate(ROBERTS, stop_time=1e8, relative_tolerance=1e-6)
    assert result.status.name == "REACHED_END"
    assert result["y1"][-1] == pytest.approx(REFERENCE_END[0], rel=1e-3)


@needs_roberts
def test_the_command_line_stops_dopri5_on_roberts(tmp_path, capsys):
    """The issue's command: a run stopped early (exit 1) whose warning names
    `--integrator cvode`, its samples so far kept beside the output."""
    from fmibridge.cli import main

    out = tmp_path / "r.csv"
    argv = ["run", str(ROBERTS), "--stop-time", "1e8", "--rtol", "1e-6"]
    stop = r"is stiff at t = .* \(--integrator cvode\)"
    with pytest.warns(FmibridgeWarning, match=stop):
        code = main([*argv, "--integrator", "dopri5", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1 and "(--integrator cvode)" in captured.out
    assert "Traceback" not in captured.err
    partial = out.with_name("r.partial.csv")
    assert partial.is_file() and not out.exists()
    times = np.loadtxt(partial, delimiter=",", skiprows=1, usecols=0)
    assert times[0] == 1e-5 and times[0] < times[-1] < 1.0


def test_dopri5_on_the_drive_stops_over_a_long_span_only(fmu_dir):
    """The drive's electrical pole is -R/L = -1e5 1/s: over 100 s Dormand-Prince
    stops, naming it; to its second impact (0.13 s, 4e3 steps) it finishes,
    with the impacts of the fixed-step reference."""
    system = drive(fmu_dir)
    method = Halving(integrator="dopri5", rtol=1e-6, atol=1e-8)
    try:
        _, rate, _ = stiff_stop(lambda: method.run(system, 100.0))
        short = method.run(system, DRIVE_SPAN)
    finally:
        system.close()
    assert rate == pytest.approx(1e5, rel=RATE_RTOL)
    assert short.status.name == "REACHED_END"
    times = [e.t for e in short.events]
    np.testing.assert_allclose(times, [0.0344763, 0.1212484], atol=1e-6)


DRIVE_SSD = """<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    version="2.0" name="Drive">
  <ssd:System name="Drive"><ssd:Elements>
    <ssd:Component name="motor" type="application/x-fmu-sharedlibrary"
        source="resources/DcMotorStop.fmu"/>
  </ssd:Elements></ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="0.1"/>
</ssd:SystemStructureDescription>"""


def test_an_ssp_without_a_step_takes_a_stable_default(tmp_path, fmu_dir):
    """The SSD gives no step and the output interval (0.01 s) is 400 times RK4's
    stable step on the drive's -R/L = -1e5 1/s pole (the run stopped, unstable):
    the default step comes from the Jacobian's poles at the start, below the
    stability bound 2.785 / 1e5 s, and the run agrees with fmpy's CVode (rtol
    1e-10) on the grid to 1e-5 of each state's range."""
    from fmibridge.core.integrators import RK4

    path = tmp_path / "drive.ssp"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("SystemStructure.ssd", DRIVE_SSD)
        archive.write(fmu_dir / "DcMotorStop.fmu", "resources/DcMotorStop.fmu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FmibridgeWarning)  # its first step's error
        ours = simulate(path, output_interval=0.01)
    h = ast.literal_eval(ours.provenance["parameters"])["h"]
    assert h < RK4.stability_boundary / 1e5
    assert ours.status.name == "REACHED_END"
    ref = fmpy.simulate_fmu(
        fmu_dir / "DcMotorStop.fmu",
        fmi_type="ModelExchange",
        relative_tolerance=1e-10,
        stop_time=0.1,
        output_interval=0.01,
    )
    frame = ours.to_pandas()
    np.testing.assert_allclose(frame.index.to_numpy(), ref["time"], atol=1e-12)
    for name in ("x", "v", "i"):
        scale = np.abs(ref[name]).max()
        np.testing.assert_allclose(
            frame[f"motor.{name}"].to_numpy(), ref[name], atol=1e-5 * scale
        )
