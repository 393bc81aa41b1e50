"""The Zeno watchdog predicts and warns; it stops a run only where it cannot go on.

Issue 28: a geometric series of impacts is a warning with its predicted
accumulation time; the run goes on while it advances, so a model that rests
itself runs to its stop time, and stops only where the transitions can no
longer be resolved or the state passes the guard (tunnelling). Oracles: the
exact ball's Zeno time sqrt(2 h0/g)(1+e)/(1-e) and impact times, and
`fmpy.simulate_fmu` on the same FMU (Model Exchange with CVode at relative
tolerance 1e-10, Co-Simulation at the same communication step).
"""

from __future__ import annotations

import math
import sys
import warnings

import fmpy
import numpy as np
import pandas as pd
import pytest
from test_reference_fmus import FOLDER, reference

from fmibridge import FmibridgeWarning, Halving
from fmibridge.cli import main
from fmibridge.core.recorder import Recorder
from fmibridge.core.records import State
from fmibridge.core.result import Event, Status
from fmibridge.flows.fmu import fmu_system
from fmibridge.methods.watchdog import Watchdog
from fmibridge.models import (
    bouncing_ball,
    bouncing_ball_impacts,
    bouncing_ball_zeno_time,
)

ZENO = bouncing_ball_zeno_time()  # 4.0637 s: h0 = 1 m, g = 9.81, e = 0.8
FMPY_RTOL = 1e-10  # CVode's tolerance for the Model Exchange reference
# |rest time - fmpy's| in Model Exchange: CVode at FMPY_RTOL places each impact to
# about its absolute tolerance over the impact speed, so the error grows as the
# impacts slow: the Reference BouncingBall rests after 11 impacts (measured 7e-9
# s), ours after 24, the last at 1e-3 m/s (measured 1.3e-6 s).
REST_TOL_REFERENCE = 1e-7
REST_TOL_OURS = 1e-5
# Our rest time against the exact 24th impact: Halving places each to t_tol =
# 1e-12 s and RK4 is exact on the parabolas; round-off of t ~ 1e-15 s each.
REST_TOL_EXACT = 1e-9
needs_reference = pytest.mark.skipif(
    not FOLDER, reason="FMIBRIDGE_REFERENCE_FMUS is unset: no Reference FMUs"
)


def quietly(run):
    """Call run(), returning its Result and the messages of the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, [str(w.message) for w in caught]


def run_fmu(path, interface: str, method: Halving, t_end: float | None = None):
    system = fmu_system(path, interface)
    try:
        return quietly(lambda: method.run(system, t_end))
    finally:
        system.close()


def fmpy_run(path, interface: str, h: float, **start_values):
    """fmpy's run; Co-Simulation in Event Mode with early return where the FMU
    offers it (FMI 3), as ours runs."""
    if interface == "me":
        return fmpy.simulate_fmu(
            path,
            fmi_type="ModelExchange",
            relative_tolerance=FMPY_RTOL,
            start_values=start_values,
        )
    events = bool(fmpy.read_model_description(path).coSimulation.hasEventMode)
    return fmpy.simulate_fmu(
        path,
        fmi_type="CoSimulation",
        output_interval=h,
        start_values=start_values,
        use_event_mode=events,
        early_return_allowed=events,
    )


def at_rest(v: np.ndarray) -> int:
    """The index of the first sample from which v is 0 for good."""
    return int(np.nonzero(v != 0.0)[0][-1]) + 1


def rest_time(t: np.ndarray, v: np.ndarray) -> float:
    """The time from which v is 0 for good."""
    return float(t[at_rest(v)])


def predicted(message: str) -> float:
    return float(message.split("accumulate at t = ")[1].split(" s")[0])


# -- a method that cannot pass a Zeno point warns, and stops where it cannot go on --


@pytest.mark.parametrize("h, t_tol", [(1e-2, 1e-4), (1e-3, 1e-8), (1e-3, 1e-10)])
def test_halving_warns_and_stops_at_the_accumulation_within_its_resolution(h, t_tol):
    """The run goes on until the impacts come closer than the t_tol Halving
    brackets them to, whatever h: its tail r/(1 - r) = 4 such intervals before
    the exact Zeno time."""
    result, messages = quietly(
        lambda: Halving(h=h, t_tol=t_tol).run(bouncing_ball(), 10)
    )
    assert result.status is Status.ZENO
    assert 0.0 < ZENO - result.t[-1] <= 5 * t_tol
    warning, stop = messages
    assert warning.startswith("halving: Edge 'floor' (guard 'floor') fired 6 times")
    assert predicted(warning) == pytest.approx(ZENO, abs=1e-7)
    assert stop.startswith(f"Run stopped at t = {result.t[-1]:.6g} s")
    assert predicted(result.detail) == pytest.approx(ZENO, abs=max(10 * t_tol, 1e-8))
    assert result.x[:, 0].min() > -1e-12  # never beyond the floor


def test_a_state_beyond_the_guard_of_a_series_stops_the_run_as_tunnelling():
    """Fed the ball's exact impacts, the watchdog sees a series. A state beyond the
    floor stops the run if it is deeper than ON_SURFACE (1e-8 m) and than twice
    the depth the last reset left, or if it moves further out; a state on the
    surface, or a little beyond and moving back in, does not."""
    system, method = bouncing_ball(), Halving(h=1e-3)
    watch = Watchdog(method, system, 10.0)
    log = Recorder(system.state_names)
    times = bouncing_ball_impacts(8)
    speeds = math.sqrt(2 * 9.81) * 0.8 ** np.arange(8)
    for t, v in zip(times, speeds, strict=True):
        before, after = np.array([0.0, -v]), np.array([0.0, 0.8 * v])
        log.event(Event(float(t), "floor", "flight", "flight", before, after))

    def check(t, h, v):
        return watch.check(State(t, np.array([h, v]), "flight"), log)

    t = float(times[-1])
    assert check(t, 0.0, 0.8 * speeds[-1]) is None  # the series' warning waits
    assert check(t, -5e-9, 0.1) is None
    stop = check(t, -5e-9, -0.1)
    assert stop.status is Status.ZENO
    assert "beyond guard 'floor' by 5e-09, moving further out (dg/dt = -0.1" in (
        stop.detail
    )
    assert predicted(stop.detail) == pytest.approx(ZENO, abs=1e-8)  # 9 digits
    assert "by 2e-08 (more than 1e-08)" in check(t, -2e-8, 0.1).detail
    deep = np.array([-1e-6, 0.8 * speeds[-1]])  # a coarse method's last reset
    t9 = t + 2 * 0.8 * speeds[-1] / 9.81
    log.event(Event(t9, "floor", "flight", "flight", deep, deep))
    assert check(t9, -1.5e-6, 0.1) is None
    assert "by 2.5e-06 (more than 2e-06)" in check(t9, -2.5e-6, 0.1).detail
    with pytest.warns(FmibridgeWarning, match="fired 8 times"):  # at the run's end
        assert watch.finish(log) == {}


@pytest.mark.parametrize("e", [0.5, 0.8])
def test_fmu_ball_without_a_rest_rule_stops_before_it_tunnels(fmu_dir, e):
    """BouncingBallEvents (no rest rule), Model Exchange: the run goes on while
    its impacts are resolved and stops within 1e-7 s of its Zeno time, the floor
    never passed. At e = 0.5 the last impact leaves it a hair below its indicator h,
    falling: no `when h <= 0` fires again, and without the stop it would fall
    through (h = -2.04 m at t = 2 s)."""
    zeno = bouncing_ball_zeno_time(e=e)
    system = fmu_system(fmu_dir / "BouncingBallEvents.fmu", "me", parameters={"e": e})
    try:
        result, messages = quietly(lambda: Halving(h=1e-3).run(system, 30.0))
    finally:
        system.close()
    assert result.status is Status.ZENO
    assert 0.0 < zeno - result.t[-1] < 1e-7 and result.x[:, 0].min() > -1e-9
    assert "guard 'event_indicator_0'" in result.detail
    assert predicted(result.detail) == pytest.approx(zeno, abs=1e-7)
    if e == 0.5:
        assert "moving further out" in result.detail and "tunnel" in result.detail
    warning, _ = messages
    assert "guard 'event_indicator_0') fired 6 times" in warning
    assert predicted(warning) == pytest.approx(zeno, abs=1e-6)


# -- models that rest themselves run to stop time and rest where fmpy rests them --


REST_E = 0.7  # BouncingBallRest: e = 0.7, v_min = 1e-3 m/s: at rest after impact 24
REST_IMPACT = 24
REST_ZENO = bouncing_ball_zeno_time(e=REST_E)  # 2.5586340 s, never reached


@pytest.mark.parametrize("interface", ["me", "cs"])
@pytest.mark.parametrize("version", [2, 3])
def test_our_rest_rule_fmu_runs_to_stop_time_and_rests_where_fmpy_does(
    fmu_dir, version, interface
):
    """A model that rests itself (v = 0 below v_min) is no Zeno point: the
    watchdog lets it run to stop time."""
    path = fmu_dir / (
        "BouncingBallRest.fmu" if version == 2 else "BouncingBallRest_fmi3.fmu"
    )
    result, messages = run_fmu(path, interface, Halving(h=1e-3, t_tol=1e-12))
    assert result.status is Status.REACHED_END and result.t[-1] == 3.0
    ours = rest_time(result.t, result.x[:, 1])
    ref = fmpy_run(path, interface, 1e-3)
    theirs = rest_time(ref["time"], ref["v"])
    assert np.ptp(result.x[at_rest(result.x[:, 1]) :, 0]) == 0.0  # h stays
    assert abs(result.x[-1, 0]) < 1e-12 and abs(ref["h"][-1]) < 1e-12
    if interface == "cs":  # the same communication points: the same rest
        assert ours == theirs == pytest.approx(2.559, abs=1e-12)
        assert result.x[-1, 0] == ref["h"][-1]
        return
    exact = bouncing_ball_impacts(REST_IMPACT, e=REST_E)[-1]
    assert len(result.events) == REST_IMPACT
    assert abs(ours - exact) < REST_TOL_EXACT and abs(ours - theirs) < REST_TOL_OURS
    assert messages == []  # it rests by itself: a run that is right is quiet
    rested = result.provenance["came_to_rest"]  # and says so
    assert predicted(rested) == pytest.approx(REST_ZENO, abs=1e-7)


@needs_reference
@pytest.mark.parametrize("interface", ["me", "cs"])
@pytest.mark.parametrize("version", [2, 3])
def test_reference_bouncing_ball_runs_to_stop_time_and_rests_where_fmpy_does(
    version, interface
):
    path = reference(version, "BouncingBall")
    h = 1e-3 if interface == "me" else 1e-2  # Co-Simulation: its DefaultExperiment
    result, _ = run_fmu(path, interface, Halving(h=h, t_tol=1e-12))
    assert result.status is Status.REACHED_END and result.t[-1] == 3.0
    ref = fmpy_run(path, interface, h)
    ours = rest_time(result.t, result.x[:, 1])
    theirs = rest_time(ref["time"], ref["v"])
    bound = REST_TOL_REFERENCE if interface == "me" else 1e-12  # CS: the same grid
    assert abs(ours - theirs) < bound
    assert list(result.x[-1]) == [sys.float_info.min, 0.0]  # where the FMU rests it
    assert (ref["h"][-1], ref["v"][-1]) == (sys.float_info.min, 0.0)


ADAPTER = """
fmu = "{fmu}"
interface = "me"

[parameters]
e = 0.5

[[edges]]
name = "floor"
guard = "h"
direction = "falling"
reset = {{ v = "-e * v" }}

[method]
name = "halving"
h = 1e-3
t_tol = 1e-12
"""


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_an_adapter_floor_over_the_fmus_own_rest_rule_runs_to_stop_time(
    version, tmp_path
):
    """The FMU's own event runs first, so its rest rule acts; the adapter's edge
    fires only where its guard is still crossed after it (run first, its reset
    would keep the rest rule from acting, and the impacts would accumulate)."""
    path, adapter = reference(version, "BouncingBall"), tmp_path / "ball.toml"
    adapter.write_text(ADAPTER.format(fmu=path))
    out = tmp_path / "ball.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it rests by itself: quiet
        assert main(["run", str(adapter), "--out", str(out), "--no-progress"]) == 0
    frame = pd.read_csv(out, index_col="time")
    events = pd.read_csv(tmp_path / "ball.events.csv")
    assert set(events["edge"]) == {"fmu_event_0"}  # the FMU's own resets
    ref = fmpy_run(path, "me", 1e-3, e=0.5)
    ours = rest_time(frame.index.to_numpy(), frame["v"].to_numpy())
    assert abs(ours - rest_time(ref["time"], ref["v"])) < REST_TOL_REFERENCE
    assert frame.index[-1] == 3.0
    assert (frame["h"].iloc[-1], frame["v"].iloc[-1]) == (sys.float_info.min, 0.0)
