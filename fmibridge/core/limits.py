"""Bounds on what a file or a command may make fmibridge do, in one place: far
above what a real model needs, far below what exhausts a machine, checked
before the work starts; the error names the file, size and bound.
"""

from __future__ import annotations

import os

# Bytes an archive (an FMU, an SSP) may unpack to, all members together: far
# above any FMU we know (the Reference FMUs are < 1 MB, tool exports with solver
# libraries tens of MB), far below a disk or a RAM-backed /tmp.
# FMIBRIDGE_MAX_FMU_BYTES overrides it for the rare larger FMU.
MAX_UNPACKED_BYTES = int(os.environ.get("FMIBRIDGE_MAX_FMU_BYTES", 2**30))
# Bytes a member of an archive may unpack to per byte it takes compressed, for a
# member beyond RATIO_FLOOR_BYTES: tool exports compress at most about 14:1 (XML
# model descriptions, C sources), deflate at most about 1032:1, which is what a
# zip bomb uses (a 612 kB SSP holding a 600 MB model description).
# FMIBRIDGE_MAX_COMPRESSION_RATIO overrides it for a member that is rightly
# that repetitive.
MAX_COMPRESSION_RATIO = int(os.environ.get("FMIBRIDGE_MAX_COMPRESSION_RATIO", 100))
RATIO_FLOOR_BYTES = 2**20  # smaller members may compress as they like
MAX_MEMBERS = 100_000  # files in one archive; an FMU has a handful to a few hundred
# Bytes of an XML file read whole into memory (an SSD, an .ssv inlined in it):
# 100 000 parameters take about 10 MB; ElementTree holds about 3x the text.
MAX_XML_BYTES = 32 * 2**20
# Levels of nested elements in an SSD or .ssv: a nested system takes two
# (System, Elements), ours nest a few; ElementTree serialises and our SSD reader
# flattens systems by recursion (RecursionError near 1000 levels).
MAX_XML_DEPTH = 200
# Levels of nested tables and arrays in a TOML file (an adapter, a sweep spec);
# ours use 3, and Python's TOML reader recurses (RecursionError near 1000).
MAX_TOML_DEPTH = 32
# Runs in one sweep unless the spec (`max_runs`) or the command (--max-runs)
# raises it: a grid of 10 values over 4 keys, at about 1 s a run a few hours.
MAX_SWEEP_RUNS = 10_000
# Seconds a run may take past its time limit to stop itself (at its next step,
# with its samples) before its process is killed: a step takes milliseconds, so
# only a run hung in native code (an FMU's endless loop) reaches it.
TIMEOUT_GRACE_S = 2.0
