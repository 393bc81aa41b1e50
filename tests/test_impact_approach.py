"""An impact fires only on an approaching contact, by default: the precondition of
Or and Ames' eq. 4 (dh qdot < 0) comes from the guard's own rate at the crossing
(`_firing.is_impact`), in Model Exchange from dx/dt and in Co-Simulation from the
step that located the crossing. A crossing where the body recedes is a graze.

The case of issue 39: a drive against a hard stop added by an adapter, the reset
written as a formula (no `approach` key), whose bounces shrink to microseconds
(DriveStop, fmus/DriveStop), run with Halving at h = 1e-3. It stops as Zeno at the
accumulation of an independent event-driven solution (scipy's solve_ivp with
events), with no reset of a receding slider."""

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmibridge import Edge, Guard, Halving, HybridSystem, Mode
from fmibridge.core.result import Status
from fmibridge.flows.native import NativeFlow
from fmibridge.formats.adapters import load_adapter

# DriveStop's parameters (fmus/DriveStop/model.toml)
DRIVE = dict(m=1.0, d=0.1, k_m=1.0, R=1.0, L=0.05, V0=6.0, f=0.5, x_stop=0.02, e=0.5)


def drive_rhs(t: float, x: np.ndarray) -> list[float]:
    """DriveStop's flow: x' = v, m v' = k_m i - d v, L i' = V - R i - k_m v."""
    p = DRIVE
    voltage = p["V0"] * np.sin(2 * np.pi * p["f"] * t)
    return [
        x[1],
        (p["k_m"] * x[2] - p["d"] * x[1]) / p["m"],
        (voltage - p["R"] * x[2] - p["k_m"] * x[1]) / p["L"],
    ]


def _flight(t: float, x: np.ndarray, event) -> tuple[float, np.ndarray]:
    found = solve_ivp(
        drive_rhs, (t, 1.0), x, events=event, rtol=1e-12, atol=1e-15, method="DOP853"
    )
    return found.t_events[0][0], found.y_events[0][0].copy()


def reference() -> tuple[list[float], float]:
    """The impact times until the impact speed is below 1e-7 m/s, and the
    accumulation time: the remaining flights, 2 v e^j / a each (a the slider's
    acceleration into the stop, constant over them), sum to 2 e v / (a (1 - e))."""

    def gap(t, x):
        return DRIVE["x_stop"] - x[0]

    def apex(t, x):  # the slider turns back to the stop
        return x[1]

    gap.terminal, gap.direction = True, -1
    apex.terminal, apex.direction = True, 1
    t, x, times = 0.0, np.zeros(3), []
    while True:
        t, x = _flight(t, x, gap)
        times.append(t)
        if x[1] < 1e-7:
            break
        x[0], x[1] = DRIVE["x_stop"], -DRIVE["e"] * x[1]
        t, x = _flight(t, x, apex)
    e, a = DRIVE["e"], drive_rhs(t, x)[1]
    return times, t + 2 * e * x[1] / (a * (1 - e))


def drive_adapter(tmp_path, fmu_dir, interface: str):
    path = tmp_path / f"drive_{interface}.toml"
    path.write_text(
        f'name = "drive_formula"\nfmu = "{fmu_dir}/DriveStop.fmu"\n'
        f'interface = "{interface}"\nt_end = 0.6\n'
        '[[edges]]\nname = "stop"\nguard = "gap"\nreset = { v = "-e * v" }\n'
        '[method]\nname = "halving"\nh = 1e-3\n'
    )
    return path


@pytest.mark.parametrize("interface", ["me", "cs"])
def test_a_stop_with_a_formula_reset_never_resets_a_receding_slider(
    tmp_path, fmu_dir, interface
):
    """Every impact approaches (v > 0: the gap x_stop - x closes): a slider that
    recedes is never reset back into the stop (its crossings are grazes). The
    first impacts at the reference's times to 1e-9 s (Halving's bracket), the
    Zeno stop before the reference's accumulation at 0.3850278689 s (measured
    5e-7 s (ME) and 1e-8 s before it (CS))."""
    times, accumulation = reference()
    with pytest.warns(Warning, match="Zeno"):
        with load_adapter(drive_adapter(tmp_path, fmu_dir, interface)) as adapter:
            result = adapter.run()
    assert result.status is Status.ZENO
    iv = result.state_names.index("v")
    impacts = [e for e in result.events if e.edge == "stop"]
    assert len(impacts) >= 15
    assert min(e.x_before[iv] for e in impacts) > 0.0  # every one approaching
    # the receding crossings near the accumulation are grazes, and say so
    assert result.stats["n_grazes"] > 0
    assert "without an approach" in result.detail
    np.testing.assert_allclose(
        [e.t for e in impacts[:10]], times[:10], rtol=0, atol=1e-9
    )
    assert abs(result.t[-1] - accumulation) < 1e-5
    assert result.t[-1] < accumulation + 1e-9


def wall_system(x0: float) -> HybridSystem:
    """A unit mass pushed into a wall at x = 0 (x'' = 1) from rest at x0, v ->
    -v/2 there: it reaches the wall at t = sqrt(-2 x0) with v = sqrt(-2 x0), and
    the flights 2 v_k with v_k = v / 2^k add up to 2 v more."""
    flow = NativeFlow(lambda t, x, u: np.array([x[1], 1.0]), ["x", "v"])
    wall = Edge(
        Guard(lambda t, x: -x[0], name="wall"), "m", lambda t, x: x * [1.0, -0.5]
    )
    return HybridSystem([Mode("m", flow, (wall,))], "m", [x0, 0.0])


def test_bounces_into_a_wall_stop_at_their_accumulation():
    """From x0 = -1/8: the first impact at 0.5 s, the accumulation at 1.5 s,
    every reset on an approaching body."""
    with pytest.warns(Warning, match="accumulate at t = 1.5 s"):
        result = Halving(h=1e-2).run(wall_system(-0.125), t_end=3.0)
    assert result.status is Status.ZENO
    assert result.events[0].t == pytest.approx(0.5, abs=1e-9)
    assert min(e.x_before[1] for e in result.events) > 0.0
    assert abs(result.t[-1] - 1.5) < 1e-8


def test_a_body_at_rest_on_the_wall_grazes_and_stops_as_zeno():
    """A body at rest pressed into the wall is no impact (v_n = 0): its
    crossings are grazes, no event, and the run stops where it sticks, without
    the warning meant for an `approach` of the wrong sign (test_halving's
    budget test declares one that always approaches: the reset then fires)."""
    with pytest.warns(Warning, match="sticks to the contact"):
        result = Halving(h=1e-2).run(wall_system(0.0), t_end=3.0)
    assert result.status is Status.ZENO and result.t[-1] == 0.0
    assert len(result.events) == 0 and result.stats["n_grazes"] > 0
    assert "v_n = 0;" in result.detail
    assert "wrong sign" not in result.provenance.get("warnings", "")


def test_an_adapter_edge_on_the_fmus_own_event_says_which_ran(tmp_path, fmu_dir):
    """BouncingBallEvents bounces itself (v -> -0.8 v in its event mode); an
    adapter edge on the same guard (v -> -0.5 v) crosses with it: the FMU's
    event, declared first, runs, at the analytic impact time, and one warning
    says so (once, not at each of the three impacts)."""
    path = tmp_path / "both.toml"
    path.write_text(
        f'fmu = "{fmu_dir}/BouncingBallEvents.fmu"\ninterface = "me"\nt_end = 2.0\n'
        "[parameters]\ne = 0.8\n"
        '[[edges]]\nname = "floor"\nguard = "h"\nreset = { v = "-0.5 * v" }\n'
        '[method]\nname = "halving"\nh = 1e-3\n'
    )
    with pytest.warns(Warning, match="crossed together") as caught:
        with load_adapter(path) as adapter:
            result = adapter.run()
    said = [w for w in caught if "crossed together" in str(w.message)]
    assert len(said) == 1
    assert "'fmu_event_0' ran" in str(said[0].message)
    assert "'floor' did not apply" in str(said[0].message)
    assert len(result.events) == 3  # at 0.45, 1.17, 1.75 s
    assert all(e.simultaneous == ("floor",) for e in result.events)
    first = result.events[0]
    assert first.t == pytest.approx(np.sqrt(2 / 9.81), abs=1e-9)
    assert first.x_after[1] == pytest.approx(-0.8 * first.x_before[1], rel=1e-12)


ADAPTERS = Path(__file__).resolve().parent.parent / "adapters"


@pytest.mark.parametrize(("interface", "h"), [("me", 1e-3), ("cs", 1e-2), ("cs", 1e-3)])
def test_a_coupled_stop_without_approach_key_resets_no_receding_mass(
    tmp_path, fmu_dir, interface, h
):
    """adapters/controlled_stop_pressed.toml (two FMUs, the mass pressed into its
    stop by its controller) without its `approach` key: the default precondition
    still resets no receding mass, and the Zeno stop is where the run with the key
    stops, well within CS's coupling error (1e-3 s from ME at h = 1e-3; measured:
    ME the same run, CS 5.4e-7 s and 9.2e-7 s apart)."""
    text = (ADAPTERS / "controlled_stop_pressed.toml").read_text()
    text = text.replace('"../fmus/build/', f'"{fmu_dir}/')
    runs = []
    for k, kept in enumerate((text, text.replace('approach = "-plant.v"', ""))):
        path = tmp_path / f"pressed_{k}.toml"
        path.write_text(kept)
        options = {"interface": interface, "method_options": {"h": h}}
        with pytest.warns(Warning, match="Zeno"):
            with load_adapter(path, **options) as adapter:
                runs.append(adapter.run())
    keyed, default = runs
    iv = default.state_names.index("plant.v")
    assert default.status is Status.ZENO and keyed.status is Status.ZENO
    assert len(default.events) >= 25
    assert min(e.x_before[iv] for e in default.events) > 0.0
    assert abs(default.t[-1] - keyed.t[-1]) < 1e-5
