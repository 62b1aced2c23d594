# The daemon IPC message codec (docs/protocol.md): one NNG message = a JSON header plus raw tensor
# payloads the header points into. Seeds travel as decimal strings, non-finite floats as strings.
"""encode_message / decode_message for the gpuemu daemon protocol."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from gpuemu.errors import MessageError
from gpuemu._internal.wire import segments
from gpuemu._internal.wire import tensors as tensor_codec
from gpuemu._internal.wire.frames import MAGIC, MAX_HEADER, PREFIX as _PREFIX, VERSION as FRAME_VERSION

__all__ = ["PROTOCOL_VERSION", "MessageError", "encode_message", "decode_message", "encode_frame", "split_frame",
           "tensor_entries"]

PROTOCOL_VERSION = 1  # the "protocol_version" of every request header
# A message has the prefix of a worker frame (wire/frames.py: magic, FRAME_VERSION, lengths).


def _json_safe(value: Any) -> Any:
    """Non-finite floats become "NaN"/"Infinity"/"-Infinity"; everything else is left as is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return value


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise MessageError(f"{what} must be an integer, got {value!r}")
    return value


def _strided_storage(arr: np.ndarray) -> tuple[list[int], bytes] | None:
    """(strides in elements, storage bytes) of a view with positive, element-aligned strides, so the
    daemon gets the layout the client had; None when a contiguous copy is the honest encoding."""
    item = arr.itemsize
    if arr.size == 0 or any(s <= 0 or s % item for s in arr.strides) or not arr.dtype.isnative:
        return None
    steps = [s // item for s in arr.strides]
    extent = 1 + sum((d - 1) * k for d, k in zip(arr.shape, steps))
    if extent > 4 * arr.size + 64:
        return None  # a sparse view: sending its gaps would cost more than the values
    flat = np.lib.stride_tricks.as_strided(arr, shape=(extent,), strides=(item,), writeable=False)
    return steps, flat.tobytes()


def tensor_entries(named: dict[str, Any], start: int = 0) -> tuple[list[dict], list[Any]]:
    """Header entries {"name", "dtype", "shape", "strides", "offset", "nbytes"} and their buffers.

    A value may be (array, "bfloat16") to send float32 values as bfloat16. "strides" is always
    written (as the C++ encoder does); a strided numpy view keeps its layout.
    """
    entries, buffers, offset = [], [], start
    for name, value in named.items():
        dtype = None
        if isinstance(value, tuple):  # (array, "bfloat16"): a wire dtype numpy cannot express
            value, dtype = value
        arr = np.asarray(value)
        header, raw = tensor_codec.encode_view(arr, dtype)  # no copy yet: encode_message copies once
        kept = None if arr.flags.c_contiguous or arr.dtype.name != tensor_codec.numpy_dtype(header["dtype"]).name \
            else _strided_storage(arr)
        if kept is not None and header["dtype"] != "bfloat16":
            header["strides"], raw = kept
        nbytes = raw.nbytes if isinstance(raw, memoryview) else len(raw)
        entries.append({"name": str(name), **header, "offset": offset, "nbytes": nbytes})
        buffers.append(raw)
        offset += nbytes
    return entries, buffers


def _header_text(header: dict) -> bytes:
    """Compact JSON with sorted keys (as the C++ encoder writes it), non-finite floats as strings."""
    return json.dumps(_json_safe(header), separators=(",", ":"), sort_keys=True, allow_nan=False).encode("utf-8")


def encode_frame(header: dict, payload: bytes = b"") -> bytes:
    """One frame: prefix, the header's JSON text, the payload."""
    text = _header_text(header)
    return _PREFIX.pack(MAGIC, FRAME_VERSION, len(text), len(payload)) + text + payload


def encode_message(header: dict, tensors: dict[str, Any] | None = None, segment: Any = None) -> bytearray:
    """prefix (magic, version, header length, payload length) + JSON header + tensor bytes.

    The tensors are copied exactly once, straight into the message buffer (the transport sends a
    bytearray as it is): with 64 MiB tensors every extra copy costs tens of milliseconds. With a
    `segments.ReusableSegment`, large tensors are copied into it instead and the daemon maps it.
    """
    body = dict(header)
    buffers: list[Any] = []
    if tensors:
        body["tensors"], buffers = tensor_entries(tensors)
        if segment is not None:
            buffers = segments.move_large(body["tensors"], buffers, segment.fill)
    text = _header_text(body)
    sizes = [b.nbytes if isinstance(b, memoryview) else len(b) for b in buffers]
    message = bytearray(_PREFIX.size + len(text) + sum(sizes))
    _PREFIX.pack_into(message, 0, MAGIC, FRAME_VERSION, len(text), sum(sizes))
    at = _PREFIX.size
    message[at:at + len(text)] = text
    at += len(text)
    for buffer, size in zip(buffers, sizes):
        message[at:at + size] = buffer
        at += size
    return message


def split_frame(data: bytes) -> tuple[dict, bytes]:
    """(header, payload) of one frame, checking the layout and that the header is a JSON object."""
    if len(data) < _PREFIX.size:
        raise MessageError(f"message of {len(data)} bytes is shorter than the {_PREFIX.size}-byte prefix")
    magic, version, hlen, plen = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise MessageError(f"message does not start with {MAGIC!r} (got {bytes(magic)!r})")
    if version != FRAME_VERSION:
        raise MessageError(f"message frame version {version}; this client speaks {FRAME_VERSION}")
    if hlen > MAX_HEADER or _PREFIX.size + hlen + plen != len(data):
        raise MessageError(f"message lengths do not add up: prefix {_PREFIX.size} + header {hlen} + payload {plen} "
                           f"!= {len(data)} bytes")
    try:
        header = json.loads(bytes(data[_PREFIX.size:_PREFIX.size + hlen]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MessageError(f"message header is not UTF-8 JSON: {exc}") from None
    if not isinstance(header, dict):
        raise MessageError("message header must be a JSON object")
    return header, bytes(data[_PREFIX.size + hlen:])


def decode_message(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, {name: array}) of one message; arrays are writable views into a private copy of the payload."""
    header, raw = split_frame(data)
    entries = header.get("tensors", [])
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise MessageError(f'"tensors" must be a list of tensor entries, got {type(entries).__name__}')
    payload = bytearray(raw)
    view = memoryview(payload)
    out: dict[str, np.ndarray] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise MessageError(f"tensor entry {i} has no name")
        name = entry["name"]
        if name in out:
            raise MessageError(f"tensor {name!r} appears twice")
        offset = _int(entry.get("offset"), f"tensor {name!r} offset")
        nbytes = _int(entry.get("nbytes"), f"tensor {name!r} nbytes")
        if offset < 0 or nbytes < 0 or offset + nbytes > len(payload):
            raise MessageError(f"tensor {name!r} (offset {offset}, {nbytes} bytes) lies outside the "
                               f"{len(payload)}-byte payload")
        try:
            out[name] = tensor_codec.decode_raw(entry.get("dtype"), entry.get("shape"), entry.get("strides"),
                                                view[offset:offset + nbytes])
        except ValueError as exc:
            raise MessageError(f"tensor {name!r}: {exc}") from None
    return header, out
