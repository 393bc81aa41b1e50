"""Newton's cradle: one CradleBall FMU per ball, impacts passed between FMUs.

    python examples/newtons_cradle.py

Five balls, the first two pulled back 0.3 rad: two balls leave on the other
side with exactly the speed the first two arrived with (e = 1), at the time
the exact pendulum predicts, and momentum and energy are kept to round-off at
every impact. Then three balls released towards each other from both sides hit
the middle one at once: simultaneous impacts, resolved by strip relaxation.
"""

import numpy as np

from fmibridge import Halving, Relaxation
from fmibridge.examples import load_builder
from fmibridge.models.cradle import newtons_cradle, swing

THETA0, G, L = 0.3, 9.81, 1.0
quarter, omega0 = swing(THETA0, L, G)  # time to the bottom, speed there
fmu = load_builder().build_fmus(models=["CradleBall"])["CradleBall"]


def momentum(x):
    return float(np.sum(L * np.cos(x[0::2]) * x[1::2]))  # m = 1


def energy(x):
    return float(np.sum(0.5 * (L * x[1::2]) ** 2 + G * L * (1 - np.cos(x[0::2]))))


def report(title, result):
    print(f"{title}: {result.status.value} {len(result.events)} events")
    for event in result.events:
        before, after = event.x_before, event.x_after
        print(
            f"  t = {event.t:.12f} (exact {quarter:.12f})  {event.edge:<12} "
            f"omega after = {np.round(after[1::2], 12).tolist()}  "
            f"momentum change {momentum(after) - momentum(before):+.1e}, "
            f"energy change {energy(after) - energy(before):+.1e}"
        )


cradle = newtons_cradle(fmu, [-THETA0, -THETA0, 0.0, 0.0, 0.0])
try:
    report("two of five, Halving", Halving(h=1e-3).run(cradle, quarter + 0.01))
finally:
    cradle.close()
print(f"  exact: the last two balls leave with omega = {omega0:.12f} rad/s")

cradle = newtons_cradle(fmu, [-THETA0, 0.0, THETA0])
try:
    relaxation = Relaxation(h=1e-3, eps=5e-11, integrator="rk4")
    report("simultaneous, Relaxation", relaxation.run(cradle, quarter + 0.01))
finally:
    cradle.close()
print(f"  exact: the outer balls leave with -/+ {omega0:.12f} rad/s, the middle rests")
