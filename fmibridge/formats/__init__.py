"""File formats that describe a run: adapter files, one-FMU or coupled
(`adapters`, `adapter_tables`), their safe expressions (`expressions`,
`gap_expressions`), SSP archives (`ssp`) and TOML reading (`toml_file`). May
import core, flows, methods and models.
"""
