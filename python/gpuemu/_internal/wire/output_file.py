# The output file gpuemu offers its warm workers (docs/worker-protocol.md, "Outputs in gpuemu's file"):
# the worker writes a call's outputs into gpuemu's memfd, which gpuemu then reads in place (no copy of its own).
"""Write a call's outputs into the file its "output_file" names ("/proc/<pid>/fd/<n>", a memfd gpuemu owns).

The file is mapped shared, once, and kept mapped while gpuemu offers the same file (checked by its
inode each call), so refilling it costs no page faults. gpuemu seals the file against shrinking, so
the mapping cannot fault past its end. Standard library only.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from gpuemu._internal.wire.input_files import PATTERN, map_own_file

__all__ = ["OutputFile", "ALIGN"]

ALIGN = 64  # each output starts on a cache line


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class OutputFile:
    """The worker's mapping of gpuemu's output file. place() copies outputs into it; when it cannot
    (the file cannot be opened here, or the outputs do not fit), the caller sends them another way."""

    def __init__(self) -> None:
        self._key: tuple | None = None  # (path, inode, size) of the mapped file
        self._map: mmap.mmap | None = None

    def _mapping(self, path: str, size: int) -> mmap.mmap | None:
        if not PATTERN.fullmatch(path) or size <= 0:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (path, st.st_ino, size)
        if key == self._key:
            return self._map
        self.close()
        try:
            mapping, st = map_own_file(path, size, "output", shared=True)
        except (OSError, ValueError):  # not mappable here: the caller sends the outputs another way
            return None
        self._key, self._map = (path, st.st_ino, size), mapping
        return mapping

    def place(self, header: dict, entries: list[dict], buffers: list[Any]) -> bool:
        """Copies every buffer into the call's output file and points its entry there ("file" and an
        offset); True when done. False, with entries and buffers untouched, when the call offers no
        file, the file cannot be mapped here, or the outputs do not fit."""
        path, size = header.get("output_file"), header.get("output_file_bytes")
        if not isinstance(path, str) or not isinstance(size, int):
            return False
        views = [memoryview(b).cast("B") for b in buffers]
        offsets, at = [], 0
        for v in views:
            offsets.append(at)
            at += _aligned(v.nbytes)
        if at > size:
            return False
        mapping = self._mapping(path, size)
        if mapping is None:
            return False
        target = memoryview(mapping)
        try:
            for view, offset in zip(views, offsets):
                target[offset:offset + view.nbytes] = view
        finally:
            target.release()
        for entry, offset in zip(entries, offsets):
            entry.update(file=path, offset=offset)
        return True

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
        self._key, self._map = None, None
