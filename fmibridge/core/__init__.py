"""The core: what a hybrid system is, what a run returns, and the numerics both share.

- `system`: HybridSystem, Mode, Edge, Guard (with a direction), UnilateralConstraint;
- `result`: Result, Event, Status: what a run returns;
- `records`: the plain records between a method's Python loop and its compiled
  kernels (State, Step, Status, Event): the kernels import them from here, never
  from the method, recorder or result layers;
- `recorder`: the Recorder methods write samples to (within a memory budget;
  `recording()` keeps a cut-short run's samples), which builds the Result;
- `integrators`: explicit Runge-Kutta schemes as Butcher tableaux;
- `events` (compiled): the crossing test, Illinois regula falsi, the secant and dip
  detection that every method's loop shares; `_functions` (compiled): functions
  of (t, x) as the loops call them; `_rk`: the one Runge-Kutta step;
- `span`: a run's t_end and step h checked against each other at the front doors;
- `outputs`: output paths checked and claimed before a run, files written whole
  or not at all;
- `time_limit`: a wall-clock limit on runs, checked between steps;
- `supervision`: calls run in a supervised child process (crashes, hangs, signals);
- `journal`: a run's samples streamed to a file, replayed after its process died;
- `limits`: the bounds on files and sweeps, in one place;
- `archives`: zip archives (FMUs, SSPs) opened within those bounds;
- `errors`: FmibridgeError, AdapterError, ExpressionError, FMUError,
  FmibridgeWarning, and SIGTERM raised as Terminated.

The bottom layer: imports nothing of fmibridge above it (a Mode names its Flow
for type checking only).
"""
