"""`python -m benchmarks`: fmibridge against its peers, timed side by side in one run.

- `suite`: the cases, the search for the coarsest setting that meets each
  accuracy target, the paired timing and the table;
- `bumper_cars`, `corridor`: Esposito and Kumar's Examples 1 and 3;
- `sweep_speedup`: a sweep serially against a local Dask cluster;
- `cli`: its command line, ``python -m benchmarks``.

A development tool beside the package, not in it: it times fmibridge against
fmpy, scipy and the papers' reference solvers, which a run never needs. Run it
from a clone of the repository (it builds the FMUs of fmus/):
``python -m benchmarks --quick``. It imports fmibridge as any user code does.
"""
