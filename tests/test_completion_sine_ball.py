"""Or and Ames' ball on the sine surface (Example 1) from initial conditions the
paper does not use, against an independent event-driven solution: scipy's
solve_ivp with events for the flights, eq. (4) at each impact, the accumulation
from the last impact resolved (|hdot| < 1e-7), and the constrained motion on
y = sin x until lambda = 0 (x_dot^2 sin x = g).

Such initial conditions give impacts of a few um/s, which an inner method cannot
resolve by crawling (its steps of 1e-10 s move x = 6.3 less than x's rounding),
and guard rates that read 0 in a difference along the flow: the truncation and
its messages must depend on neither."""

import math
import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fmibridge import Completion, Halving
from fmibridge.core.result import Status
from fmibridge.models.lagrangian import to_hybrid
from fmibridge.models.or_ames import sine_ball

G, E = 1.0, 0.5  # sine_ball()'s defaults (the paper's)
SOLVER = dict(rtol=1e-12, atol=1e-14, method="DOP853")


def _hdot(s: np.ndarray) -> float:
    return s[3] - math.cos(s[0]) * s[2]


def _free(t, s):
    return [s[2], s[3], 0.0, -G]


def _gap(t, s):
    return s[1] - math.sin(s[0])


def _apex(t, s):  # hdot falls through zero: the ball turns back to the surface
    return _hdot(s)


def _lift(t, z):  # lambda = (g - x_dot^2 sin x) / (1 + cos^2 x) reaches 0
    return z[1] ** 2 * math.sin(z[0]) - G


_gap.terminal, _gap.direction = True, -1
_apex.terminal, _apex.direction = True, -1
_lift.terminal, _lift.direction = True, 1


def _constrained(t, z):
    """x on y = sin x: (1 + cos^2 x) x'' = cos x sin x x'^2 - g cos x."""
    c, s = math.cos(z[0]), math.sin(z[0])
    return [z[1], (c * s * z[1] ** 2 - G * c) / (1 + c * c)]


def _until(t: float, s: np.ndarray, event) -> tuple[float, np.ndarray]:
    found = solve_ivp(_free, (t, t + 50.0), s, events=event, **SOLVER)
    return found.t_events[0][0], found.y_events[0][0]


def reference(q0, v0) -> tuple[float, float | None]:
    """The Zeno time and the lift-off time after it (None if none in 50 s)."""
    t, s = 0.0, np.array([*q0, *v0], dtype=float)
    while True:
        t, s = _until(t, s, _gap)
        if abs(_hdot(s)) < 1e-7:
            break
        dh = np.array([-math.cos(s[0]), 1.0])  # eq. (4) with M = I
        s = np.concatenate([s[:2], s[2:] - (1 + E) * (dh @ s[2:]) / (dh @ dh) * dh])
        t, s = _until(t, s, _apex)
    # the rest of the series: flights 2 e^j |hdot| / a, a = -hddot (eq. 8)
    a = G - s[2] ** 2 * math.sin(s[0])
    t_zeno = t + 2 * E * abs(_hdot(s)) / (a * (1 - E))
    dh = np.array([-math.cos(s[0]), 1.0])
    v = s[2:] - (dh @ s[2:]) / (dh @ dh) * dh  # R*
    on = solve_ivp(
        _constrained, (t_zeno, t_zeno + 50.0), [s[0], v[0]], events=_lift, **SOLVER
    )
    lift = on.t_events[0]
    return t_zeno, float(lift[0]) if len(lift) else None


def first(result, edge: str) -> float | None:
    return next((e.t for e in result.events if e.edge == edge), None)


@pytest.mark.parametrize(
    "q0, v0",
    [([0.0, 1.5], [2.0, 0.0]), ([0.3, 1.8], [1.3, 0.5])],
    ids=["fast", "thrown-up"],
)
def test_the_ball_truncates_and_lifts_off_at_the_independent_times(q0, v0):
    """Zeno and lift-off times within a tenth of Completion's time budget eps_t
    = 1e-3 (Or and Ames, Def. 7) of the reference's (2.7919463, 3.4992609 s and
    3.2806071, 4.4338245 s; measured within 8e-9 and 7e-8 s)."""
    t_zeno, t_lift = reference(q0, v0)
    system = to_hybrid(sine_ball(), q0, v0)
    result = Completion(Halving(h=1e-2)).run(system, t_end=t_lift + 0.5)
    assert result.status is Status.REACHED_END
    assert abs(first(result, "zeno") - t_zeno) < 1e-4
    assert abs(first(result, "lift-off") - t_lift) < 1e-4


@pytest.mark.parametrize(
    "q0, v0",
    [
        (
            [-0.3903146866491478, 1.5704743143660043],
            [1.5907104324341952, 0.6884620752174819],
        ),
        (
            [2.2331728081460103, 0.9237156548733549],
            [0.8299822693487093, -0.9976006328263427],
        ),
    ],
    ids=["slides-right", "thrown-down"],
)
def test_impacts_below_the_step_resolution_still_truncate(q0, v0):
    """eps = 1e-5 asks for impacts of a few um/s (x = 6.3 and 9.3 there), below
    what steps of 1e-10 s crawling on the surface resolve: the series is still
    truncated, within a tenth of eps_t = 1e-3 of the reference's Zeno time."""
    t_zeno, _ = reference(q0, v0)
    system = to_hybrid(sine_ball(), q0, v0)
    result = Completion(Halving(h=1e-2), eps=1e-5).run(system, t_end=t_zeno + 0.5)
    assert result.status is Status.REACHED_END
    assert abs(first(result, "zeno") - t_zeno) < 1e-4


def test_no_message_prints_an_infinite_uncertainty():
    """eps = 1e-7 is finer than Halving(h=1e-2) resolves here: the run stops, at
    the accumulation (1e-7 s before the reference's), and says so in finite
    numbers (a guard rate of 0 must not print an uncertainty of inf s)."""
    q0, v0 = (
        [-0.6455720139913312, 0.4350882992100996],
        [0.7067574073242642, -0.8783945740838879],
    )
    t_zeno, _ = reference(q0, v0)
    system = to_hybrid(sine_ball(), q0, v0)
    with pytest.warns(Warning) as caught:
        result = Completion(Halving(h=1e-2), eps=1e-7).run(system, t_end=t_zeno + 0.5)
    texts = [result.detail, *(str(w.message) for w in caught)]
    assert not any(re.search(r"\b(inf|nan)\b", text) for text in texts), texts
    assert result.status is Status.ZENO_NOT_TRUNCATED
    assert abs(result.t[-1] - t_zeno) < 1e-5
