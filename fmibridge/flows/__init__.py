"""Where the continuous dynamics come from: one Flow interface, several sources.

- `base`: Flow, VectorField (dx/dt exposed), ForcedVectorField (with a contact force);
- `native`: Python callables f(t, x, u);
- `compiled`: numba-compiled f and guards, the steps between events as machine code
  (`_kernels`: the compiled loops);
- `fmi`: the lower FMI layer (one instance through fmpy, statuses as FMUError);
- `fmu`: FMUs as flows, Model Exchange and Co-Simulation (`fmu_kernels`: the FMU's C
  calls from numba; `fmu_view`: the guards and inputs it runs compiled;
  `kernel_cache`: the Python path while numba's cache is cold, and the background
  warm-up); `fmu_system`, an FMU with its own events as a HybridSystem;
- `programs`: expressions as postfix code for the compiled loops
  (`program_kernels`: the stack machine that runs them);
- `mode_inputs`: per-mode inputs of a flow;
- coupled systems, several components as one flow: `components` (FMUs, native
  blocks, vector fields with ports), `coupling` (connections checked, ordered and
  propagated), `loops` (algebraic loops), `coupled` (`couple`, Model Exchange as
  one vector field; `_coupled`: its right-hand side, one compiled Function) and
  `cosim_master` (Jacobi and Gauss-Seidel communication steps).

May import core only. A flow never knows which method drives it: flows never
import methods.
"""

from .base import Flow, ForcedVectorField, VectorField
from .native import NativeFlow

__all__ = ["Flow", "ForcedVectorField", "NativeFlow", "VectorField"]
