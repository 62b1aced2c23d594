# Catches an op that writes into its inputs, in the warm worker, in cold scripts and on the client
# (docs/worker-protocol.md, "Inputs the op writes into"): the inputs' bytes after the call against gpuemu's.
"""InputGuard: watch an op's inputs before its call, check() after it (raises InputMutatedError).

Two ways of knowing what the inputs held before the call, chosen per input:

- an input mapped privately from gpuemu's file (input_files): the file still holds gpuemu's bytes,
  since a write to a private mapping copies the page. /proc/self/pagemap says which pages of the
  mapping were copied (bit 61, "file page", is clear on them), so only those pages are read back
  from the file and compared; without pagemap every page is.
- any other input (in the payload, a segment's private copy, a cold request's decoded bytes, a
  client's array): a copy of its bytes taken before the call.

Bytes are compared, not values, so a NaN rewritten as the same NaN is no write and -0.0 over 0.0 is.
When bytes differ, the input's elements are compared in row-major order to name the first changed
index; a write that changed only the gaps of a strided layout is named by its storage element.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

import numpy as np

from gpuemu.errors import InputMutatedError

__all__ = ["InputGuard", "copied_pages", "first_change", "mutation_message"]

_PAGE = mmap.PAGESIZE
_PRESENT, _SWAPPED, _FILE_PAGE = 1 << 63, 1 << 62, 1 << 61
_CHUNK = 8 << 20  # bytes compared at once: bounds the temporary of each comparison


def _as_bytes(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two uint8 arrays of one length hold the same bytes (8 at a time where they can)."""
    n = a.size
    whole = n - n % 8
    for start in range(0, whole, _CHUNK):
        stop = min(start + _CHUNK, whole)
        if not np.array_equal(a[start:stop].view(np.uint64), b[start:stop].view(np.uint64)):
            return False
    return np.array_equal(a[whole:], b[whole:])


def _unsigned(view: np.ndarray) -> np.ndarray:
    return view.view(f"u{view.dtype.itemsize}") if view.dtype.itemsize in (1, 2, 4, 8) else view.view(np.uint8)


def first_change(before: np.ndarray, after: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """(how many elements changed, the first one's index in row-major order) between two arrays of one
    shape and dtype, comparing bits; None when every element is the same."""
    if before.size == 0:
        return None
    changed = _unsigned(before) != _unsigned(after)
    count = int(np.count_nonzero(changed))
    if count == 0:
        return None
    return count, tuple(int(i) for i in np.unravel_index(int(np.argmax(changed.reshape(-1))), changed.shape))


def _index_text(name: str, index: tuple[int, ...]) -> str:
    return f"{name}[{', '.join(str(i) for i in index)}]"


def mutation_message(who: str, name: str, count: int, index: tuple[int, ...]) -> str:
    return (f"{who} wrote into its input {name!r}: {count} element{'s' if count != 1 else ''} changed, the first "
            f"at {_index_text(name, index)}; an op must leave its inputs unchanged: write its result into a new "
            f"tensor (np.empty_like(x), torch.empty_like(x), x.clone()) instead of into {name!r}")


class _Watched:
    __slots__ = ("name", "view", "raw", "path", "offset", "copy")

    def __init__(self, name: str, view: np.ndarray, raw: np.ndarray, path: str | None, offset: int,
                 copy: np.ndarray | None):
        self.name, self.view, self.raw, self.path, self.offset, self.copy = name, view, raw, path, offset, copy


def copied_pages(raw: np.ndarray) -> list[tuple[int, int]] | None:
    """[(start, stop)] byte ranges of `raw` (a view of a private file mapping) whose pages were copied
    since they were mapped, i.e. written; None when /proc/self/pagemap cannot be read here."""
    if raw.size == 0:
        return []
    address = int(raw.__array_interface__["data"][0])
    first, last = address // _PAGE, (address + raw.size - 1) // _PAGE
    try:
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
            entries = np.frombuffer(os.pread(pagemap.fileno(), (last - first + 1) * 8, first * 8), np.uint64)
    except OSError:
        return None
    if entries.size != last - first + 1:
        return None
    # A page still the file's (or never touched) was not written; a present private page, or a
    # swapped one (only private pages of this mapping can be swapped), was.
    written = ((entries & np.uint64(_PRESENT | _FILE_PAGE)) == np.uint64(_PRESENT)) | \
              ((entries & np.uint64(_SWAPPED)) != 0)
    ranges = []
    for page in np.flatnonzero(written):
        start = max(0, (first + int(page)) * _PAGE - address)
        stop = min(raw.size, (first + int(page) + 1) * _PAGE - address)
        if ranges and ranges[-1][1] == start:
            ranges[-1] = (ranges[-1][0], stop)
        else:
            ranges.append((start, stop))
    return ranges


class InputGuard:
    """The inputs of one call, watched before it and checked after it."""

    def __init__(self, op: str = "", who: str | None = None):
        self.op = op
        # How messages name the code that wrote: "op 'softmax'", or the client's "run_op".
        self.who = who if who is not None else (f"op {op!r}" if op else "the op")
        self._watched: list[_Watched] = []

    def watch(self, name: str, view: np.ndarray, raw: Any) -> None:
        """An input whose only other copy is the one taken here: `view` is the op's storage view, `raw`
        the bytes it lies in."""
        data = np.frombuffer(raw, np.uint8) if not isinstance(raw, np.ndarray) else raw.reshape(-1).view(np.uint8)
        self._watched.append(_Watched(name, view, data, None, 0, data.copy()))

    def watch_file(self, name: str, view: np.ndarray, raw: Any, path: str, offset: int) -> None:
        """An input in a private mapping of gpuemu's file `path`, its bytes at `offset` there."""
        self._watched.append(_Watched(name, view, np.frombuffer(raw, np.uint8), path, offset, None))

    def watch_array(self, name: str, arr: np.ndarray) -> None:
        """A client's numpy array (any layout): its elements are copied."""
        self._watched.append(_Watched(name, arr, np.zeros(0, np.uint8), None, 0, np.array(arr, copy=True)))

    def check(self) -> None:
        """Raises InputMutatedError for the first input (in the order watched) the call wrote into."""
        for w in self._watched:
            found = self._change(w)
            if found is not None:
                count, where = found
                if isinstance(where, tuple):
                    raise InputMutatedError(mutation_message(self.who, w.name, count, where))
                raise InputMutatedError(
                    f"{self.who} wrote into its input {w.name!r} at storage element {where}, in the gaps between its "
                    f"elements (its strided layout): an op must leave its inputs' memory unchanged")

    def _change(self, w: _Watched):
        if w.raw.size == 0 and w.copy is not None:  # a client's array: compare its elements directly
            return first_change(w.copy, w.view)
        if w.path is None:
            if _equal(w.copy, w.raw):
                return None
            original = w.copy
        else:
            original = self._file_original(w)
            if original is None:
                return None
        before = np.lib.stride_tricks.as_strided(
            np.frombuffer(original, w.view.dtype, count=original.size // w.view.dtype.itemsize),
            shape=w.view.shape, strides=w.view.strides, writeable=False) if w.view.size else w.view
        found = first_change(before, w.view)
        if found is not None:
            return found
        differ = np.flatnonzero(original != w.raw)
        return 1, int(differ[0]) // max(1, w.view.dtype.itemsize) if differ.size else 0

    @staticmethod
    def _file_original(w: _Watched) -> np.ndarray | None:
        """gpuemu's bytes of a mapped input when some page of it differs, else None."""
        ranges = copied_pages(w.raw)
        if ranges is None:
            ranges = [(0, w.raw.size)] if w.raw.size else []
        if not ranges:
            return None
        fd = os.open(w.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            changed = False
            for start, stop in ranges:
                theirs = np.frombuffer(os.pread(fd, stop - start, w.offset + start), np.uint8)
                if theirs.size != stop - start or not _equal(theirs, w.raw[start:stop]):
                    changed = True
                    break
            if not changed:
                return None
            whole = np.frombuffer(os.pread(fd, w.raw.size, w.offset), np.uint8)
        finally:
            os.close(fd)
        return whole
