"""Bounds on what a file or a command may make fmibridge do, in one place: far
above what a real model needs, far below what exhausts a machine, checked
before the work starts; the error names the file, size and bound.
"""

from __future__ import annotations

import os

# Bytes an archive (FMU, SSP) may unpack to in all: tool exports take tens of MB,
# a RAM-backed /tmp far more. FMIBRIDGE_MAX_FMU_BYTES overrides it.
MAX_UNPACKED_BYTES = int(os.environ.get("FMIBRIDGE_MAX_FMU_BYTES", 2**30))
# Bytes a member beyond RATIO_FLOOR_BYTES may unpack to per compressed byte: tool
# exports compress at most about 14:1, a zip bomb about 1032:1 (deflate's most).
# FMIBRIDGE_MAX_COMPRESSION_RATIO overrides it.
MAX_COMPRESSION_RATIO = int(os.environ.get("FMIBRIDGE_MAX_COMPRESSION_RATIO", 100))
RATIO_FLOOR_BYTES = 2**20  # smaller members may compress as they like
MAX_MEMBERS = 100_000  # files in one archive; an FMU has a handful to a few hundred
# Bytes of an XML file read whole (an SSD, an .ssv): 100 000 parameters take
# about 10 MB; ElementTree holds about 3x the text.
MAX_XML_BYTES = 32 * 2**20
# Levels of nested elements in an SSD or .ssv (a nested system takes two); the
# readers recurse (RecursionError near 1000 levels).
MAX_XML_DEPTH = 200
# Levels of nested tables in a TOML file (ours use 3; tomllib recurses).
MAX_TOML_DEPTH = 32
# Continuous states or event indicators an FMU may declare: one array of doubles
# each, read every step; large exported models have tens of thousands, a count
# near 2**32 (the schema's bound) would ask for 32 GB.
MAX_FMU_VECTOR = 10**7
# Runs in one sweep unless `max_runs` or --max-runs raises it: 10 values over 4
# keys, a few hours at about 1 s a run.
MAX_SWEEP_RUNS = 10_000
# Seconds a run may take past its time limit to stop itself before its process
# is killed: a step takes milliseconds, only native code that hangs reaches it.
TIMEOUT_GRACE_S = 2.0
