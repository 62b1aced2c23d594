# Inputs gpuemu puts in a shared-memory file of its own for its warm workers to map (docs/worker-protocol.md,
# "Inputs in gpuemu's file"): no copy through the pipe, and the op and the reference read the same pages.
"""Map the input files a call frame names ("file": "/proc/<pid>/fd/<n>", a memfd gpuemu owns; elsewhere
than Linux ".../gpuemu-shared-<pid>-<id>/<n>", a file in gpuemu's private directory, docs/platforms.md).

Each file is mapped once per call, privately (copy-on-write): an op that writes into its inputs
changes its own pages only, never gpuemu's file or what the reference reads. gpuemu never shrinks
the file while a call is out, so the mapping cannot fault past the file's end (a peer's segment,
which may shrink at any time, is read as a copy instead: segments.read_segment). Standard library only.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from typing import Any, Iterable

__all__ = ["InputFileUnavailable", "file_ends", "map_input_files", "map_own_file", "not_a_shared_file", "populate",
           "PATTERN"]

# What a call may name: gpuemu's own descriptor, through /proc (a memfd has no other name), or a file
# in gpuemu's private directory (src/platform/shared_memory_file.hpp), where memfd is missing (macOS)
# or GPUEMU_PORTABLE_PLATFORM=ON; no "." or ".." component, so the name says where the file is.
PATTERN = re.compile(r"/proc/[0-9]+/fd/[0-9]+|(?:/(?!\.\.?/)[^/\0]+)*/gpuemu-shared-[0-9]+-[0-9a-f]{8}/[0-9]+")


def not_a_shared_file(what: str, path: str) -> ValueError:
    """The error for a name PATTERN refuses."""
    return ValueError(f"{what} file {path!r} is not one of gpuemu's shared files (a /proc/<pid>/fd/<n> name, "
                      f"or <dir>/gpuemu-shared-<pid>-<id>/<n>)")
# Maps the file's pages into the mapping in one go (Linux 5.14), without copying them, so reading
# the inputs costs no page faults; older kernels refuse it and the pages are mapped on first touch.
_MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)
# The same, writable (an output file): one call instead of a write fault per page.
_MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)


class InputFileUnavailable(OSError):
    """This worker cannot open or map gpuemu's input file (e.g. /proc hidden from it): the worker
    answers with an error frame of kind "input_file" and gpuemu sends the bytes in the payload."""


def populate(mapping: mmap.mmap, length: int, shared: bool) -> None:
    """Maps the first `length` bytes' pages of `mapping` in one go where the kernel can."""
    try:
        mapping.madvise(_MADV_POPULATE_WRITE if shared else _MADV_POPULATE_READ, 0, length)
    except (OSError, ValueError):
        pass


def map_own_file(path: str, size: int, what: str, shared: bool,
                 populated: int | None = None) -> tuple[mmap.mmap, os.stat_result]:
    """The first `size` bytes of a regular file of this user (gpuemu's memfd for `what`, "input" or
    "output"), mapped shared and writable or privately (copy-on-write), the pages of its first
    `populated` bytes (default all) mapped in one go where the kernel can; and the file's stat.
    InputFileUnavailable when it cannot be opened or mapped here, ValueError when it is not such a
    file or is shorter than `size`."""
    try:
        fd = os.open(path, (os.O_RDWR if shared else os.O_RDONLY) | os.O_CLOEXEC)
    except OSError as exc:
        raise InputFileUnavailable(f"cannot open gpuemu's {what} file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise ValueError(f"{what} file {path!r} is not a regular file of this user")
        if st.st_size < size:
            raise ValueError(f"the {what}s lie outside {what} file {path!r} of {st.st_size} bytes (up to byte {size})")
        try:
            mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE,
                                prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:
            raise InputFileUnavailable(f"cannot map gpuemu's {what} file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    populate(mapping, size if populated is None else populated, shared)
    return mapping, st


def _map(path: str, end: int) -> Any:
    if not PATTERN.fullmatch(path):
        raise not_a_shared_file("input", path)
    if end == 0:
        return bytearray()
    return map_own_file(path, end, "input", shared=False)[0]


def map_input_files(entries: Iterable[dict]) -> dict[str, memoryview]:
    """{path: writable memoryview of the whole mapped range} for every "file" the entries name, each
    mapped once, up to the furthest byte an entry names. Raises ValueError for a malformed entry or a
    file too short, InputFileUnavailable when a file cannot be opened or mapped here."""
    return {path: memoryview(_map(path, end)) for path, end in file_ends(entries).items()}


def file_ends(entries: Iterable[dict]) -> dict[str, int]:
    """{path: the furthest byte any entry names in it} for every "file" the entries name. Raises
    ValueError for a negative offset or size."""
    ends: dict[str, int] = {}
    for entry in entries:
        path = entry.get("file")
        if path is None:
            continue
        offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
        if offset < 0 or nbytes < 0:
            raise ValueError(f"tensor {entry.get('name')!r}: negative offset {offset} or nbytes {nbytes}")
        ends[str(path)] = max(ends.get(str(path), 0), offset + nbytes)
    return ends
