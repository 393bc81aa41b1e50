"""File formats that describe a run: adapter files and their safe expressions.

- `adapters`: one TOML file per model (FMU, guards, resets, constraint, method),
  checked in full and read into a HybridSystem;
- `expressions`: the whitelisted, bounded evaluator of the expressions in them;
- `toml_file`: reading a TOML file (adapter or sweep spec) with one clear error.

May import core, flows, methods and models; never the front doors.
"""
