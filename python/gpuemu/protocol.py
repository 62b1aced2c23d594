# The daemon IPC message codec (docs/protocol.md): one NNG message = a JSON header plus raw tensor
# payloads the header points into. Seeds travel as decimal strings, non-finite floats as strings.
"""encode_message / decode_message for the gpuemu daemon protocol."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np

from gpuemu import tensors as tensor_codec

__all__ = ["PROTOCOL_VERSION", "MessageError", "encode_message", "decode_message", "tensor_entries"]

PROTOCOL_VERSION = 1
MAGIC = b"GEMU"
_PREFIX = struct.Struct("<4sIIQ")
MAX_HEADER = 64 << 20


class MessageError(ValueError):
    """Bytes that are not a protocol message (wrong magic or version, truncated, bad JSON)."""


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


def tensor_entries(named: dict[str, Any], start: int = 0) -> tuple[list[dict], list[bytes]]:
    """Header entries {"name", "dtype", "shape", "strides", "offset", "nbytes"} and their buffers."""
    entries, buffers, offset = [], [], start
    for name, value in named.items():
        dtype = None
        if isinstance(value, tuple):  # (array, "bfloat16"): a wire dtype numpy cannot express
            value, dtype = value
        header, raw = tensor_codec.encode_raw(np.asarray(value), dtype)
        entries.append({"name": str(name), **header, "offset": offset, "nbytes": len(raw)})
        buffers.append(raw)
        offset += len(raw)
    return entries, buffers


def encode_message(header: dict, tensors: dict[str, Any] | None = None) -> bytes:
    """prefix (magic, version, header length, payload length) + JSON header + tensor bytes."""
    body = dict(header)
    buffers: list[bytes] = []
    if tensors:
        body["tensors"], buffers = tensor_entries(tensors)
    text = json.dumps(_json_safe(body), separators=(",", ":"), allow_nan=False).encode("utf-8")
    payload = b"".join(buffers)
    return _PREFIX.pack(MAGIC, PROTOCOL_VERSION, len(text), len(payload)) + text + payload


def decode_message(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, {name: array}) of one message; tensors are views into a private copy of data."""
    if len(data) < _PREFIX.size:
        raise MessageError(f"message of {len(data)} bytes is shorter than the {_PREFIX.size}-byte prefix")
    magic, version, hlen, plen = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise MessageError(f"message does not start with {MAGIC!r} (got {bytes(magic)!r})")
    if version != PROTOCOL_VERSION:
        raise MessageError(f"message format version {version}; this client speaks {PROTOCOL_VERSION}")
    if hlen > MAX_HEADER or _PREFIX.size + hlen + plen != len(data):
        raise MessageError(f"message lengths do not add up: header {hlen} + payload {plen} + prefix "
                           f"{_PREFIX.size} != {len(data)} bytes")
    try:
        header = json.loads(bytes(data[_PREFIX.size:_PREFIX.size + hlen]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MessageError(f"message header is not UTF-8 JSON: {exc}") from None
    if not isinstance(header, dict):
        raise MessageError("message header must be a JSON object")
    payload = bytearray(data[_PREFIX.size + hlen:])
    view = memoryview(payload)
    out: dict[str, np.ndarray] = {}
    for entry in header.get("tensors") or []:
        offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
        if offset < 0 or nbytes < 0 or offset + nbytes > len(payload):
            raise MessageError(f"tensor {entry.get('name')!r} lies outside the message payload")
        out[str(entry["name"])] = tensor_codec.decode_raw(entry["dtype"], entry["shape"], entry.get("strides"),
                                                          view[offset:offset + nbytes])
    return header, out
