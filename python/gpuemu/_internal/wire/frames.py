# The byte layer of the warm-worker protocol (docs/worker-protocol.md): a 20-byte prefix, a JSON
# header and raw payload bytes. Standard library only (no numpy): the frame layer needs no array.
"""Read and write warm-worker frames.

A frame is::

    magic   4 bytes  b"GEMU"
    version u32 LE   1
    hlen    u32 LE   length of the JSON header in bytes
    plen    u64 LE   length of the payload in bytes
    header  hlen bytes of UTF-8 JSON (an object with a "type")
    payload plen bytes (tensor buffers, located by the header's "offset"/"nbytes")
"""

from __future__ import annotations

import json
import os
import struct
from typing import BinaryIO, Iterable

from gpuemu.errors import FrameError

MAGIC = b"GEMU"
VERSION = 1
PREFIX = struct.Struct("<4sIIQ")
MAX_HEADER = 64 << 20

__all__ = ["MAGIC", "VERSION", "PREFIX", "MAX_HEADER", "FrameError", "read_frame", "write_frame", "encode_frame"]


def _read_exact(stream: BinaryIO, n: int, at_frame_start: bool = False) -> bytearray | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            if got == 0 and at_frame_start:
                return None  # a clean end of stream between frames
            raise FrameError(f"the stream ended inside a frame ({got} of {n} bytes)")
        got += k
    return buf


def read_frame(stream: BinaryIO) -> tuple[dict, bytearray] | None:
    """The next (header, payload) from a binary stream, or None at a clean end of stream.

    The payload is a bytearray, so numpy views over it are writable.
    """
    prefix = _read_exact(stream, PREFIX.size, at_frame_start=True)
    if prefix is None:
        return None
    magic, version, hlen, plen = PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise FrameError(f"expected a frame starting with {MAGIC!r}, got {bytes(magic)!r}")
    if version != VERSION:
        raise FrameError(f"frame version {version} is not supported (this gpuemu speaks {VERSION})")
    if hlen > MAX_HEADER:
        raise FrameError(f"frame header of {hlen} bytes is over the {MAX_HEADER}-byte limit")
    raw_header = _read_exact(stream, hlen)
    try:
        header = json.loads(raw_header.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameError(f"frame header is not UTF-8 JSON: {exc}") from None
    if not isinstance(header, dict):
        raise FrameError("frame header must be a JSON object")
    payload = _read_exact(stream, plen) if plen else bytearray()
    return header, payload


def encode_frame(header: dict, buffers: Iterable = ()) -> list:
    """The pieces of one frame: prefix+header bytes, then each buffer (not copied)."""
    views = [memoryview(b).cast("B") for b in buffers]
    text = json.dumps(header, separators=(",", ":"), allow_nan=True).encode("utf-8")
    plen = sum(v.nbytes for v in views)
    return [PREFIX.pack(MAGIC, VERSION, len(text), plen) + text, *views]


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view.nbytes:
        n = os.write(fd, view)
        view = view[n:]


def write_frame(fd: int, header: dict, buffers: Iterable = ()) -> None:
    """Writes one frame to a file descriptor (loops over partial writes)."""
    for piece in encode_frame(header, buffers):
        _write_all(fd, piece)
