"""File formats that describe a run: adapter files and their safe expressions.

- `adapters`: one TOML file per model (FMU, guards, resets, constraint, method),
  checked in full and read into a HybridSystem;
- `adapter_tables`: what both share: the `Adapter`, [[edges]], [modes],
  [constraint], [method] and [output], and the problems of a file reported at once;
- `coupled`: adapters of coupled systems ([[components]], [[connections]], or the
  structure of an SSP archive) with the hybrid part over `component.variable`;
- `ssp`: SSP 1.0/2.0 archives (SystemStructure.ssd and its FMUs) read into a
  coupled flow, and packed;
- `expressions`: the whitelisted, bounded expressions in them, checked and run
  by the stack machine of `flows._programs` (`compiled_expressions`: a checked
  expression's program);
- `toml_file`: reading a TOML file (adapter or sweep spec) with one clear error.

May import core, flows, methods and models; never the front doors.
"""
