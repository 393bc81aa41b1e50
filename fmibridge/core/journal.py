"""The samples of a run streamed to a file as they are recorded, to outlive a crash.

A supervised run records into a file mapped into memory, whose pages outlive
the process (`replay`). The file starts with the bytes of whole records, so a
record cut off by a crash is never read. A record is a kind byte and payload
length: ``B`` (`Journal.begin`), ``M`` (`mode`), ``K`` (`rows`: int32 mode
numbers, then float64 rows), ``L`` (`latest`), ``E`` (`event`).
"""

from __future__ import annotations

import mmap
import os
import pickle
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

LENGTH = struct.Struct("<Q")  # bytes of whole records, at the start of the file
HEADER = struct.Struct("<cI")  # record kind, payload bytes
ROWS = struct.Struct("<IQQ")  # rows, n_steps, n_rejected
KEPT = struct.Struct("<cIIQQ")  # HEADER and ROWS of a K record
MODE = struct.Struct("<i")
FIRST_BYTES = 2**20  # the file's first size; it doubles as records come


class Journal:
    """Append a run's samples and events to `path` (created, or emptied)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, FIRST_BYTES)
            self._map: mmap.mmap | None = mmap.mmap(fd, FIRST_BYTES)
        finally:
            os.close(fd)  # the mapping keeps the file
        self._end = LENGTH.size

    def begin(self, state_names: Sequence[str], output_names: Sequence[str]) -> None:
        """Start the journal of a new run (its Recorder's columns)."""
        self._record(b"B", pickle.dumps((tuple(state_names), tuple(output_names))))

    def mode(self, name: str) -> None:
        """Name the next mode number."""
        self._record(b"M", name.encode())

    def rows(self, rows: np.ndarray, codes: np.ndarray, n_steps: int, n_rejected: int):
        """Append kept rows (t, x, outputs) and their mode numbers (int32)."""
        body = codes.tobytes() + rows.tobytes()
        size = ROWS.size + len(body)
        self._append(KEPT.pack(b"K", size, len(rows), n_steps, n_rejected), body)

    def latest(self, row: np.ndarray, code: int) -> None:
        """Note the latest sample, not kept (yet): where the run has got to."""
        self._record(b"L", MODE.pack(code) + row.tobytes())

    def event(self, event: object) -> None:
        """Append an Event."""
        self._record(b"E", pickle.dumps(event))

    def close(self) -> None:
        """Unmap the file (it stays, for `replay`)."""
        if self._map is not None:
            self._map.close()
            self._map = None

    def _record(self, kind: bytes, payload: bytes) -> None:
        self._append(HEADER.pack(kind, len(payload)), payload)

    def _append(self, head: bytes, body: bytes) -> None:
        """Append one record, then count it as whole."""
        mapped = self._map
        if mapped is None:
            raise ValueError(f"journal {self.path} is closed")
        start = self._end + len(head)
        end = start + len(body)
        if end > len(mapped):
            mapped.resize(max(end, 2 * len(mapped)))
        mapped[self._end : start] = head
        mapped[start:end] = body
        LENGTH.pack_into(mapped, 0, end)
        self._end = end


def replay(path: str | Path):
    """Return a Recorder (made inside the caller's `recording()`, if any)
    holding the latest run journaled in `path`; None if none."""
    from .recorder import Recorder  # the Recorder writes journals; not vice versa

    try:
        data = memoryview(Path(path).read_bytes())
    except FileNotFoundError:
        return None
    if len(data) < LENGTH.size:
        return None
    (length,) = LENGTH.unpack_from(data)
    recorder, latest = None, None
    modes: list[str] = []
    offset = LENGTH.size
    while offset + HEADER.size <= length:
        kind, size = HEADER.unpack_from(data, offset)
        start, offset = offset + HEADER.size, offset + HEADER.size + size
        if offset > length:
            break  # not counted whole: cut short by the end of the process
        payload = data[start:offset]
        if kind == b"B":
            recorder, modes, latest = Recorder(*pickle.loads(payload)), [], None
        elif recorder is None:
            continue
        elif kind == b"M":
            modes.append(bytes(payload).decode())
        elif kind == b"K":
            n, recorder.n_steps, recorder.n_rejected = ROWS.unpack_from(payload)
            codes = np.frombuffer(payload[ROWS.size : ROWS.size + 4 * n], dtype="<i4")
            rows = np.frombuffer(payload[ROWS.size + 4 * n :], dtype="<f8")
            recorder.coded_rows(rows.reshape(n, -1), codes, modes)
            latest = None
        elif kind == b"L":
            latest = payload
        elif kind == b"E":
            recorder.event(pickle.loads(payload))
    if recorder is not None and latest is not None:
        (code,) = MODE.unpack_from(latest)
        row = np.frombuffer(latest[MODE.size :], dtype="<f8")[np.newaxis]
        recorder.coded_rows(row, np.array([code]), modes)
    return recorder
