"""Table I, Example 2 (sticking, two Zeno accumulations), native and compiled.

    python examples/stop_oscillator_compiled.py

Completion around Halving with Illinois location, on the oscillator of
`fmibridge.models.forced_oscillator`: once with Python callables, once with
numba-compiled ones (the first compiled run includes numba's compilation).
Both are compared with the exact solution (rho-hat, eq. 30; Zeno times).
"""

import time

from fmibridge.methods import Completion, Halving
from fmibridge.models import forced_oscillator
from fmibridge.validation import EXAMPLE_2, exact_solution, rho_hat

exact = exact_solution(EXAMPLE_2)
method = Completion(Halving(h=0.1, locate="illinois"), eps=1e-5)
for compiled in (False, True, True):
    start = time.perf_counter()
    result = method.run(
        forced_oscillator(EXAMPLE_2, compiled=compiled), EXAMPLE_2.t_max
    )
    wall = time.perf_counter() - start
    zenos = [f"{e.t:.6f}" for e in result.events if e.edge == "zeno"]
    print(
        f"{'compiled' if compiled else 'native  '}: {wall * 1e3:7.1f} ms, "
        f"{len(result.events)} events, rho-hat "
        f"{rho_hat(result.t, result['x'], exact):.2e}, Zeno at {', '.join(zenos)}"
    )
print("exact Zeno times:", ", ".join(f"{t:.6f}" for t in exact.zeno_times))
