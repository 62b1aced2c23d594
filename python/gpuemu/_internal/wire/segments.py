# Shared-memory segments (docs/protocol.md "Shared-memory segments"): /dev/shm/gpuemu-* files that
# carry large tensors between the client, the daemon and warm workers without copying them through a socket.
"""Create, fill, read and sweep the shared-memory files gpuemu passes large tensors in.

A segment is a file ``/dev/shm/gpuemu-<pid>-<n>`` (mode 0600) named in a tensor entry's
``"segment"`` field; the entry's ``offset``/``nbytes`` then index the file instead of the
message payload. Standard library only (numpy is imported by callers).
"""

from __future__ import annotations

import itertools
import mmap
import os
import stat
from typing import Any, Callable, Iterable

__all__ = ["SEGMENT_DIR", "SEGMENT_PREFIX", "MIN_SEGMENT_BYTES", "available", "read_segment",
           "LentSegments", "ReusableSegment", "move_large", "sweep_stale"]

SEGMENT_DIR = "/dev/shm/"
SEGMENT_PREFIX = "gpuemu-"
# Tensors smaller than this travel in the message itself: below it a file and a mapping cost more
# than copying the bytes through the socket or pipe (bench (e), docs/performance.md).
# GPUEMU_SEGMENT_MIN_BYTES overrides it (tests use it to send small tensors through segments).
MIN_SEGMENT_BYTES = int(os.environ.get("GPUEMU_SEGMENT_MIN_BYTES") or 256 << 10)

_counter = itertools.count()


def available() -> bool:
    """True when this machine has a writable /dev/shm (Linux); elsewhere tensors go in the message."""
    return os.path.isdir(SEGMENT_DIR) and os.access(SEGMENT_DIR, os.W_OK | os.X_OK)


def _new_path() -> str:
    return f"{SEGMENT_DIR}{SEGMENT_PREFIX}{os.getpid()}-{next(_counter)}-{os.urandom(4).hex()}"


def _check_path(path: str) -> None:
    name = path[len(SEGMENT_DIR):]
    if not path.startswith(SEGMENT_DIR) or not name.startswith(SEGMENT_PREFIX) or "/" in name or ".." in name:
        raise ValueError(f"segment {path!r} is not a file {SEGMENT_DIR}{SEGMENT_PREFIX}*")


def read_segment(path: str, offset: int, nbytes: int) -> memoryview:
    """A private copy of bytes [offset, offset + nbytes) of a segment someone else wrote.

    Checks that it is a regular file of this user with mode 0600, as the daemon does. The file is
    opened without blocking (a FIFO of that name is refused, never waited on) and never mapped: its
    writer may shrink or refill it at any time, which through a mapping would be a SIGBUS of this
    process. A file that is too short, or shrinks while it is read, raises ValueError naming it.
    Only the named bytes are read (a 16-byte tensor in a 512 MiB sparse file reads 16 bytes)."""
    _check_path(path)
    if offset < 0 or nbytes < 0:
        raise ValueError(f"segment {path!r}: negative offset {offset} or nbytes {nbytes}")
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise ValueError(f"segment {path!r} is not a regular file of this user with mode 0600")
        if offset + nbytes > st.st_size:
            raise ValueError(f"the tensor lies outside segment {path!r} of {st.st_size} bytes "
                             f"(offset {offset}, nbytes {nbytes})")
        # Anonymous private memory (no file behind it, so nothing can take its pages away), its pages
        # made in one go: faulting them in one by one during the read costs as much as the copy.
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
        copy = mmap.mmap(-1, max(nbytes, 1), flags=flags)
        view = memoryview(copy)[:nbytes]
        done = 0
        while done < nbytes:
            n = os.preadv(fd, [view[done:]], offset + done)
            if n == 0:
                raise ValueError(f"segment {path!r} shrank to {offset + done} bytes while it was read "
                                 f"(offset {offset}, nbytes {nbytes})")
            done += n
        return view
    finally:
        os.close(fd)


class LentSegments:
    """A worker's result segments. A result is written into a segment it lends to gpuemu, which
    names it in a later call's "released" once it no longer reads it; released segments are
    refilled (their pages are already there) instead of making new files. All are removed by close()."""

    def __init__(self, keep_free: int = 2) -> None:
        self._free: list[tuple[str, int, mmap.mmap]] = []
        self._lent: dict[str, tuple[int, mmap.mmap]] = {}
        self._keep_free = keep_free

    def release(self, paths: Iterable[str]) -> None:
        for path in paths:
            lent = self._lent.pop(str(path), None)
            if lent is not None:
                self._free.append((str(path), *lent))
        self._free.sort(key=lambda item: item[1])
        while len(self._free) > self._keep_free:
            self._remove(*self._free.pop())  # the largest go first

    def lend(self, buffers: list[Any]) -> tuple[str, list[int]]:
        need = max(1, sum(memoryview(b).nbytes for b in buffers))
        for i, (path, size, mapping) in enumerate(self._free):
            if size >= need:
                del self._free[i]
                break
        else:
            size = max(need, 1 << 20)
            path, fd = _create(size)
            try:
                mapping = mmap.mmap(fd, size)
            except BaseException:
                os.unlink(path)
                raise
            finally:
                os.close(fd)
        self._lent[path] = (size, mapping)
        return path, _copy_into(mapping, buffers)

    @staticmethod
    def _remove(path: str, _size: int, mapping: mmap.mmap) -> None:
        mapping.close()
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def close(self) -> None:
        for path, size, mapping in self._free:
            self._remove(path, size, mapping)
        for path, (size, mapping) in self._lent.items():
            self._remove(path, size, mapping)
        self._free, self._lent = [], {}


def _create(size: int) -> tuple[str, int]:
    path = _new_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        # Reserve the pages now: a /dev/shm too small for them (Docker's default is 64 MiB) fails
        # here with ENOSPC, and the caller sends the tensors in the message, instead of a SIGBUS
        # when a write through the mapping finds no page.
        os.posix_fallocate(fd, 0, size)
    except OSError:
        os.close(fd)
        os.unlink(path)
        raise
    return path, fd


def _copy_into(target: Any, buffers: Iterable[Any]) -> list[int]:
    """Copies each buffer into target back to back; returns their offsets."""
    offsets, at = [], 0
    view = memoryview(target)
    for buffer in buffers:
        raw = memoryview(buffer).cast("B")
        view[at:at + raw.nbytes] = raw
        offsets.append(at)
        at += raw.nbytes
    return offsets


class ReusableSegment:
    """One segment a client refills for each request (fresh pages cost page faults every time),
    grown when a request needs more. The daemon only reads it while answering a request, so it may be
    refilled once the reply is in; after a timeout the daemon may still be reading, so the caller
    calls discard() and the next request gets a new file."""

    def __init__(self) -> None:
        self.path: str | None = None
        self._map: mmap.mmap | None = None
        self._size = 0
        self._pid = os.getpid()

    def fill(self, buffers: list[Any]) -> tuple[str, list[int]]:
        if os.getpid() != self._pid:  # a forked child: the file is the parent's, leave it to the parent
            self.path, self._map, self._size, self._pid = None, None, 0, os.getpid()
        need = max(1, sum(memoryview(b).nbytes for b in buffers))
        if self._map is None or need > self._size:
            self.discard()
            size = max(need, 1 << 20)
            path, fd = _create(size)
            try:
                self._map = mmap.mmap(fd, size)
            except BaseException:
                os.unlink(path)
                raise
            finally:
                os.close(fd)
            self.path, self._size = path, size
        return self.path, _copy_into(self._map, buffers)

    def discard(self) -> None:
        """Unlinks and unmaps the file (a reader that still has it open finishes its copy)."""
        if os.getpid() != self._pid:
            return  # inherited through fork: the parent still uses the file
        if self._map is not None:
            self._map.close()
            self._map = None
        if self.path is not None:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self.path = None
        self._size = 0

    def __del__(self) -> None:
        try:
            self.discard()
        except Exception:  # interpreter shutdown: os may be half torn down
            pass


def move_large(entries: list[dict], buffers: list[Any], place: Callable[[list[Any]], tuple[str, list[int]]]) -> list[Any]:
    """Moves the buffers of at least MIN_SEGMENT_BYTES into a segment: `place(buffers)` copies them
    and returns (path, offsets). Their entries get "segment" and an offset into it; returns the
    buffers that stay in the message, with their entries' offsets renumbered back to back."""
    sizes = [memoryview(b).nbytes for b in buffers]
    large = [i for i, n in enumerate(sizes) if n >= MIN_SEGMENT_BYTES]
    if not large:
        return buffers
    path, offsets = place([buffers[i] for i in large])
    for i, at in zip(large, offsets):
        entries[i].update(segment=path, offset=at)
    rest, at = [], 0
    for i, (entry, buffer) in enumerate(zip(entries, buffers)):
        if i not in large:
            entry["offset"] = at
            rest.append(buffer)
            at += sizes[i]
    return rest


def sweep_stale() -> int:
    """Removes this user's segments whose creating process is gone (a crash between creating and
    handing over); returns how many. Cheap: one directory listing."""
    removed = 0
    try:
        names = os.listdir(SEGMENT_DIR)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(SEGMENT_PREFIX):
            continue
        pid_text = name[len(SEGMENT_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        path = SEGMENT_DIR + name
        try:
            if os.stat(path, follow_symlinks=False).st_uid != os.geteuid():
                continue
            os.kill(int(pid_text), 0)
            continue  # its creator still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OSError):
            continue
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed
