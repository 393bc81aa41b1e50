"""Bumper cars (Esposito and Kumar, Example 3, Table II): 20 cars, 270 guards.

M = 20 discs of radius 0.1 in a 10 x 10 box; every car-car (190, quadratic)
and car-wall (80, affine) contact is an event, resolved by an inelastic
impact with restitution 0.9. The per-car dynamics are a broken reference in
the paper ("eq. (7)"); here [decision] each car is a point mass pushed by a
slowly rotating force and a linear drag, x'' = A (cos(w t + p), sin(w t +
q)) - k x', so paths curve and steps are error-controlled, not only
event-limited.
"""

from __future__ import annotations

import itertools
import statistics
import time
import warnings

import numba
import numpy as np

from fmibridge.core.guards import Edge, Guard, VectorGuard
from fmibridge.core.system import HybridSystem, Mode
from fmibridge.flows.compiled import CompiledFlow
from fmibridge.flows.native import NativeFlow

N_CARS, RADIUS, BOX, RESTITUTION = 20, 0.1, 10.0, 0.9  # Example 3
FORCE, DRAG = 0.5, 0.1  # [decision] m/s^2 and 1/s: cars cross the box in ~10 s
N_STATES, N_WALLS = 4 * N_CARS, 4 * N_CARS  # (x, y, vx, vy) per car; 4 walls per car
PAIRS = np.array(list(itertools.combinations(range(N_CARS), 2)), dtype=np.int64)
SIDES = (1.0, -1.0)  # a wall guard side * (coordinate - limit): low wall, high wall
LIMITS = (RADIUS, BOX - RADIUS)


@numba.njit(cache=True)
def gaps(t, x):
    """All 270 guards: per car i and axis, side * (coordinate - limit) for the
    low and the high wall (entries 4 i + 2 axis + 0, 1), then per pair (i, j)
    ``|p_i - p_j|^2 - (2 r)^2`` (entries N_WALLS + pair index)."""
    g = np.empty(N_WALLS + PAIRS.shape[0])
    for i in range(N_CARS):
        for axis in range(2):
            for s in range(2):
                g[4 * i + 2 * axis + s] = SIDES[s] * (x[4 * i + axis] - LIMITS[s])
    for p in range(PAIRS.shape[0]):
        a, b = 4 * PAIRS[p, 0], 4 * PAIRS[p, 1]
        g[N_WALLS + p] = (
            (x[a] - x[b]) ** 2 + (x[a + 1] - x[b + 1]) ** 2 - (2 * RADIUS) ** 2
        )
    return g


@numba.njit(cache=True)
def gap_gradients(t, x):
    """dg/dx at the entries of `_sparsity`, row by row (a wall's one coordinate;
    a pair's x_i, y_i, x_j, y_j), and dg/dt (zero): the VectorGuard's
    `sparse_gradient`, 840 values where the dense rows hold 270 x 80."""
    gx = np.empty(N_WALLS + 4 * PAIRS.shape[0])
    for i in range(N_CARS):
        for axis in range(2):
            for s in range(2):
                gx[4 * i + 2 * axis + s] = SIDES[s]
    for p in range(PAIRS.shape[0]):
        a, b = 4 * PAIRS[p, 0], 4 * PAIRS[p, 1]
        for k in range(2):
            d = 2.0 * (x[a + k] - x[b + k])
            gx[N_WALLS + 4 * p + k], gx[N_WALLS + 4 * p + 2 + k] = d, -d
    return gx, np.zeros(N_WALLS + PAIRS.shape[0])


@numba.njit(cache=True)
def drive(t, x, w, p, q):
    """x'' = A (cos(w t + p), sin(w t + q)) - k x' per car."""
    dx = np.empty(x.shape[0])
    dx[0::4], dx[1::4] = x[2::4], x[3::4]
    dx[2::4] = FORCE * np.cos(w * t + p) - DRAG * x[2::4]
    dx[3::4] = FORCE * np.sin(w * t + q) - DRAG * x[3::4]
    return dx


def _sparsity() -> np.ndarray:
    """Where `gap_gradients` may be non-zero: a wall's coordinate, a pair's
    two positions."""
    pattern = np.zeros((N_WALLS + len(PAIRS), N_STATES), dtype=bool)
    for i in range(N_CARS):
        for axis in range(2):
            pattern[4 * i + 2 * axis : 4 * i + 2 * axis + 2, 4 * i + axis] = True
    for p, (i, j) in enumerate(PAIRS):
        pattern[N_WALLS + p, [4 * i, 4 * i + 1, 4 * j, 4 * j + 1]] = True
    return pattern


def _wall(guards: VectorGuard, i: int, axis: int, s: int) -> Edge:
    """Car i's wall guard (entry 4 i + 2 axis + s of `gaps`) and its reflection."""
    k = 4 * i + axis

    def bounce(t, x):
        x[k + 2] = -RESTITUTION * x[k + 2]
        return x

    name = f"car{i}_{'xy'[axis]}{'-+'[s]}"
    entry = guards[4 * i + 2 * axis + s]
    return Edge(Guard(entry, name=name), "drive", bounce, name=name)


def _pair(guards: VectorGuard, p: int) -> Edge:
    """The guard of pair p (i, j) and the impact of two equal masses."""
    i, j = PAIRS[p]
    a, b = 4 * i, 4 * j

    def impact(t, x):
        normal = x[a : a + 2] - x[b : b + 2]
        normal /= np.linalg.norm(normal)
        approach = (x[a + 2 : a + 4] - x[b + 2 : b + 4]) @ normal
        kick = 0.5 * (1.0 + RESTITUTION) * approach * normal
        x[a + 2 : a + 4] -= kick
        x[b + 2 : b + 4] += kick
        return x

    name = f"car{i}_car{j}"
    return Edge(Guard(guards[N_WALLS + p], name=name), "drive", impact, name=name)


def bumper_cars(seed: int = 0, *, compiled: bool = True) -> HybridSystem:
    """Return the 20-car system with random, non-overlapping initial states.

    The 270 guards are the entries of one VectorGuard (`gaps`, and
    `gap_gradients` at its sparsity's entries only; numba-compiled); the flow
    is a CompiledFlow, or with `compiled=False` a NativeFlow of the same
    function called from Python.
    """
    rng = np.random.default_rng(seed)
    places: list[np.ndarray] = []
    for _ in range(10_000):  # rejection sampling; 20 discs fill 0.6% of the box
        point = rng.uniform(1.0, BOX - 1.0, 2)
        if all(np.linalg.norm(point - other) > 4 * RADIUS for other in places):
            places.append(point)
        if len(places) == N_CARS:
            break
    speeds = rng.uniform(-1.0, 1.0, (N_CARS, 2))
    x0 = np.concatenate([np.r_[p, v] for p, v in zip(places, speeds, strict=True)])
    w, p, q = (rng.uniform(0.0, 2 * np.pi, N_CARS) for _ in range(3))
    w = 0.2 + w / (2 * np.pi)

    def f(t, x):
        return drive(t, x, w, p, q)

    size = N_WALLS + len(PAIRS)
    guards = VectorGuard(
        gaps,
        size,
        gap_gradients,
        np.arange(size) < N_WALLS,
        sparsity=_sparsity(),
        sparse_gradient=True,
    )
    edges = [
        _wall(guards, i, axis, s)
        for i in range(N_CARS)
        for axis in (0, 1)
        for s in (0, 1)
    ]
    edges += [_pair(guards, k) for k in range(len(PAIRS))]
    names = [f"{v}{i}" for i in range(N_CARS) for v in ("x", "y", "vx", "vy")]
    flow = (CompiledFlow if compiled else NativeFlow)(f, names, name="bumper_cars")
    return HybridSystem(
        [Mode("drive", flow, tuple(edges))], "drive", x0, name="bumper_cars"
    )


def bumper_cars_overhead(
    repeats: int = 3, *, t_end: float = 20.0, tol: float = 1e-4, runs: int = 5
) -> dict:
    """Time Unilateral against EndpointAdams (same integrator) on bumper cars.

    Each repeat builds a new random system (seeds 0, 1, ...) and runs both
    methods on it once untimed (numba binds the system's compiled functions,
    about a second per new system), then `runs` times each, alternating; the
    medians are summed over the systems. Paper: 0.3330 s vs 0.3106 s, 7.2%
    (Table II).

    Returns
    -------
    dict
        wall_extrapolation, wall_endpoint (s), ratio, and the step and event
        counts of the extrapolation runs.
    """
    from fmibridge.methods.unilateral import EndpointAdams, Unilateral

    methods = {
        "extrapolation": Unilateral(h=1.0, tol=tol),
        "endpoint": EndpointAdams(h=1.0, tol=tol),
    }
    walls = dict.fromkeys(methods, 0.0)
    n_steps = n_events = 0
    for seed in range(repeats):
        system = bumper_cars(seed)
        times: dict[str, list[float]] = {key: [] for key in methods}
        for n in range(runs + 1):  # run 0 binds the compiled functions
            for key in sorted(methods, reverse=n % 2 == 1):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = methods[key].run(system, t_end)
                times[key].append(time.perf_counter() - start)
                if key == "extrapolation" and n == 0:
                    n_steps += result.stats["n_steps"]
                    n_events += result.stats["n_events"]
        for key, kept in times.items():
            walls[key] += statistics.median(kept[1:])
    return {
        "wall_extrapolation": walls["extrapolation"],
        "wall_endpoint": walls["endpoint"],
        "ratio": walls["extrapolation"] / walls["endpoint"],
        "n_steps": n_steps,
        "n_events": n_events,
    }
