"""Adapter files: every adapter runs; bad files give one clear error."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fmibridge import AdapterError, FmibridgeError
from fmibridge.cli import main
from fmibridge.core.errors import FmibridgeWarning
from fmibridge.core.result import Status
from fmibridge.formats.adapters import load_adapter
from fmibridge.formats.expressions import Expression
from fmibridge.models import bouncing_ball_impacts

ADAPTERS = sorted((Path(__file__).parent.parent / "adapters").glob("*.toml"))
# Its impacts accumulate at 1.458 s (a Zeno stop, exit code 1): run it to before.
STOP_TIMES = {"controlled_stop_pressed": 1.4}
# Events of each adapter over its own t_end: the count a run without the approach
# precondition (`Edge.approach`) gives too, event times bit for bit, but for
# controlled_stop_pressed, where the precondition keeps a receding mass from resets.
EVENTS = {
    "ball_on_sine_surface": 2,
    "ball_on_spring_table": 20,
    "bouncing_ball": 6,
    "bouncing_ball_events": 6,
    "controlled_stop": 7,
    "controlled_stop_cs": 7,
    "controlled_stop_pressed": 33,
    "controlled_stop_single": 7,
    "controlled_stop_ssp": 7,
    "dc_motor_stop": 12,
    "drive_stop": 12,
    "drive_stop_forced": 12,
    "forced_oscillator": 49,
    "knee_pendulum": 4,
    "newtons_cradle": 4,
    "pronk": 6,
}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=[a.stem for a in ADAPTERS])
def test_every_adapter_runs_from_the_cli_and_writes_a_csv(fmu_dir, adapter, tmp_path):
    out = tmp_path / f"{adapter.stem}.csv"
    stop = STOP_TIMES.get(adapter.stem, 2.0)
    assert (
        main(
            [
                "run",
                str(adapter),
                "--stop-time",
                str(stop),
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    frame = pd.read_csv(out, index_col="time")
    assert frame.index[-1] == stop and "mode" in frame.columns
    if "lam" in frame.columns:  # completion's contact force: set in contact only
        assert np.all(np.isfinite(frame["lam"][frame["mode"] == "constrained"]))
        frame = frame.drop(columns="lam")
    assert np.all(np.isfinite(frame.drop(columns="mode").to_numpy()))


def test_ball_adapter_gives_exact_impacts(fmu_dir):
    with load_adapter(ADAPTERS[0].parent / "bouncing_ball.toml") as adapter:
        result = adapter.run()
    errors = result.event_times[:5] - bouncing_ball_impacts(5)
    assert np.max(np.abs(errors)) < 1e-8


def test_outputs_that_are_not_states_become_columns(fmu_dir):
    path = ADAPTERS[0].parent / "forced_oscillator.toml"
    with load_adapter(path, t_end=1.0) as adapter:
        result = adapter.run()
    np.testing.assert_allclose(result["gap"], 14.0 - result["x"], rtol=0, atol=1e-12)


def write(tmp_path, text, fmu_dir):
    path = tmp_path / "model.toml"
    path.write_text(f'fmu = "{fmu_dir / "BouncingBall.fmu"}"\n' + text)
    return path


@pytest.mark.parametrize(
    "guard",
    [
        "__import__('os').system('echo hacked')",
        "open('/etc/passwd')",
        "h.__class__",
        "[x for x in ()]",
        "(lambda: 1)()",
        "'text'",
    ],
)
def test_expressions_that_try_to_run_code_are_rejected(tmp_path, fmu_dir, guard):
    path = write(tmp_path, f'[[edges]]\nguard = "{guard}"\n', fmu_dir)
    with pytest.raises(
        AdapterError, match=r"(?s)model.toml: 1 problem.*edges\[0\]\.guard"
    ):
        load_adapter(path)


def test_every_problem_in_a_file_is_listed_in_one_error(tmp_path, fmu_dir):
    """Seven mistakes over every part of the file, each with its key path, in
    one error (they came in three rounds: keys, values, then the FMU's names)."""
    path = write(
        tmp_path,
        """
colour = "red"
[parameters]
gravity = 1.0
e = "high"
[inputs]
lamda = 1.0
[[edges]]
guard = "height"
reset = { g = "1.0" }
[method]
name = "halving"
eps = 1e-3
[output]
variables = ["h", "speed"]
""",
        fmu_dir,
    )
    with pytest.raises(AdapterError) as info:
        load_adapter(path)
    message = str(info.value)
    assert "8 problem(s)" in message
    for key, text in [
        ("colour", "unknown key"),
        ("parameters.gravity", "the FMU has no variable 'gravity'."),
        ("parameters.e", "must be a number, got 'high'"),
        ("inputs.lamda", "the FMU has no variable 'lamda' (did you mean 'lam'?)."),
        ("edges[0].guard", "unknown name(s) ['height']"),
        ("edges[0].reset.g", "the reset writes 'g', which is not a state"),
        ("method", "Method 'halving' takes no option(s) ['eps']"),
        ("output.variables", "unknown variable 'speed'"),
    ]:
        assert f"[{key}] {text}" in message, key


def test_unknown_parameter_names_the_file_and_variable(tmp_path, fmu_dir):
    path = write(tmp_path, "[parameters]\ngravity = 1.0\n", fmu_dir)
    with pytest.raises(
        AdapterError,
        match=r"(?s)1 problem.*\[parameters.gravity\] .*no variable 'gravity'",
    ):
        load_adapter(path)


def test_unknown_output_key_is_named(tmp_path, fmu_dir):
    path = write(tmp_path, '[output]\nvariables = ["h"]\nfile = "h.csv"\n', fmu_dir)
    with pytest.raises(
        AdapterError, match=r"(?s)1 problem.*\[output.file\] unknown key"
    ):
        load_adapter(path)


def test_malformed_expression(tmp_path, fmu_dir):
    path = write(tmp_path, '[[edges]]\nguard = "h +* 2"\n', fmu_dir)
    with pytest.raises(AdapterError, match=r"malformed expression 'h \+\* 2'"):
        load_adapter(path)


def test_missing_fmu_in_adapter(tmp_path):
    path = tmp_path / "model.toml"
    path.write_text('fmu = "nowhere.fmu"\n')
    with pytest.raises(
        FmibridgeError,
        match=r"(?s)model.toml: 1 problem.*\[fmu\] .*nowhere.fmu does not exist",
    ):
        load_adapter(path)


def test_missing_adapter_file_is_one_line_from_the_cli(capsys, tmp_path):
    assert main(["run", str(tmp_path / "none.toml")]) == 2
    assert capsys.readouterr().err.startswith("fmibridge: error: ")


def test_info_lists_variables_and_capabilities(fmu_dir, capsys):
    assert main(["info", str(fmu_dir / "BouncingBallEvents_fmi3.fmu")]) == 0
    out = capsys.readouterr().out
    assert "FMI 3.0" in out and "CoSimulation: canGetAndSetFMUstate" in out
    assert "event indicators: 1" in out and "cs_substep" in out


def test_expression_evaluator_basics():
    assert Expression.parse("max(h, 0) + sqrt(4) * pi", {"h"})({"h": -1.0}) == 2 * np.pi
    assert Expression.parse("1 if h > 0 else -1", {"h"})({"h": 2.0}) == 1
    with pytest.raises(FmibridgeError, match="keyword arguments"):
        Expression.parse("max(h, key=1)", {"h"})


@pytest.mark.parametrize(
    "name, q0, v0, t_end",
    [
        ("knee_pendulum", [0.5235987755982988, 0.4363323129985824], [0.0, 0.0], 3.0),
        ("ball_on_sine_surface", [0.0, 2.0], [1.5, 0.0], 2.5),
    ],
)
def test_impact_law_from_the_fmu_matches_the_native_lagrangian_model(
    fmu_dir, name, q0, v0, t_end
):
    """reset = "impact": Or and Ames eq. (4) from the FMU's response to `lam`."""
    from fmibridge import Halving
    from fmibridge.models.lagrangian import to_hybrid
    from fmibridge.models.or_ames import knee_pendulum, sine_ball

    model = knee_pendulum() if name == "knee_pendulum" else sine_ball()
    native = Halving(h=1e-3).run(to_hybrid(model, q0, v0), t_end)
    with load_adapter(ADAPTERS[0].parent / f"{name}.toml", t_end=t_end) as adapter:
        through_fmu = adapter.run()
    assert len(native.events) == len(through_fmu.events) == 2
    np.testing.assert_allclose(
        through_fmu.event_times, native.event_times, rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(through_fmu.x[-1], native.x[-1], rtol=0, atol=1e-10)


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_pronk_touches_down_with_both_feet_at_once(fmu_dir, interface):
    """Mode inputs (contact) and held inputs (foot positions) through the Pronk FMU."""
    path = ADAPTERS[0].parent / "pronk.toml"
    with load_adapter(path, t_end=0.7, interface=interface) as adapter:
        result = adapter.run()
    first, second, third, fourth = result.events[:4]
    assert (first.edge, first.target) == ("touchdown_front", "front")
    assert first.simultaneous == ("touchdown_rear",)
    assert (second.edge, second.target, second.t) == ("touchdown_rear", "both", first.t)
    assert (third.edge, fourth.edge) == ("liftoff_front", "liftoff_rear")
    names = list(result.state_names)
    front, rear = names.index("foot_front_x"), names.index("foot_rear_x")
    # each foot is pinned where its swing foot was at touchdown: d = 1 apart
    assert second.x_after[front] - second.x_after[rear] == pytest.approx(1.0, abs=1e-12)


def test_pronk_pitching_touches_down_one_foot_after_the_other(fmu_dir, tmp_path):
    text = (
        (ADAPTERS[0].parent / "pronk.toml")
        .read_text()
        .replace("vtheta = 0.0", "vtheta = -0.4")
        .replace('"../fmus/build/', f'"{fmu_dir}/')
    )
    path = tmp_path / "pronk_pitching.toml"
    path.write_text(text)
    with load_adapter(path, t_end=0.4) as adapter:
        result = adapter.run()
    first, second = result.events[:2]
    assert first.simultaneous == () and second.t - first.t > 1e-3
    assert {first.edge, second.edge} == {"touchdown_front", "touchdown_rear"}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=[a.stem for a in ADAPTERS])
def test_every_adapter_gives_its_events(fmu_dir, adapter):
    if adapter.stem == "controlled_stop_pressed":  # to its Zeno stop
        result = pressed("cs", 1e-3)[0]
    else:
        with load_adapter(adapter) as loaded:
            result = loaded.run()
        assert result.status is Status.REACHED_END
    assert len(result.events) == EVENTS[adapter.stem]


def pressed(interface: str, h: float, locate: str = "halving"):
    """controlled_stop_pressed.toml run to its Zeno stop: (result, accumulation)."""
    path = ADAPTERS[0].parent / "controlled_stop_pressed.toml"
    options = {"h": h, "locate": locate}
    with load_adapter(path, interface=interface, method_options=options) as adapter:
        with pytest.warns(FmibridgeWarning, match="Zeno"):
            result = adapter.run()
    assert result.status is Status.ZENO
    accumulation = float(re.search(r"accumulate at t = ([0-9.]+)", result.detail)[1])
    return result, accumulation


def test_cs_adapter_never_resets_a_receding_body(fmu_dir):
    """The stop's `approach = "-plant.v"` (d(gap)/dt): in CS the crossings of
    a receding mass are grazes, logged, not resets that push it back into the
    stop; the first impact and the accumulation agree with the ME coupling to
    the coupling error, first order in h: h ten times smaller, the error ten
    times smaller (measured: 3.5e-3 s, 3.5e-4 s; 1.1e-2 s, 1.0e-3 s)."""
    me, t_me = pressed("me", 1e-3)
    iv = me.state_names.index("plant.v")
    # ME resolves the series to impacts of 5e-8 m/s (36; 26 when steps of
    # 1e-10 s crawled on the surface, `_halving._on_surface`), each approaching
    assert len(me.events) == 36 and all(e.x_before[iv] > 0.0 for e in me.events)
    errors = []
    for h, n_events in ((1e-2, 34), (1e-3, 33)):
        cs, t_cs = pressed("cs", h)
        assert len(cs.events) == n_events
        assert all(e.x_before[iv] > 0.0 for e in cs.events)  # approaching, each
        assert cs.stats["n_grazes"] == 100 and "stop" in cs.provenance["grazes"]
        assert "without an approach" in cs.detail
        errors.append((abs(cs.events[0].t - me.events[0].t), abs(t_cs - t_me)))
    assert 3e-3 < errors[0][0] < 4e-3 and 3e-4 < errors[1][0] < 4e-4
    assert 1e-2 < errors[0][1] < 1.2e-2 and 9e-4 < errors[1][1] < 1.1e-3


def test_cs_adapter_approached_sticks_where_halving_stops(fmu_dir):
    """Approached (`locate="approach"`: no step undone), the pressed mass's
    impacts accumulate as halving's do; then it sits on the stop and the
    steps crawl at its surface: a Zeno stop that names the guard, not a bare
    "time does not advance", at halving's stop time to 1e-5 s (measured: 28
    impacts against 33, each on an approaching mass, stopped 3e-6 s apart)."""
    halved, _ = pressed("cs", 1e-3)
    approached, _ = pressed("cs", 1e-3, "approach")
    iv = approached.state_names.index("plant.v")
    assert all(e.x_before[iv] > 0.0 for e in approached.events)
    assert 20 <= len(approached.events) <= len(halved.events)
    assert "sticks to guard 'stop'" in approached.detail
    assert abs(approached.t[-1] - halved.t[-1]) < 1e-5


def test_an_impact_reset_approaches_by_the_rate_of_its_gap(fmu_dir):
    """A reset "impact" gets the approach precondition from its [constraint]:
    the gap's rate dh(q) qdot (`Contact.rate`), here -v for x_stop - x."""
    with load_adapter(ADAPTERS[0].parent / "drive_stop.toml", t_end=0.5) as adapter:
        (stop,) = [e for m in adapter.system.modes.values() for e in m.edges]
        result = adapter.run()
        iv = result.state_names.index("v")
        impacts = [e for e in result.events if e.edge == "stop"]
        rates = [stop.approach(e.t, e.x_before) for e in impacts]
    assert len(impacts) == 10
    np.testing.assert_allclose(rates, [-e.x_before[iv] for e in impacts], rtol=1e-12)
    assert max(rates) < 0.0


def test_a_bad_approach_names_its_key(tmp_path, fmu_dir):
    path = write(tmp_path, '[[edges]]\nguard = "h"\napproach = "w"\n', fmu_dir)
    with pytest.raises(
        AdapterError, match=r"(?s)1 problem.*\[edges\[0\]\.approach\] unknown name"
    ):
        load_adapter(path)


@pytest.mark.parametrize(
    "name", ["controlled_stop", "controlled_stop_cs", "controlled_stop_ssp"]
)
def test_coupled_and_ssp_adapters_read_the_approach_key(fmu_dir, name):
    """`approach = "-plant.v"` on a coupled adapter, in ME, CS and from an SSP:
    the first impact (at 0.5654 s) approaches at v_n = -v < 0."""
    with load_adapter(ADAPTERS[0].parent / f"{name}.toml", t_end=1.0) as adapter:
        (stop,) = [e for m in adapter.system.modes.values() for e in m.edges]
        result = adapter.run()
        (impact,) = result.events
        v = impact.x_before[result.state_names.index("plant.v")]
        assert stop.approach(impact.t, impact.x_before) == pytest.approx(-v, rel=1e-12)
    assert impact.t == pytest.approx(0.5654, abs=2e-4) and v > 1.0
