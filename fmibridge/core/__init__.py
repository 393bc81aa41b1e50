"""The core: what a hybrid system is, what a run returns, and the numerics both share.

- `system`: HybridSystem, Mode, Edge, Guard (with a direction), UnilateralConstraint;
- `result`: Result, Event, Status, and the Recorder methods write samples to;
- `integrators`: explicit Runge-Kutta schemes as Butcher tableaux;
- `bracket`: Illinois regula falsi on a bracketed sign change (run by Python and numba);
- `errors`: FmibridgeError, AdapterError, FMUError, FmibridgeWarning.

The bottom layer: imports nothing of fmibridge above it (a Mode names its Flow
for type checking only).
"""
