"""`fmibridge bench`: fmibridge against its peers, timed side by side in one run.

- `suite`: the cases, the search for the coarsest setting that meets each
  accuracy target, the paired timing and the table;
- `bumper_cars`, `corridor`: Esposito and Kumar's Examples 1 and 3;
- `sweep_speedup`: a sweep serially against a local Dask cluster;
- `cli`: ``fmibridge bench``.

A front door: may import every layer below and the other front doors; never `cli`
of the package root.
"""
