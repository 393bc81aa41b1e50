"""What a Co-Simulation coupling costs: FMU states saved only where a guard may be
crossed, none for a plain run, and no reset or re-initialisation for recording.

The expected event times and states are those of a run that saves every FMU's
state at every communication step: saving less must not change them, bit for bit.
How many states are saved and steps replayed depends on the costs the master
compares; the tests fix them (`StepUnits`, through `CoupledCoSimulation.costs`)
where they count, and check rent or buy with the costs measured where they run
as users do, so that no count depends on the machine's speed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fmibridge import Halving, HybridSystem, Mode
from fmibridge.core.errors import FmibridgeError, FmibridgeWarning, FMUError
from fmibridge.core.system import Edge, Guard
from fmibridge.flows import cosim_master
from fmibridge.flows.cosim_master import CHEAP_SAVE, Communication, MeasuredCosts
from fmibridge.flows.coupled import couple
from fmibridge.flows.fmu import CoSimulationFlow, open_fmu
from fmibridge.formats.adapters import load_adapter
from fmibridge.methods.forecast import CrossingForecast

ROOT = Path(__file__).resolve().parent.parent
CONNECTIONS = (
    ("plant.x", "controller.x_meas"),
    ("plant.v", "controller.v_meas"),
    ("controller.F", "plant.F"),
)
# impacts of the guarded pair below and of controlled_stop_cs.toml with every
# state saved at every step; the pair's state at 3 s (plant x, v; controller z)
# and controller.F there
PAIR_IMPACTS = [0.565923679897323, 2.886296686136261]
PAIR_END = [0.8442132105847567, -0.9595766150689702, 0.4391579676934219]
PAIR_F_END = 12.177204303522338
ADAPTER_IMPACTS = [
    0.565392606066613, 2.8885484760170503, 3.336694586250561, 5.3992042083964735,
    5.842220256907456, 7.907077791674802, 8.342954451903692,
]  # fmt: skip


@pytest.fixture
def resets(monkeypatch):
    """Count the re-initialisations of Co-Simulation FMUs (reset + initialize):
    "n" all, "again" those that enter a point a reset entered before, by the
    same calls (`CoSimulationFlow._reenter`, in place of a saved state)."""
    count = {"n": 0, "again": 0}
    original, reenter = CoSimulationFlow._reinitialize, CoSimulationFlow._reenter

    def counted(self, t, x):
        count["n"] += 1
        return original(self, t, x)

    def counted_again(self, t, x):
        count["again"] += (t, x.tobytes()) != self._origin
        return reenter(self, t, x)

    monkeypatch.setattr(CoSimulationFlow, "_reinitialize", counted)
    monkeypatch.setattr(CoSimulationFlow, "_reenter", counted_again)
    return count


@pytest.fixture
def timeline(monkeypatch):
    """Each state save the master asks of a Co-Simulation FMU, as ("keep", FMU,
    t), in order with the replays the cost models below add ("replay", name,
    cost): a save resets the replays' rent (`_save_after_replay`)."""
    events: list[tuple] = []
    keep = CoSimulationFlow.keep

    def kept(self):
        events.append(("keep", self, self._at[0]))
        return keep(self)

    monkeypatch.setattr(CoSimulationFlow, "keep", kept)
    return events


class StepUnits:
    """Fixed costs (`cosim_master.Costs`) in plain steps: a step and a doStep
    cost 1, a replay of n steps n, a save of component `name` saves[name]. The
    decisions then follow from the rule alone, the same on every machine."""

    def __init__(self, saves: dict[str, float], timeline: list[tuple]) -> None:
        self.saves, self.timeline = saves, timeline

    def save(self, name: str) -> float:
        return self.saves[name]

    def step(self) -> float:
        return 1.0

    def do_step(self, name: str) -> float:
        return 1.0

    def replay(self, name: str, n_steps: int, seconds: float) -> float:
        self.timeline.append(("replay", name, float(n_steps)))
        return float(n_steps)


class TimedCosts(MeasuredCosts):
    """The costs the run measures (the default), each replay's added to the
    timeline and the largest save cost the decisions read kept."""

    def __init__(self, master, timeline: list[tuple]) -> None:
        super().__init__(master)
        self.timeline, self.largest_save = timeline, {}

    def save(self, name: str) -> float:
        cost = super().save(name)
        self.largest_save[name] = max(cost, self.largest_save.get(name, 0.0))
        return cost

    def replay(self, name: str, n_steps: int, seconds: float) -> float:
        self.timeline.append(("replay", name, seconds))
        return seconds


def rents(timeline: list[tuple], name: str, fmu) -> list[list[float]]:
    """The costs of component `name`'s replays (its FMU: fmu) between two of
    its saves, one list per stretch that has any."""
    stretches: list[list[float]] = [[]]
    for kind, who, value in timeline:
        if kind == "keep" and who is fmu:
            stretches.append([])
        elif kind == "replay" and who == name:
            stretches[-1].append(value)
    return [stretch for stretch in stretches if stretch]


def assert_rent_or_buy(timeline, name, fmu, save_cost) -> None:
    """Rent or buy (`_save_after_replay`): a replay after which the FMU is not
    saved leaves the rent plus at least one more such replay below a save's
    cost, so between two saves the replays but the last cost less than a save."""
    for stretch in rents(timeline, name, fmu):
        assert sum(stretch) - stretch[-1] < save_cost, (name, stretch, save_cost)


SAVES = {"MassSpringStop": 1.0, "MassSpringStopSlowSave": 40.0}  # in steps


def pair(fmu_dir, plant="MassSpringStop", build=""):
    """MassSpringStop (or its slow-save twin) driven by PositionController, in CS
    (build: "" for FMI 2.0, "_fmi3" for FMI 3.0)."""
    parts = {
        "plant": open_fmu(fmu_dir / f"{plant}{build}.fmu", "cs"),
        "controller": open_fmu(fmu_dir / f"PositionController{build}.fmu", "cs"),
    }
    return couple(parts, CONNECTIONS, communication=Communication("jacobi"))


def with_stop(flow):
    def bounce(t, x):
        return np.array([x[0], -0.6 * x[1], x[2]])

    stop = Edge(Guard(lambda t, x: 1.0 - x[0], "falling"), "run", bounce, "stop")
    return HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)


def run_pair(fmu_dir, plant, build, costs, timeline):
    """Halving over the guarded pair to 3 s, the decisions reading the costs
    model costs(master, timeline); return the result, the coupled flow, each
    component's FMU, and the run's saves and replays in order (`timeline`)."""
    flow = pair(fmu_dir, plant, build)
    flow.costs, start = costs(flow, timeline), len(timeline)
    system = with_stop(flow)
    try:
        result = Halving(h=0.01).run(system, 3.0)
    finally:
        system.close()
    fmus = {c.name: c.flow for c in flow.components}
    return result, flow, fmus, timeline[start:]


def saved(events: list[tuple], fmu) -> list[float]:
    """The times at which the FMU was saved, in a run's `timeline`."""
    return [t for kind, who, t in events if kind == "keep" and who is fmu]


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize("plant", ["MassSpringStop", "MassSpringStopSlowSave"])
def test_a_guarded_pair_saves_only_near_its_impacts(fmu_dir, resets, plant):
    """The same impacts and states, bit for bit, whether the points a halving
    returns to were saved or (the slow save) replayed from a saved one. An FMU
    is saved only before a step that may be undone, at a point the run does
    not return to otherwise, so, whatever the costs measured, no more often
    than where both FMUs are saved before every such step (fixed costs of one
    step each, `StepUnits`), itself far below a save per step."""
    units = {"plant": 1.0, "controller": 1.0}
    _, _, fmus, _ = run_pair(
        fmu_dir, "MassSpringStop", "", lambda _, t: StepUnits(units, t), []
    )
    most_saves = sum(fmu.n_state_saves for fmu in fmus.values())
    flow = pair(fmu_dir, plant)
    flow.record(["plant.x", "controller.F"])
    system = with_stop(flow)
    try:
        first = Halving(h=0.01).run(system, 3.0)
        resets["n"] = 0
        again = Halving(h=0.01).run(system, 3.0)  # re-enters t0 in the open FMUs
    finally:
        system.close()
    for result in (first, again):
        assert result.event_times.tolist() == PAIR_IMPACTS
        assert result.x[-1].tolist() == PAIR_END
        assert result.outputs["controller.F"][-1] == PAIR_F_END
        assert int(result.provenance["fmu_state_saves"]) <= most_saves
        assert most_saves < result.stats["n_steps"]  # 2 FMUs: a save per step
    # at most the run's start (t0 in each FMU) and each impact's reset of the
    # plant's velocity (it refuses setting a state in step mode), fewer where a
    # state the first run saved there is still kept; none for the 219 samples
    assert resets["n"] <= 2 + len(PAIR_IMPACTS)
    assert np.array_equal(first.outputs["controller.F"], again.outputs["controller.F"])
    assert np.array_equal(first.x, again.x)


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize("build", ["", "_fmi3"])
def test_a_slow_save_is_replayed_alone_and_saved_where_the_search_returns(
    fmu_dir, timeline, build
):
    """The plant whose save spends 0.5 ms of CPU (its model.toml's
    state_save_cost) returns to the points Halving undoes by replaying its own
    steps with the inputs it had, and is saved where a search returns: the
    same run, bit for bit, as the pair with cheap saves, in FMI 2.0 and 3.0,
    with the costs this machine measures. How many saves and replays that
    takes depends on the machine's speed (the fixed costs below count them);
    what holds on any machine is rent or buy with the costs the run measured:
    for each FMU, between two of its saves its replays but the last cost less
    than the largest save cost the decisions read."""
    runs = {}
    for plant in ("MassSpringStop", "MassSpringStopSlowSave"):
        runs[plant] = run_pair(fmu_dir, plant, build, TimedCosts, timeline)
    (cheap, *_), (slow, *_) = runs.values()
    assert slow.event_times.tolist() == cheap.event_times.tolist() == PAIR_IMPACTS
    assert np.array_equal(slow.t, cheap.t) and np.array_equal(slow.x, cheap.x)
    for _, flow, fmus, events in runs.values():
        for name, fmu in fmus.items():
            largest = flow.costs.largest_save.get(name, 0.0)
            assert_rent_or_buy(events, name, fmu, largest)


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize("build", ["", "_fmi3"])
@pytest.mark.parametrize("save", [CHEAP_SAVE, 6.0, 40.0])
def test_fixed_costs_give_the_saves_and_replays_the_rule_gives(
    fmu_dir, timeline, build, save
):
    """With the costs fixed in plain steps (`StepUnits`: the controller's save
    costs 1, the plant's `save`), the saves and replays follow from the rule
    alone. The reference saves both FMUs before every step that may be undone
    (saves of 1 step). The controller, whose save costs 1 <= CHEAP_SAVE steps,
    does so in every run, replays nothing, and so saves as often as in the
    reference (the same steps: the results are the same, bit for bit). The
    plant, where its save costs at most CHEAP_SAVE steps, does the same; where
    it costs more, it is saved only where it cannot replay (no point it can
    return to within `_replay_limit` steps) and where its replays' rent
    reaches the save (`assert_rent_or_buy`): never at the start or right after
    an impact, which it enters again by the calls that entered it first, and
    it replays (a halving's return to the middle of its bracket, one step from
    the bracket's start). The plant without a slow save, given the same costs,
    saves and replays the same: the decisions depend on the costs alone."""
    unit = {"plant": 1.0, "controller": 1.0}
    reference, _, ref_fmus, ref_events = run_pair(
        fmu_dir, "MassSpringStop", build, lambda _, t: StepUnits(unit, t), timeline
    )
    costs = {"plant": save, "controller": 1.0}
    runs = [
        run_pair(fmu_dir, plant, build, lambda _, t: StepUnits(costs, t), timeline)
        for plant in ("MassSpringStopSlowSave", "MassSpringStop")
    ]
    result, flow, fmus, events = runs[0]
    replayed = flow.n_steps_replayed
    ref_saves = {name: fmu.n_state_saves for name, fmu in ref_fmus.items()}
    saves = {name: fmu.n_state_saves for name, fmu in fmus.items()}
    assert result.event_times.tolist() == reference.event_times.tolist()
    assert result.event_times.tolist() == PAIR_IMPACTS
    assert np.array_equal(result.t, reference.t)
    assert np.array_equal(result.x, reference.x)
    assert saves["controller"] == ref_saves["controller"] == ref_saves["plant"]
    assert replayed["controller"] == 0
    if save <= CHEAP_SAVE:
        assert saves["plant"] == ref_saves["plant"] and replayed["plant"] == 0
    else:
        assert replayed["plant"] > 0
        rent = rents(events, "plant", fmus["plant"])
        assert replayed["plant"] == sum(sum(stretch) for stretch in rent)
        assert_rent_or_buy(events, "plant", fmus["plant"], save)
        plant_saved_at = saved(events, fmus["plant"])  # each keep a save
        assert len(plant_saved_at) == saves["plant"]
        assert not {0.0, *PAIR_IMPACTS} & set(plant_saved_at)
    # the plain plant given the slow one's costs: the same decisions
    _, same, same_fmus, same_events = runs[1]
    assert same.n_steps_replayed == replayed
    assert {name: fmu.n_state_saves for name, fmu in same_fmus.items()} == saves
    assert [event[::2] for event in same_events] == [event[::2] for event in events]


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize(
    ("scheme", "inputs", "build"),
    [("jacobi", "hold", ""), ("gauss-seidel", "extrapolate", "_fmi3")],
)
def test_a_slow_save_second_in_the_coupling_replays_its_own_part(
    fmu_dir, scheme, inputs, build
):
    """The slow-save plant as the second component (the controller first): its
    replay reads its own inputs and states, which are not the first in the
    step's vectors (`CommunicationStep.replay`'s offsets; the tests above have
    the plant first). Every replayed step checked bit for bit (a miss would
    warn, an error here), the run the cheap pair's bit for bit. With the costs
    fixed (`StepUnits`: a plant's save 40 steps, the controller's 1) the plant
    replays (it is saved only where it cannot replay or its rent reaches a
    save), the controller (a save of at most CHEAP_SAVE steps, saved before
    each step that may be undone) replays none."""

    def bounce(t, x):  # states: controller.z, plant.x, plant.v
        return np.array([x[0], x[1], -0.6 * x[2]])

    runs = {}
    for plant in ("MassSpringStop", "MassSpringStopSlowSave"):
        parts = {
            "controller": open_fmu(fmu_dir / f"PositionController{build}.fmu", "cs"),
            "plant": open_fmu(fmu_dir / f"{plant}{build}.fmu", "cs"),
        }
        flow = couple(parts, CONNECTIONS, communication=Communication(scheme, inputs))
        flow.costs = StepUnits({"plant": 40.0, "controller": 1.0}, [])
        assert flow.state_names == ("controller.z", "plant.x", "plant.v")
        stop = Edge(Guard(lambda t, x: 1.0 - x[1], "falling"), "run", bounce, "stop")
        system = HybridSystem([Mode("run", flow, [stop])], "run", flow.x0)
        try:
            runs[plant] = Halving(h=0.01).run(system, 3.0), flow.n_steps_replayed
        finally:
            system.close()
    (cheap, cheap_replayed), (slow, slow_replayed) = runs.values()
    assert len(slow.events) == 2
    assert slow.event_times.tolist() == cheap.event_times.tolist()
    if scheme == "jacobi":  # Jacobi steps both from the values at t: any order
        assert slow.event_times.tolist() == PAIR_IMPACTS
    assert np.array_equal(slow.t, cheap.t) and np.array_equal(slow.x, cheap.x)
    assert slow_replayed["plant"] > 0 and slow_replayed["controller"] == 0


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
def test_a_slow_save_beside_a_component_called_back_replays_whole_steps(fmu_dir):
    """The slow-save plant (called from C) beside the controller as a Model
    Exchange FMU (called back, integrated by the master): the step is not
    direct, so the plant's returns replay the master's whole steps from a
    point both saved (`_return_to`), checked against the point's states (a
    miss would enter by a reset, with a warning: an error here): the same
    impacts, t and x bit for bit as with the cheap plant. With the costs fixed
    (`StepUnits`), the cheap plant's save costs one step: it is saved before
    every step that may be undone (no chain of steps is cheaper) and replays
    none. The slow plant's costs 40 steps: it replays chains of at most
    MAX_REPLAY (32) steps from a saved point, cheaper than its save, and is
    saved only where none is that near: before the first bracket (56 steps
    after the start), and at no point the cheap plant was not saved at."""
    runs = {}
    for plant, save in (("MassSpringStop", 1.0), ("MassSpringStopSlowSave", 40.0)):
        parts = {
            "plant": open_fmu(fmu_dir / f"{plant}.fmu", "cs"),
            "controller": open_fmu(fmu_dir / "PositionController.fmu", "me"),
        }
        flow = couple(parts, CONNECTIONS, communication=Communication("jacobi"))
        assert not flow._compiled.direct  # the controller is called back
        flow.costs = StepUnits({"plant": save}, [])
        system = with_stop(flow)
        try:
            result = Halving(h=0.01).run(system, 3.0)
        finally:
            system.close()
        runs[plant] = result, flow.n_steps_replayed["plant"], flow.n_state_saves
    (cheap, cheap_replayed, cheap_saves), (slow, replayed, saves) = runs.values()
    assert len(slow.events) == 2
    assert slow.event_times.tolist() == cheap.event_times.tolist()
    assert np.max(np.abs(slow.event_times - PAIR_IMPACTS)) < 1e-9  # CS vs ME
    assert np.array_equal(slow.t, cheap.t) and np.array_equal(slow.x, cheap.x)
    assert cheap_replayed == 0 and replayed > 0
    assert 0 < saves <= cheap_saves


def test_a_replay_that_differs_is_said_and_entered_by_a_reset(fmu_dir, monkeypatch):
    """Inputs recorded wrong (1 N off the plant's force) make the plant's own
    replay reach other states: it stops at the first step, says so, and the
    plant enters the point by a reset (exact here: its state variables are
    its whole state), so the run is the same."""
    recorded = cosim_master.step_done

    def recorded_wrong(master, t, x, h, scheme, spent):
        recorded(master, t, x, h, scheme, spent)
        key = (t + h, master._end[2])
        *step, given = master._came_from[key]
        if given:
            master._came_from[key] = (*step, (np.frombuffer(given) + 1.0).tobytes())

    monkeypatch.setattr(cosim_master, "step_done", recorded_wrong)
    flow = pair(fmu_dir, "MassSpringStopSlowSave")
    system = with_stop(flow)
    try:
        with pytest.warns(FmibridgeWarning, match="did not reach the states") as said:
            result = Halving(h=0.01).run(system, 3.0)
    finally:
        system.close()
    assert result.event_times.tolist() == PAIR_IMPACTS
    assert result.x[-1].tolist() == PAIR_END
    # one replayed step and one warning for each return of the plant
    missed = [w for w in said if "did not reach" in str(w.message)]
    assert flow.n_steps_replayed == {"plant": len(missed), "controller": 0}


def test_a_plain_run_saves_nothing(fmu_dir, resets):
    flow = pair(fmu_dir)
    flow.record(["controller.F"])
    system = HybridSystem([Mode("run", flow)], "run", flow.x0)
    try:
        result = Halving(h=0.01).run(system, 1.0)
    finally:
        system.close()
    assert result.provenance["fmu_state_saves"] == "0"
    assert resets["n"] == 0
    assert len(result.t) == 101 and np.all(np.isfinite(result.outputs["controller.F"]))


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize("plant", ["MassSpringStop", "MassSpringStopSlowSave"])
def test_the_cs_adapter_keeps_its_impacts_without_a_reset_per_sample(
    tmp_path, fmu_dir, resets, plant
):
    """Gauss-Seidel, extrapolated inputs, the guard an output (plant.gap). The
    costs fixed (`StepUnits`: the plain plant's save one step, the slow one's
    40), so the saves follow from the rule: the plain plant is saved before
    every step that may be undone, so it returns to no point by a reset; the
    slow one may return to the point after an impact by the reset that
    entered it first, at most once per step undone."""
    text = (ROOT / "adapters" / "controlled_stop_cs.toml").read_text()
    path = tmp_path / "controlled_stop_cs.toml"
    text = text.replace("MassSpringStop.fmu", f"{plant}.fmu")
    path.write_text(text.replace("../fmus/build", str(fmu_dir)))
    with load_adapter(path) as adapter:
        flow = adapter.system.mode(adapter.system.initial_mode).flow
        flow.costs = StepUnits({"plant": SAVES[plant], "controller": 1.0}, [])
        result = adapter.run()
    assert result.event_times.tolist() == ADAPTER_IMPACTS
    # the plant's, at each impact; the slow save's returns to the point after
    # an impact enter it again by the same reset instead of saving
    assert resets["n"] - resets["again"] == len(ADAPTER_IMPACTS)
    if plant == "MassSpringStop":
        assert resets["again"] == 0
    assert resets["again"] <= result.stats["n_rejected"]
    # saves only before the steps near the 7 impacts the forecast flags: for
    # 2 FMUs, fewer than one per step of the run
    assert int(result.provenance["fmu_state_saves"]) < result.stats["n_steps"]
    assert np.all(np.isfinite(result.outputs["controller.r"]))


@pytest.mark.filterwarnings("error::fmibridge.core.errors.FmibridgeWarning")
@pytest.mark.parametrize(
    ("scheme", "inputs", "build", "order"),
    [("jacobi", "hold", "", 1), ("gauss-seidel", "extrapolate", "_fmi3", 2)],
)
def test_an_approached_guard_needs_no_undo_and_converges_as_halving(
    fmu_dir, scheme, inputs, build, order
):
    """Halving(locate="approach") steps the slow-save pair short of the stop
    and crosses it by a step of t_tol: no step undone, so the plant replays
    nothing and (its save fixed at 40 steps, `StepUnits`) is saved only where
    the forecast sees a crossing coming with no point to replay from within
    40 steps: once before each impact. Its impacts converge to the same coupling in
    Model Exchange at the coupling's order (Jacobi with held inputs: first;
    Gauss-Seidel with extrapolated inputs: second), as halving's do, and differ
    from halving's by less than halving's own coupling error: both run the same
    coupling at the same h, and differ only in the communication points near
    the stop."""
    me = couple(
        {
            "plant": open_fmu(fmu_dir / "MassSpringStop.fmu", "me"),
            "controller": open_fmu(fmu_dir / "PositionController.fmu", "me"),
        },
        CONNECTIONS,
    )
    system = with_stop(me)
    try:
        reference = Halving(h=1e-3).run(system, 3.0).event_times
    finally:
        system.close()
    communication = Communication(scheme, inputs)
    errors = {}
    for locate, h in (("halving", 0.01), ("approach", 0.01), ("approach", 0.005)):
        parts = {
            "plant": open_fmu(fmu_dir / f"MassSpringStopSlowSave{build}.fmu", "cs"),
            "controller": open_fmu(fmu_dir / f"PositionController{build}.fmu", "cs"),
        }
        flow = couple(parts, CONNECTIONS, communication=communication)
        flow.costs = StepUnits({"plant": 40.0, "controller": 1.0}, [])
        system = with_stop(flow)
        try:
            result = Halving(h=h, locate=locate).run(system, 3.0)
            saves = {c.name: c.flow.n_state_saves for c in flow.components}
            replayed = sum(flow.n_steps_replayed.values())
        finally:
            system.close()
        assert result.status.is_success and len(result.events) == 2
        errors[locate, h] = result.event_times - reference
        if locate == "approach":
            assert result.stats["n_rejected"] == 0
            assert saves["plant"] <= 2 and replayed == 0
    halved, approached = errors["halving", 0.01], errors["approach", 0.01]
    assert np.all(np.abs(approached - halved) < np.abs(halved)), errors
    rates = np.log2(approached / errors["approach", 0.005])
    assert np.all(np.abs(rates - order) < 0.15), errors


def test_approach_is_refused_on_a_flow_the_method_integrates(fmu_dir):
    flow = open_fmu(fmu_dir / "MassSpringStop.fmu", "me")
    system = HybridSystem([Mode("free", flow)], "free", flow.x0)
    try:
        with pytest.raises(FmibridgeError, match="mode 'free'.*integrated by the"):
            Halving(h=0.01, locate="approach").run(system, 1.0)
    finally:
        system.close()


def test_the_forecast_saves_where_the_guard_may_be_reached():
    guard = Guard(lambda t, x: x[0], "falling")
    forecast, x = CrossingForecast([guard]), np.zeros(1)
    # g = 1 - t moves 0.1 a step of 0.1: saved while no two past points tell
    # its slope, then from where it is extrapolated within one more step's
    # motion of zero: the step from t = 0.8 (g 0.2, 0.1 at its end), not 0.7
    saved = [forecast(0.1 * k, x + 1.0 - 0.1 * k, 0.1) for k in range(10)]
    assert saved == [True, True] + [False] * 6 + [True, True]
    # a return to an earlier point (an undone step) forgets the points after it
    assert forecast(0.1, x + 0.9, 0.1)
    # a gap of more than 4 steps since the points: no forecast, saved
    forecast(0.2, x + 0.8, 0.1)
    assert forecast(0.9, x + 0.8, 0.1)
    assert not CrossingForecast([])(0.0, x, 0.1)  # no guard: no step undone
    # a guard that recedes, g = 0.05 + t: saved only within a step's motion
    receding = CrossingForecast([guard])
    saved = [receding(0.1 * k, x + 0.05 + 0.1 * k, 0.1) for k in range(4)]
    assert saved == [True, True, False, False]
    # one that turns and crosses at 1.007, g = 0.5 - (t - 0.3)^2: not saved
    # over its top, saved from 0.9 (g 0.14, its quadratic 0.01 at 1.0)
    turning = CrossingForecast([guard])
    saved = [turning(0.1 * k, x + 0.5 - (0.1 * k - 0.3) ** 2, 0.1) for k in range(11)]
    assert saved == [True, True] + [False] * 7 + [True, True]


def test_state_save_cost_is_read_from_the_table(builder, tmp_path):
    table = builder.read_table(ROOT / "fmus" / "MassSpringStopSlowSave" / "model.toml")
    assert table.state_save_cost == 5e-4
    plain = builder.read_table(ROOT / "fmus" / "MassSpringStop" / "model.toml")
    assert plain.state_save_cost == 0.0
    bad = tmp_path / "model.toml"
    bad.write_text('name = "Bad"\nstate_save_cost = "slow"\n')
    with pytest.raises(builder.BuildError, match="state_save_cost"):
        builder.read_table(bad)


def test_a_crossing_the_forecast_missed_is_located_and_said(fmu_dir):
    """A guard that jumps (1, then -1 from 0.505) gives no warning in its past values:
    its step is not saved, and undoing it re-enters the FMUs by a reset (no
    saved point within MAX_REPLAY steps to replay from), with a warning."""
    flow = pair(fmu_dir)
    switch = Edge(Guard(lambda t, x: 1.0 if t < 0.505 else -1.0), "after")
    modes = [Mode("run", flow, [switch]), Mode("after", flow)]
    system = HybridSystem(modes, "run", flow.x0)
    try:
        with pytest.warns(FmibridgeWarning, match="no saved FMU state covers"):
            result = Halving(h=0.01).run(system, 0.6)
    finally:
        system.close()
    assert len(result.events) == 1
    assert abs(result.event_times[0] - 0.505) <= 1e-9


def test_a_reset_entered_again_must_give_the_same_states(fmu_dir, monkeypatch):
    """The slow-save plant saves no state after an impact: a return there
    enters the point again by the reset and initialisation that entered it
    first (`CoSimulationFlow.anchored`). An FMU that then takes other states
    (here: start values 1e-9 off) is refused, naming the FMU, not run on."""
    flow = pair(fmu_dir, "MassSpringStopSlowSave")
    system = with_stop(flow)
    try:
        result = Halving(h=0.01).run(system, 1.0)
        assert result.event_times.tolist() == PAIR_IMPACTS[:1]
        plant = flow.components[0].flow
        assert isinstance(plant, CoSimulationFlow)
        ((t, xb),) = plant._anchors  # the point after the impact
        x = np.frombuffer(xb)
        assert t == PAIR_IMPACTS[0] and x[1] < 0.0  # bounced
        assert plant.can_return(t, x, saved=True) and (t, xb) not in plant._snapshots
        plant.goto(t, x)  # entered again, the same states
        assert plant._states_reader.read().tobytes() == xb
        plant.goto(0.0, flow.x0[:2])  # the origin, by the first initialisation
        original = CoSimulationFlow._reinitialize

        def off(self, t, x):
            original(self, t, x + 1e-9)

        monkeypatch.setattr(CoSimulationFlow, "_reinitialize", off)
        with pytest.raises(
            FMUError,
            match="MassSpringStopSlowSave.*: fmi2Reset returned not reproducible",
        ):
            plant.goto(t, x)
    finally:
        system.close()
