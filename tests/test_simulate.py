"""`fmibridge.simulate`: FMPy's call, checked against `fmpy.simulate_fmu` on one FMU.

- The Reference BouncingBall (FMI 2.0 and 3.0) with h = 2 and an output interval
  of 0.01 s: Model Exchange against fmpy's CVode at rtol 1e-10 (the same grid
  and event rows; values within ME_ATOL), Co-Simulation at the same
  communication step (equal to CS_ATOL).
- The Reference Feedthrough driven by a DataFrame with jumps: every output equal
  to fmpy's on the same rows.
- Our BouncingBall driven through its force input `lam`: a step input against
  fmpy (ME_ATOL), and a ramp with a jump against the exact solution (RK4 is exact
  for the cubic h(t) when no step straddles the jump, which the time event
  ensures).
"""

from __future__ import annotations

import os
from pathlib import Path

import fmpy
import numpy as np
import pandas as pd
import pytest

import fmibridge
from fmibridge import FmibridgeError, Halving, Relaxation
from fmibridge.flows.input_table import InputTable
from fmibridge.models import bouncing_ball, bouncing_ball_impacts

FOLDER = os.environ.get("FMIBRIDGE_REFERENCE_FMUS", "")
needs_reference = pytest.mark.skipif(
    not FOLDER or not Path(FOLDER).is_dir(),
    reason="FMIBRIDGE_REFERENCE_FMUS is unset or not a folder (the Reference FMUs)",
)
ME_ATOL = 1e-7  # RK4 at h = 0.01 against CVode at rtol 1e-10 (measured 1.1e-8)
CS_ATOL = 1e-12  # the same FMU stepping the same communication steps
EVENT_ATOL = 1e-6  # s: CVode's event location against ours (t_tol 1e-10)
FEEDTHROUGH = [
    "Float64_continuous_input",
    "Float64_discrete_input",
    "Int32_input",
    "Boolean_input",
]


def reference(version: int, model: str) -> Path:
    return Path(FOLDER) / f"fmi{version}" / f"{model}.fmu"


def structured(frame: pd.DataFrame, types: dict) -> np.ndarray:
    """FMPy's input array from a DataFrame: time first, one field per column."""
    dtype = [(name, types.get(name, np.float64)) for name in frame.columns]
    return np.array(list(frame.itertuples(index=False)), dtype=dtype)


def grid_rows(array: np.ndarray, keep: str = "last") -> np.ndarray:
    """The rows at distinct times: of an event's two rows, `keep` one."""
    t = array["time"]
    if keep == "last":
        return array[np.append(np.diff(t) > 0, True)]
    return array[np.insert(np.diff(t) > 0, 0, True)]


def at_times(array: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The first row at each of `times` (each must be there, to round-off)."""
    rows = np.searchsorted(array["time"], times - 1e-12)
    assert np.abs(array["time"][rows] - times).max() < 1e-12
    return array[rows]


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
def test_bouncing_ball_model_exchange_matches_fmpy(version):
    path = reference(version, "BouncingBall")
    call = dict(stop_time=3, start_values={"h": 2}, output_interval=0.01)
    result = fmibridge.simulate(path, **call)  # Model Exchange where offered
    ref = fmpy.simulate_fmu(
        path, fmi_type="ModelExchange", relative_tolerance=1e-10, **call
    )
    ours = result.to_structured()
    assert result.status.is_success and ours.dtype.names == ref.dtype.names
    assert len(ours) == len(ref) == 301 + 2 * 5  # the grid and five impacts' rows
    assert np.abs(ours["time"] - ref["time"]).max() < EVENT_ATOL
    t = ref["time"]
    assert np.abs(result.event_times - t[1:][np.diff(t) == 0]).max() < EVENT_ATOL
    grid = np.arange(301) * 0.01
    mine, theirs = at_times(ours, grid), at_times(ref, grid)
    for name in ("h", "v"):
        assert np.abs(mine[name] - theirs[name]).max() < ME_ATOL
    assert result["time"] is result.t and result["h"][0] == 2.0


@needs_reference
def test_bouncing_ball_co_simulation_equals_fmpy():
    """FMI 2.0 only: the FMI 3.0 ball has Event Mode, which fmibridge uses and fmpy
    by default does not, so their bounces differ by the FMU's internal step."""
    path = reference(2, "BouncingBall")
    call = dict(stop_time=3, start_values={"h": 2}, output_interval=0.01)
    result = fmibridge.simulate(path, fmi_type="CoSimulation", **call)
    ref = fmpy.simulate_fmu(path, fmi_type="CoSimulation", **call)
    mine = result.to_structured()
    assert len(mine) == len(ref) == 301 and not result.events
    for name in ref.dtype.names:
        assert np.abs(mine[name] - ref[name]).max() <= CS_ATOL


def feedthrough_input() -> pd.DataFrame:
    """Jumps at 0.5 (a repeated time) and 1.5 (held values that change)."""
    return pd.DataFrame(
        {
            "time": [0.0, 0.5, 0.5, 1.0, 1.5, 2.0],
            "Float64_continuous_input": [0.0, 1.0, 3.0, 2.0, 2.0, 0.0],
            "Float64_discrete_input": [0.0, 0.0, 1.0, 1.0, 4.0, 4.0],
            "Int32_input": [0, 0, 2, 2, 5, 5],
            "Boolean_input": [0, 0, 1, 1, 0, 0],
        }
    )


@needs_reference
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("fmi_type", ["ModelExchange", "CoSimulation"])
def test_feedthrough_with_a_dataframe_input_equals_fmpy(version, fmi_type):
    frame = feedthrough_input()
    path = reference(version, "Feedthrough")
    result = fmibridge.simulate(
        path, input=frame, output_interval=0.1, fmi_type=fmi_type
    )
    types = {"Int32_input": np.int32, "Boolean_input": np.bool_}
    ref = fmpy.simulate_fmu(
        path, input=structured(frame, types), output_interval=0.1, fmi_type=fmi_type
    )
    assert result.status.is_success
    assert result.event_times.tolist() == [0.5, 1.5]  # the jumps are time events
    mine = result.to_structured()
    if fmi_type == "CoSimulation":  # fmpy records no event rows there
        mine = grid_rows(mine, keep="first")
    assert np.array_equal(mine["time"], ref["time"])
    outputs = [name.replace("input", "output") for name in FEEDTHROUGH]
    for name in outputs:
        theirs = np.asarray(ref[name], dtype=float)
        assert np.abs(mine[name] - theirs).max() <= CS_ATOL, name
    if fmi_type == "ModelExchange":  # the value after each jump, at the jump
        after = mine[np.flatnonzero(mine["time"] == 0.5)[1]]
        assert after["Float64_continuous_output"] == 3.0 and after["Int32_output"] == 2


def test_a_structured_array_input_is_the_same_as_a_dataframe(fmu_dir):
    frame = pd.DataFrame({"time": [0.0, 0.3, 0.3, 1.0], "lam": [0.0, 0.0, 20.0, 20.0]})
    path = fmu_dir / "BouncingBall.fmu"
    by_frame = fmibridge.simulate(path, input=frame, output_interval=0.1)
    by_array = fmibridge.simulate(
        path, input=structured(frame, {}), output_interval=0.1
    )
    assert np.array_equal(by_frame.x, by_array.x)


def test_a_step_force_input_matches_fmpy(fmu_dir):
    """A piecewise-constant input: fmpy applies it exactly too (its inputs are
    held between output points, so a ramp would differ by O(output_interval))."""
    frame = pd.DataFrame({"time": [0.0, 0.3, 0.3, 1.0], "lam": [0.0, 0.0, 20.0, 20.0]})
    path = fmu_dir / "BouncingBall.fmu"
    result = fmibridge.simulate(path, input=frame, output_interval=0.05)
    ref = fmpy.simulate_fmu(
        path,
        fmi_type="ModelExchange",
        input=structured(frame, {}),
        output_interval=0.05,
        relative_tolerance=1e-10,
    )
    mine = result.to_structured()
    assert np.array_equal(mine["time"], ref["time"])  # with the jump's two rows
    for name in ("h", "v"):
        assert np.abs(mine[name] - ref[name]).max() < ME_ATOL


def exact_ball_with_force(t: np.ndarray, segments) -> np.ndarray:
    """h(t) of h'' = -g + lam(t), h(0) = 1, v(0) = 0, for lam piecewise linear:
    `segments` are (start, end, lam at start, slope)."""
    g, h = 9.81, np.ones_like(t)
    v = np.zeros_like(t)
    for start, end, lam, slope in segments:
        s = np.clip(t - start, 0.0, end - start)
        h, v = (
            h + v * s + (lam - g) * s**2 / 2 + slope * s**3 / 6,
            v + (lam - g) * s + slope * s**2 / 2,
        )
    return h


def test_a_ramp_with_a_jump_is_exact_with_rk4(fmu_dir):
    """RK4 integrates the cubic h(t) exactly where no step straddles the jump at
    0.3 s: the jump is a time event, so the error is round-off, not O(h)."""
    frame = pd.DataFrame({"time": [0.0, 0.3, 0.3, 1.0], "lam": [0.0, 6.0, 20.0, 10.0]})
    path = fmu_dir / "BouncingBall.fmu"
    result = fmibridge.simulate(
        path, input=frame, stop_time=1.0, step_size=0.007, output_interval=0.05
    )
    segments = [(0.0, 0.3, 0.0, 20.0), (0.3, 1.0, 20.0, -10.0 / 0.7)]
    exact = exact_ball_with_force(result.t, segments)
    assert np.abs(result["h"] - exact).max() < 1e-13
    assert result.events[0].t == 0.3 and result.events[0].edge == "time_event"


def test_guards_on_an_fmu_give_the_exact_impacts(fmu_dir):
    def floor(t, x):
        return x[0]

    def bounce(t, x):
        return np.array([x[0], -0.8 * x[1]])

    result = fmibridge.simulate(
        fmu_dir / "BouncingBall.fmu", stop_time=3.0, guards=[(floor, bounce)]
    )
    assert result.provenance["parameters"].startswith("{'h': 0.001")  # stepSize
    assert np.abs(result.event_times - bouncing_ball_impacts(6)).max() < 1e-9


def test_a_hybrid_system_with_t_eval_keeps_the_event_rows():
    t_eval = np.linspace(0.0, 1.0, 11)
    result = fmibridge.simulate(bouncing_ball(), stop_time=1.0, t_eval=t_eval)
    impact = bouncing_ball_impacts(1)[0]
    assert result.t == pytest.approx(sorted([*t_eval, impact, impact]), abs=1e-12)
    assert result["h"][4] == pytest.approx(1.0 - 9.81 / 2 * 0.4**2, abs=1e-12)
    assert result["v"][6] == -0.8 * result["v"][5]  # before and after the reset


def test_zeno_complete_passes_the_zeno_time():
    result = fmibridge.simulate(
        bouncing_ball(), stop_time=5.0, zeno="complete", output_interval=0.5
    )  # the Zeno time is 4.06 s
    assert result.status.is_success and result.mode[-1] == "constrained"
    assert result["time"][-1] == 5.0 and result["h"][-1] == 0.0


def test_a_method_instance_and_the_unilateral_tolerance():
    result = fmibridge.simulate(
        bouncing_ball(), stop_time=1.0, method=Relaxation(h=1e-3, eps=1e-7)
    )
    assert abs(result.events[0].t - bouncing_ball_impacts(1)[0]) < 1e-6
    result = fmibridge.simulate(
        bouncing_ball(), stop_time=0.5, method="unilateral", relative_tolerance=1e-9
    )
    assert "'rtol': 1e-09" in result.provenance["parameters"]


def test_an_adapter_file_with_start_values_and_an_output_interval(fmu_dir):
    root = Path(__file__).resolve().parents[1]
    result = fmibridge.simulate(
        root / "adapters" / "bouncing_ball.toml",
        stop_time=1.0,
        start_values={"e": 0.5, "h": 1.0},
        output_interval=0.25,
    )
    exact = bouncing_ball_impacts(2, e=0.5)  # the second at 0.903 s, not 1.174
    assert np.abs(result.event_times - exact).max() < 1e-9
    assert {0.0, 0.25, 0.5, 0.75, 1.0} <= set(result.t.tolist())
    assert len(result.t) == 5 + 2 * 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input": {"u": 1.0}}, "`input`: give u(t) to the flow"),
        ({"fmi_type": "me"}, "`fmi_type`: a HybridSystem has no FMI interface"),
        ({"guards": [(len, len)]}, "`guards`: add the edges"),
        (
            {"method": Halving(h=1e-3), "relative_tolerance": 1e-6},
            "give it to the Method (its rtol",
        ),
        ({"method": Halving(h=1e-3), "step_size": 1e-2}, "give it to the Method"),
        ({"output_interval": 0.1, "t_eval": [0.0]}, "not both"),
        ({"output_interval": -0.1}, "`output_interval` must be a finite number > 0"),
        ({"t_eval": [0.5, 0.2]}, "strictly increasing"),
        ({"start_values": {"x": 1.0}}, "unknown start value(s) ['x']"),
        ({"zeno": "on"}, "`zeno` must be 'off' or 'complete'"),
        ({"stop_time": 1.0, "step_size": 2.0}, "`step_size` = 2.0 s must not be"),
    ],
)
def test_keywords_that_do_not_apply_are_refused(kwargs, message):
    with pytest.raises(FmibridgeError) as error:
        fmibridge.simulate(bouncing_ball(), **{"stop_time": 1.0, **kwargs})
    assert message in str(error.value)


def test_fmu_inputs_are_checked(fmu_dir):
    path = fmu_dir / "BouncingBall.fmu"
    with pytest.raises(FmibridgeError, match="no variable 'force'"):
        fmibridge.simulate(path, input={"force": 1.0})
    with pytest.raises(FmibridgeError, match="times must not decrease"):
        fmibridge.simulate(path, input={"lam": InputTable([1.0, 0.0], [0.0, 1.0])})
    with pytest.raises(FmibridgeError, match="a structured array with time first"):
        fmibridge.simulate(path, input=[1.0, 2.0])
    with pytest.raises(FmibridgeError, match=r"expected an FMU \(.fmu\), an SSP"):
        fmibridge.simulate(fmu_dir / "system.xml")


def test_plot_draws_each_column_with_its_unit(fmu_dir):
    import matplotlib

    matplotlib.use("Agg")
    result = fmibridge.simulate(fmu_dir / "BouncingBall.fmu", output_interval=0.1)
    axes = result.plot()
    assert [ax.get_ylabel() for ax in axes] == ["h / m", "v / m/s"]
    assert axes[-1].get_xlabel() == "time / s"
    assert np.array_equal(axes[0].lines[0].get_ydata(), result["h"])


def test_an_ssp_runs_like_its_system(fmu_dir, tmp_path):
    """The repository's SSP (a plant and a controller, two FMUs): `simulate` on
    the grid gives the samples of the same run on every step."""
    from fmibridge.formats.ssp import pack_ssp, ssp_system

    root = Path(__file__).resolve().parents[1]
    ssd = root / "fmus" / "systems" / "ControlledStop.ssd"
    ssp = pack_ssp(ssd, fmu_dir, tmp_path / "ControlledStop.ssp")
    result = fmibridge.simulate(ssp, stop_time=0.5, step_size=0.01, output_interval=0.1)
    system = ssp_system(ssp)
    try:
        every_step = Halving(h=0.01).run(system, 0.5)
    finally:
        system.close()
    rows = np.searchsorted(every_step.t, result.t - 1e-12)
    assert result.t.tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert np.abs(every_step.x[rows] - result.x).max() < 1e-12
    with pytest.raises(FmibridgeError, match="an SSP's values are set in its SSD"):
        fmibridge.simulate(ssp, start_values={"plant.x": 1.0})
