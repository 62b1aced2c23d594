# The output file gpuemu offers its warm workers (docs/worker-protocol.md, "Outputs in gpuemu's file"):
# the worker writes a call's outputs into gpuemu's memfd, which gpuemu then reads in place (no copy of its own).
"""Write a call's outputs into the file its "output_file" names ("/proc/<pid>/fd/<n>", a memfd gpuemu owns).

Each file is mapped shared, once, and kept mapped while gpuemu offers it (checked by its inode each
call), so refilling it costs no page faults. gpuemu offers two files in turn (one while the outputs
in the other are judged), so two mappings are kept. gpuemu seals the file against shrinking, so the
mapping cannot fault past its end. Standard library only.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from gpuemu._internal.wire.input_files import PATTERN, map_own_file

__all__ = ["OutputFile", "ALIGN"]

ALIGN = 64  # each output starts on a cache line
_KEPT = 2  # gpuemu's output files of one worker, offered in turn


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


class OutputFile:
    """The worker's mapping of gpuemu's output file. place() copies outputs into it; when it cannot
    (the file cannot be opened here, or the outputs do not fit), the caller sends them another way."""

    def __init__(self) -> None:
        # path -> ((inode, size), mapping), the most recently used last.
        self._maps: dict[str, tuple[tuple[int, int], mmap.mmap]] = {}

    def _mapping(self, path: str, size: int) -> mmap.mmap | None:
        if not PATTERN.fullmatch(path) or size <= 0:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        kept = self._maps.pop(path, None)
        if kept is not None and kept[0] == (st.st_ino, size):
            self._maps[path] = kept
            return kept[1]
        if kept is not None:
            kept[1].close()
        try:
            mapping, st = map_own_file(path, size, "output", shared=True)
        except (OSError, ValueError):  # not mappable here: the caller sends the outputs another way
            return None
        self._maps[path] = ((st.st_ino, size), mapping)
        while len(self._maps) > _KEPT:  # the least recently used goes
            self._maps.pop(next(iter(self._maps)))[1].close()
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
        for _, mapping in self._maps.values():
            mapping.close()
        self._maps.clear()
