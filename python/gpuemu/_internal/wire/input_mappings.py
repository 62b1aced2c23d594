# A warm worker's mappings of gpuemu's input files, kept from call to call (docs/worker-protocol.md,
# "Inputs in gpuemu's file"): mapping, filling and unmapping every input on every call cost more than the light ops.
"""InputMappings: map_input_files for a worker that serves many calls.

gpuemu reuses its input files from case to case (two per op, taken in turn), so the same file comes
back on most calls. Each file is mapped once, whole, privately (copy-on-write, as map_input_files
does); a page the file holds and nobody wrote shows gpuemu's current bytes, so the next call reads
its new inputs through the same mapping. A page a call wrote is a private copy, which would hide the
next case's bytes: after every call (forget_writes) those pages are dropped (MADV_DONTNEED), and
the file's page shows again (on its next touch). /proc/self/pagemap says which pages those are; where it cannot be read,
nothing is kept and every call maps its files anew. At most three files stay mapped (gpuemu's three),
so a file gpuemu has let go of is not kept alive here.
"""

from __future__ import annotations

import mmap
import os
from typing import Iterable

import numpy as np

from gpuemu._internal.wire.input_files import PATTERN, file_ends, map_input_files, map_own_file, not_a_shared_file, populate
from gpuemu._internal.wire.input_guard import copied_pages

__all__ = ["InputMappings"]

_KEPT = 3  # gpuemu's input files of one op: the case's, the next case's and the one after it (made ahead)


def _pagemap_readable() -> bool:
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
            return len(os.pread(pagemap.fileno(), 8, 0)) == 8
    except OSError:
        return False


class InputMappings:
    """The input files of a worker's calls, mapped once each."""

    def __init__(self) -> None:
        self._keep = _pagemap_readable()
        # path -> ((device, inode, size), mapping, bytes filled), the most recently used last.
        self._maps: dict[str, tuple[tuple[int, int, int], mmap.mmap, int]] = {}
        self._used: list[tuple[mmap.mmap, int]] = []  # (mapping, bytes used) by the call being served

    def map(self, entries: Iterable[dict]) -> dict[str, memoryview]:
        """What map_input_files returns, through the kept mappings."""
        entries = list(entries)
        if not self._keep:
            return map_input_files(entries)
        return {path: self._view(path, end) for path, end in file_ends(entries).items()}

    def _view(self, path: str, end: int) -> memoryview:
        if not PATTERN.fullmatch(path):
            raise not_a_shared_file("input", path)
        if end == 0:
            return memoryview(bytearray())
        try:
            st = os.stat(path)
        except OSError:
            st = None
        key = (st.st_dev, st.st_ino, st.st_size) if st is not None else None
        kept = self._maps.pop(path, None)
        if kept is not None and kept[0] == key and end <= key[2]:
            mapping, filled = kept[1], kept[2]
            if end > filled:  # pages no call used yet; those filled before stay mapped (refilling them cost ~40 us a MiB)
                populate(mapping, end, shared=False)
                filled = end
        else:
            # The whole file, so a later, larger case in it needs no new mapping (map_own_file checks
            # `end`); only the pages this call uses are filled: gpuemu has written those.
            size = max(end, st.st_size if st is not None else end)
            mapping, st = map_own_file(path, size, "input", shared=False, populated=end)
            key, filled = (st.st_dev, st.st_ino, st.st_size), end
        self._maps[path] = (key, mapping, filled)
        while len(self._maps) > _KEPT:  # the least recently used goes (closed once no view holds it)
            del self._maps[next(iter(self._maps))]
        self._used.append((mapping, end))
        return memoryview(mapping)[:end]

    def forget_writes(self) -> None:
        """After a call: the pages it wrote in its inputs are dropped, so the file's bytes show again."""
        used, self._used = self._used, []
        for mapping, end in used:
            raw = np.frombuffer(mapping, np.uint8, count=end)
            ranges = copied_pages(raw)
            del raw
            if ranges is None:  # pagemap went away: map anew from now on
                self._keep = False
                self._maps.clear()
                return
            for start, stop in ranges:
                first = start - start % mmap.PAGESIZE
                mapping.madvise(mmap.MADV_DONTNEED, first, stop - first)
