"""Guards given as one vector function (`VectorGuard`): the same events as the
per-edge guards on every method, evaluated once per point, and Unilateral on
them the same run for a Python model and a compiled one."""

import itertools
import math

import numba
import numpy as np
import pytest
from test_unilateral_compiled import assert_same_run

from benchmarks import bumper_cars as cars
from fmibridge import (
    Edge,
    FmibridgeError,
    Guard,
    HybridSystem,
    Mode,
    NativeFlow,
    UnilateralConstraint,
    VectorGuard,
)
from fmibridge.flows.compiled import CompiledFlow
from fmibridge.methods import Completion, Halving, Relaxation, Unilateral
from fmibridge.methods._mode import gathered
from fmibridge.methods.unilateral import EndpointAdams

# -- a particle in a box around a round post: 4 affine walls, 1 circle --------

BOX, POST, RADIUS, E = 2.0, (1.0, 1.2), 0.3, 0.9


@numba.njit(cache=True)
def box_gaps(t, x):
    """Walls x > 0, 2 - x > 0, y > 0, 2 - y > 0; the post |p - c|^2 - r^2 > 0."""
    post = (x[0] - POST[0]) ** 2 + (x[1] - POST[1]) ** 2 - RADIUS**2
    return np.array([x[0], BOX - x[0], x[1], BOX - x[1], post])


@numba.njit(cache=True)
def box_gradients(t, x):
    gx = np.zeros((5, 4))
    gx[0, 0], gx[1, 0], gx[2, 1], gx[3, 1] = 1.0, -1.0, 1.0, -1.0
    gx[4, 0], gx[4, 1] = 2.0 * (x[0] - POST[0]), 2.0 * (x[1] - POST[1])
    return gx, np.zeros(5)


@numba.njit(cache=True)
def push(t, x):
    """x'' = (cos t, -1) - 0.1 x': the particle curves and falls."""
    return np.array([x[2], x[3], math.cos(t) - 0.1 * x[2], -1.0 - 0.1 * x[3]])


def _reflect(k):
    def reflect(t, x):
        x[k] = -E * x[k]
        return x

    return reflect


def _bounce_off_post(t, x):
    normal = (x[:2] - np.array(POST)) / RADIUS
    x[2:] -= (1.0 + E) * (x[2:] @ normal) * normal
    return x


RESETS = [_reflect(2), _reflect(2), _reflect(3), _reflect(3), _bounce_off_post]
NAMES = ["left", "right", "floor", "top", "post"]


def _entry_fn(k):
    """The per-edge guard of entry k, with its own gradient (the old way)."""

    def fn(t, x):
        return box_gaps(t, x)[k]

    fn.affine = k < 4
    fn.gradient = lambda t, x: (box_gradients(t, x)[0][k], 0.0)
    return fn


BOX_SPARSITY = np.array(  # where box_gradients may be non-zero
    [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]], dtype=bool
)


@numba.njit(cache=True)
def box_gradient_values(t, x):
    """`box_gradients` at the True entries of BOX_SPARSITY, row by row."""
    values = np.array([1.0, -1.0, 1.0, -1.0, 0.0, 0.0])
    values[4], values[5] = 2.0 * (x[0] - POST[0]), 2.0 * (x[1] - POST[1])
    return values, np.zeros(5)


def box(
    vector,
    *,
    compiled=False,
    gradient=box_gradients,
    order=range(5),
    sparsity=None,
    sparse_gradient=False,
):
    """The particle's system, its guards per edge or as one VectorGuard (with
    the given sparsity), the edges in the given order of the entries."""
    guards = VectorGuard(
        box_gaps,
        5,
        gradient,
        [True] * 4 + [False],
        sparsity=sparsity,
        sparse_gradient=sparse_gradient,
    )
    edges = [
        Edge(
            Guard(guards[k] if vector else _entry_fn(k), name=NAMES[k]),
            "fly",
            RESETS[k],
            name=NAMES[k],
        )
        for k in order
    ]
    names = ["x", "y", "vx", "vy"]
    flow = CompiledFlow(push, names) if compiled else NativeFlow(push, names)
    return HybridSystem([Mode("fly", flow, edges)], "fly", [0.4, 1.7, 0.8, 0.0])


METHODS = [
    Halving(h=1e-2),
    Halving(h=1e-2, locate="illinois"),
    Relaxation(h=1e-2, eps=1e-6),
    Unilateral(h=0.1, tol=1e-8),
    EndpointAdams(h=0.1, tol=1e-8),
]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_every_method_fires_the_same_events_as_with_per_edge_guards(method):
    per_edge, vector = method.run(box(False), 6.0), method.run(box(True), 6.0)
    assert_same_run(per_edge, vector)
    names = {e.edge for e in vector.events}
    assert {"post", "floor"} <= names and len(vector.events) >= 5


def test_completion_passes_the_zeno_point_with_vector_guards():
    """A ball between a floor and a ceiling, both entries of one VectorGuard."""

    def system(vector):
        fn = lambda t, x: np.array([x[0], 3.0 - x[0]])  # noqa: E731
        guards = VectorGuard(fn, 2, affine=True) if vector else None
        floor = guards[0] if vector else lambda t, x: x[0]
        top = guards[1] if vector else lambda t, x: 3.0 - x[0]
        bounce = lambda t, x: np.array([x[0], -0.8 * x[1]])  # noqa: E731
        edges = [
            Edge(Guard(floor, name="floor"), "fly", bounce, name="floor"),
            Edge(Guard(top, name="top"), "fly", bounce, name="top"),
        ]
        flow = NativeFlow(lambda t, x: np.array([x[1], -9.81]), ["h", "v"])
        return HybridSystem(
            [Mode("fly", flow, edges)],
            "fly",
            [1.0, 0.0],
            constraint=UnilateralConstraint("h", "v", 0.8),
        )

    method = Completion(Halving(h=1e-3))
    per_edge, vector = method.run(system(False), 5.0), method.run(system(True), 5.0)
    assert_same_run(per_edge, vector)
    zeno = math.sqrt(2.0 / 9.81) * 1.8 / 0.2  # sqrt(2 h0 / g) (1 + e) / (1 - e)
    assert vector.t[-1] == 5.0 and vector.x[-1, 0] == pytest.approx(0.0, abs=1e-9)
    assert vector.events[0].t == pytest.approx(math.sqrt(2.0 / 9.81), abs=1e-9)
    assert any(e.t == pytest.approx(zeno, abs=1e-2) for e in vector.events)


@pytest.mark.parametrize("gradient", [box_gradients, None], ids=["gradient", "fd"])
@pytest.mark.parametrize(
    "method", [Unilateral(h=0.1, tol=1e-8), EndpointAdams(h=0.1, tol=1e-8)]
)
def test_unilateral_on_vector_guards_compiled_model_gives_the_python_run(
    method, gradient
):
    python = method.run(box(True, gradient=gradient), 6.0)
    fast = method.run(box(True, compiled=True, gradient=gradient), 6.0)
    assert_same_run(python, fast)
    assert len(fast.events) >= 5


@pytest.mark.parametrize(
    ("gradient", "sparse_gradient"),
    [
        (box_gradients, False),
        (None, False),
        (box_gradient_values, True),
        (box_gradient_values.py_func, True),
    ],
    ids=["gradient", "fd", "sparse-numba", "sparse-python"],
)
def test_a_declared_sparsity_gives_the_dense_run_bit_for_bit(gradient, sparse_gradient):
    """The loop reads only the declared entries of dg/dx, given as dense rows,
    by central differences (None), or at the sparsity's entries only
    (`sparse_gradient`, numba-compiled or in Python): the same numbers as the
    dense rows, for a Python or a compiled model and in any order of the
    edges."""
    method, order = Unilateral(h=0.1, tol=1e-8), (4, 2, 0, 3, 1)
    dense_gradient = box_gradients if sparse_gradient else gradient
    dense = method.run(
        box(True, compiled=True, gradient=dense_gradient, order=order), 6.0
    )
    for compiled in (True, False):
        sparse = box(
            True,
            compiled=compiled,
            gradient=gradient,
            order=order,
            sparsity=BOX_SPARSITY,
            sparse_gradient=sparse_gradient,
        )
        assert_same_run(dense, method.run(sparse, 6.0))
    assert len(dense.events) >= 5
    assert {"post", "floor"} <= {e.edge for e in dense.events}


def test_bumper_cars_sparse_gradient_holds_the_dense_rows():
    """`gap_gradients` (values at the sparsity's entries) scattered into the
    (270, 80) rows equals the per-edge gradients of the model it replaced."""
    n = 4 * cars.N_CARS
    x = np.random.default_rng(3).uniform(0.0, 10.0, n)
    values, times = cars.gap_gradients(0.0, x)
    rows = np.zeros((cars.N_WALLS + len(cars.PAIRS), n))
    rows[np.nonzero(cars._sparsity())] = values
    edges = [
        _old_wall(i, axis, side, n)
        for i, axis, side in itertools.product(range(cars.N_CARS), (0, 1), (1, -1))
    ] + [_old_pair(i, j, n) for i, j in itertools.combinations(range(cars.N_CARS), 2)]
    dense = np.array([e.guard.fn.gradient(0.0, x)[0] for e in edges])
    assert np.array_equal(rows, dense) and not np.any(times)
    assert values.shape == (cars.N_WALLS + 4 * len(cars.PAIRS),)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_sparse_gradient_of_the_wrong_size_or_without_sparsity_is_refused(compiled):
    with pytest.raises(FmibridgeError, match="`sparse_gradient` needs a `gradient`"):
        VectorGuard(box_gaps, 5, box_gradient_values, sparse_gradient=True)
    with pytest.raises(FmibridgeError, match="`sparse_gradient` needs a `gradient`"):
        VectorGuard(box_gaps, 5, sparsity=BOX_SPARSITY, sparse_gradient=True)
    dense_values = box(
        True,
        compiled=compiled,
        sparsity=BOX_SPARSITY,  # box_gradients returns the (5, 4) rows
        sparse_gradient=True,
    )
    with pytest.raises(
        FmibridgeError,
        match=r"sparse gradient of VectorGuard `box_gaps` returned arrays of shapes "
        r"\(5, 4\) and \(5,\); expected \(6,\)",
    ):
        Unilateral(h=0.1, tol=1e-8).run(dense_values, 1.0)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_gradient_outside_its_sparsity_is_refused(compiled):
    wrong = BOX_SPARSITY.copy()
    wrong[4, 1] = False  # the post depends on y too
    system = box(True, compiled=compiled, sparsity=wrong)
    with pytest.raises(
        FmibridgeError, match=r"VectorGuard `box_gaps` has dg\[4\]/dx\[1\]"
    ):
        Unilateral(h=0.1, tol=1e-8).run(system, 6.0)
    with pytest.raises(
        FmibridgeError, match="`sparsity` has 3 columns; the mode has 4"
    ):
        Unilateral(h=0.1).run(box(True, sparsity=BOX_SPARSITY[:, :3]), 1.0)
    with pytest.raises(FmibridgeError, match="`sparsity` must be a 2-D array of bools"):
        VectorGuard(box_gaps, 5, sparsity=BOX_SPARSITY[:4])


def test_the_loop_picks_the_entries_of_edges_in_another_order():
    method, order = Unilateral(h=0.1, tol=1e-8), (4, 2, 0, 3, 1)
    fast = method.run(box(True, compiled=True, order=order), 6.0)
    assert_same_run(method.run(box(True, order=order), 6.0), fast)
    assert_same_run(method.run(box(False, order=order), 6.0), fast)
    in_order = method.run(box(True, compiled=True), 6.0)
    assert [e.edge for e in fast.events] == [e.edge for e in in_order.events]
    assert np.allclose(fast.event_times, in_order.event_times, rtol=0, atol=1e-12)


def test_the_entries_of_one_vector_guard_evaluate_it_once_per_point():
    calls = []

    def gaps(t, x):
        calls.append(t)
        return box_gaps(t, x)

    guards = VectorGuard(gaps, 5, box_gradients)
    entries = [guards[k] for k in (4, 0, 2)]  # any order
    x = np.array([0.4, 1.7, 0.8, 0.0])
    values = gathered(entries, 4, "the box's guards")(0.5, x)
    assert values.tolist() == box_gaps(0.5, x)[[4, 0, 2]].tolist()
    assert len(calls) == 1
    assert [fn(0.5, x) for fn in entries] == values.tolist()
    assert len(calls) == 2  # called in Python: the same point, the kept values
    mixed = gathered([*entries, lambda t, x: x[0]], 4, "the box's guards")
    assert mixed(0.5, x).tolist() == [*values.tolist(), 0.4]
    assert len(calls) == 3


def test_bad_vector_guards_are_refused_with_their_name():
    with pytest.raises(FmibridgeError, match="VectorGuard `gaps`: `size` must be"):
        VectorGuard(box_gaps, 0, name="gaps")
    with pytest.raises(FmibridgeError, match="`affine` must be one bool or 5"):
        VectorGuard(box_gaps, 5, affine=[True, False])
    with pytest.raises(FmibridgeError, match="no entry 5; it has 5"):
        VectorGuard(box_gaps, 5)[5]
    with pytest.raises(FmibridgeError, match="`fn` must be callable"):
        VectorGuard(None, 5)
    short = VectorGuard(lambda t, x: np.zeros(3), 5, name="short")
    with pytest.raises(FmibridgeError, match="VectorGuard `short` returned 3 value"):
        short[1](0.0, np.zeros(4))
    bad = VectorGuard(box_gaps, 5, lambda t, x: (np.zeros((5, 3)), np.zeros(5)))
    system = HybridSystem(
        [Mode("fly", NativeFlow(push, list("abcd")), [Edge(bad[0], "fly")])],
        "fly",
        [0.4, 1.7, 0.8, 0.0],
    )
    with pytest.raises(FmibridgeError, match=r"expected \(5, 4\) and \(5,\)"):
        Unilateral().run(system, 1.0)


# -- the bumper cars against the per-edge model they replaced -------------------


def per_edge_bumper_cars(seed):
    """Esposito and Kumar's Example 3 as it was written before `VectorGuard`:
    one Python closure per guard and per gradient, numpy right-hand side."""
    system = cars.bumper_cars(seed, compiled=False)
    n = 4 * cars.N_CARS
    edges = []
    for i, axis, side in itertools.product(range(cars.N_CARS), (0, 1), (1, -1)):
        edges.append(_old_wall(i, axis, side, n))
    for i, j in itertools.combinations(range(cars.N_CARS), 2):
        edges.append(_old_pair(i, j, n))
    new = system.mode("drive").edges
    resets = [e.reset for e in new]  # the same impacts
    edges = [
        Edge(e.guard, "drive", reset, name=e.name)
        for e, reset in zip(edges, resets, strict=True)
    ]
    assert [e.name for e in edges] == [e.name for e in new]
    mode = Mode("drive", system.mode("drive").flow, tuple(edges))
    return HybridSystem([mode], "drive", system.x0, name="bumper_cars")


def _old_wall(i, axis, side, n):
    k, limit = 4 * i + axis, cars.RADIUS if side > 0 else cars.BOX - cars.RADIUS
    gx = np.zeros(n)
    gx[k] = side

    def wall(t, x):
        return side * (x[k] - limit)

    wall.affine = True
    wall.gradient = lambda t, x: (gx, 0.0)
    name = f"car{i}_{'xy'[axis]}{'-' if side > 0 else '+'}"
    return Edge(Guard(wall, name=name), "drive", name=name)


def _old_pair(i, j, n):
    a, b = 4 * i, 4 * j

    def gap(t, x):
        return (x[a] - x[b]) ** 2 + (x[a + 1] - x[b + 1]) ** 2 - (2 * cars.RADIUS) ** 2

    def gradient(t, x):
        gx = np.zeros(n)
        d = 2.0 * (x[a : a + 2] - x[b : b + 2])
        gx[a : a + 2], gx[b : b + 2] = d, -d
        return gx, 0.0

    gap.gradient = gradient
    return Edge(Guard(gap, name=f"car{i}_car{j}"), "drive", name=f"car{i}_car{j}")


@pytest.mark.parametrize(
    "method", [Unilateral(h=1.0, tol=1e-4), EndpointAdams(h=1.0, tol=1e-4)]
)
def test_bumper_cars_vector_guards_give_the_per_edge_models_events(method):
    """Seed 0, 8 s: the same steps, events and states bit for bit, compiled or
    not (the flow calls the same compiled `drive` either way)."""
    old = method.run(per_edge_bumper_cars(0), 8.0)
    for compiled in (False, True):
        new = method.run(cars.bumper_cars(0, compiled=compiled), 8.0)
        assert_same_run(old, new)
    assert len(new.events) >= 20
