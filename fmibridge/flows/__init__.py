"""Where the continuous dynamics come from: one Flow interface, several sources.

- `base`: Flow, VectorField (dx/dt exposed), ForcedVectorField (with a contact force);
- `native`: Python callables f(t, x, u);
- `compiled`: numba-compiled f and guards, called by the loops at their C addresses;
- `fmi`: the lower FMI layer (one instance through fmpy, statuses as FMUError);
- `fmu`: FMUs as flows, Model Exchange and Co-Simulation (`_fmu`: a Model
  Exchange FMU's C functions called directly, its derivatives, event indicators
  and outputs as Functions of (t, x)); `fmu_system`, an FMU with its own events
  as a HybridSystem;
- `_programs`: adapter expressions as programs, and the one stack machine that
  evaluates them (from Python and from the compiled loops);
- `mode_inputs`: per-mode inputs of a flow;
- coupled systems, several components as one flow: `components` (FMUs, native
  blocks, vector fields with ports), `coupling` (connections checked, ordered and
  propagated), `loops` (algebraic loops), `coupled` (`couple`, Model Exchange as
  one vector field; `_coupled`: its right-hand side, one compiled Function) and
  `cosim_master` (Jacobi and Gauss-Seidel communication steps; `_cosim`: the
  step of every coupling, Co-Simulation FMUs' C functions called directly,
  the other components called back).

May import core only. A flow never knows which method drives it: flows never
import methods.
"""

from .base import Flow, ForcedVectorField, VectorField
from .native import NativeFlow

__all__ = ["Flow", "ForcedVectorField", "NativeFlow", "VectorField"]
