#!/usr/bin/env python3
# Writes tests/vectors/protocol/messages.json: daemon protocol messages (docs/protocol.md) as hex with
# their decoded form, plus bytes a decoder must refuse. Both the C++ and the Python suite load it.
"""Usage: python3 tests/vectors/protocol/generate.py  (rewrites messages.json next to this file).

This encoder is deliberately independent of src/daemon/codec.cpp and gpuemu/_internal/wire/protocol.py: it packs
the frame with struct and writes headers as compact JSON with sorted keys, as both encoders must.
Regenerate only after a deliberate change to docs/protocol.md, and update both sides with it.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = struct.Struct("<4sIIQ")
FORMATS = {"float16": "e", "float32": "f", "float64": "d", "int8": "b", "int16": "h", "int32": "i",
           "int64": "q", "uint8": "B", "bool": "?"}
SIZES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "int16": 2, "int32": 4,
         "int64": 8, "uint8": 1, "bool": 1}


def wire_float(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def element_bytes(dtype: str, value) -> bytes:
    if dtype == "bfloat16":  # values here are exactly representable: the top half of the f32 bits
        return struct.pack("<I", struct.unpack("<I", struct.pack("<f", value))[0])[2:]
    return struct.pack("<" + FORMATS[dtype], value)


def contiguous(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step *= max(d, 1)
    return strides


def storage(dtype, shape, strides, values, fill):
    """The storage buffer of a strided view: logical values placed at their offsets, gaps = fill."""
    count = 0 if 0 in shape else (1 + sum((d - 1) * s for d, s in zip(shape, strides)))
    buf = [fill] * count
    for linear, value in enumerate(values):
        offset, rest = 0, linear
        for d, s in reversed(list(zip(shape, strides))):
            offset += (rest % d) * s
            rest //= d
        buf[offset] = value
    return b"".join(element_bytes(dtype, v) for v in buf)


def frame(header: dict, payload: bytes = b"", version: int = 1, magic: bytes = b"GEMU") -> bytes:
    text = json.dumps(header, separators=(",", ":"), sort_keys=True, allow_nan=False).encode()
    return PREFIX.pack(magic, version, len(text), len(payload)) + text + payload


def message(header: dict, tensors: list[tuple]) -> tuple[bytes, dict]:
    """tensors: (name, dtype, shape, strides or None (contiguous), logical values, gap fill).

    Encoders always write "strides"; decoders must also accept entries without them (see the bad
    vectors' good_entry, which omits them)."""
    entries, payload, decoded = [], b"", {}
    for name, dtype, shape, strides, values, fill in tensors:
        steps = strides if strides is not None else contiguous(shape)
        raw = storage(dtype, shape, steps, values, fill)
        entry = {"dtype": dtype, "name": name, "nbytes": len(raw), "offset": len(payload), "shape": shape,
                 "strides": steps}
        entries.append(entry)
        payload += raw
        decoded[name] = {"dtype": dtype, "shape": shape, "strides": steps, "values": [wire_float(v) for v in values]}
    body = dict(header)
    if entries:
        body["tensors"] = entries
    return frame(body, payload), {"header": body, "tensors": decoded}


def good_vectors():
    nan, inf = float("nan"), float("inf")
    out = []

    def add(name, header, tensors=()):
        raw, decoded = message(header, list(tensors))
        out.append({"name": name, "hex": raw.hex(), **decoded})

    add("ping request", {"protocol_version": 1, "type": "ping"})
    add("ping reply", {"ok": True, "protocol_version": 1, "type": "ping", "version": "0.1.0", "uptime_secs": 1.5,
                       "pid": 4242, "in_flight": 1, "served": 7, "socket": "/home/u/.gpuemu/gpuemu.sock",
                       "config": None})
    add("validate request with non-finite values and the largest seed",
        {"protocol_version": 1, "type": "validate", "op": "softmax", "seed": "18446744073709551615",
         "dtype": "float32", "kwargs": {"dim": -1, "eps": "NaN", "scale": "-Infinity"}, "id": 17},
        [("input/x", "float32", [2, 3], None, [0.0, -1.5, nan, inf, -inf, 2.0 ** -149], 0.0),
         ("output/out", "float32", [2, 3], None, [0.25, 0.5, nan, 1.0, 0.0, 2.0 ** -149], 0.0)])
    add("get_test_batch reply with a transposed bfloat16 case and a strided float16 case",
        {"ok": True, "protocol_version": 1, "type": "get_test_batch", "seed": "42",
         "cases": [{"seed": "9223372036854775808", "index": 0, "dtype": "bfloat16", "layout": "transposed",
                    "distribution": "regular", "dims": {"M": 2, "N": 3}, "shapes": {"a": [2, 3]},
                    "input_order": ["a"]},
                   {"seed": "1", "index": 1, "dtype": "float16", "layout": "strided", "distribution": "boundary",
                    "dims": {}, "shapes": {"a": [2, 2]}, "input_order": ["a"]}]},
        [("case/0/input/a", "bfloat16", [2, 3], [1, 2], [1.0, -2.0, 0.5, 3.0, -0.25, 65536.0], 0.0),
         ("case/1/input/a", "float16", [2, 2], [5, 1], [2.0 ** -14, -0.0, 65504.0, 2.0 ** -24], nan)])
    add("every integer dtype, a scalar and an empty tensor",
        {"protocol_version": 1, "type": "submit_output", "op": "gather", "seed": "0"},
        [("input/i8", "int8", [3], None, [-128, 0, 127], 0),
         ("input/i16", "int16", [2], None, [-32768, 32767], 0),
         ("input/i32", "int32", [2], None, [-2147483648, 2147483647], 0),
         ("input/i64", "int64", [2], None, [-9223372036854775808, 9223372036854775807], 0),
         ("input/u8", "uint8", [2], None, [0, 255], 0),
         ("input/mask", "bool", [3], None, [True, False, True], False),
         ("input/scale", "float64", [], None, [-0.1], 0.0),
         ("output/out", "float32", [0, 4], None, [], 0.0)])
    add("error reply", {"ok": False, "protocol_version": 1, "type": "error", "request": "fuzz",
                        "error": {"kind": "config", "message": "unknown op 'sofmax' (did you mean 'softmax'?)"}})
    return out


def bad_vectors():
    ping = frame({"protocol_version": 1, "type": "ping"})
    text = b'{"protocol_version":1,"type":"ping"}'
    out = []

    def add(name, raw, kind="bad_message"):
        out.append({"name": name, "hex": raw.hex(), "error_kind": kind})

    def with_tensor(entry, payload):
        return frame({"protocol_version": 1, "type": "validate", "tensors": [entry]}, payload)

    good_entry = {"dtype": "float32", "name": "input/x", "nbytes": 8, "offset": 0, "shape": [2]}
    add("empty message", b"")
    add("shorter than the prefix", ping[:10])
    add("wrong magic", b"GEMV" + ping[4:])
    add("frame version 2", frame({"protocol_version": 1, "type": "ping"}, version=2))
    add("header length past the end", PREFIX.pack(b"GEMU", 1, len(text) + 5, 0) + text)
    add("payload shorter than declared", PREFIX.pack(b"GEMU", 1, len(text), 8) + text + b"\0\0\0\0")
    add("trailing bytes after the payload", ping + b"\0")
    add("header is not JSON", PREFIX.pack(b"GEMU", 1, 5, 0) + b"{ping")
    add("header is a JSON array", frame([1, 2]))  # type: ignore[arg-type]
    add("header is not UTF-8", PREFIX.pack(b"GEMU", 1, 4, 0) + b'"\xff"\n')
    add("tensor past the payload", with_tensor(good_entry, b"\0" * 4))
    add("tensor with an unknown dtype", with_tensor({**good_entry, "dtype": "float8"}, b"\0" * 8))
    add("tensor with a negative dimension", with_tensor({**good_entry, "shape": [-2]}, b"\0" * 8))
    add("tensor with a negative offset", with_tensor({**good_entry, "offset": -4}, b"\0" * 8))
    add("tensor strides reach past nbytes", with_tensor({**good_entry, "strides": [3]}, b"\0" * 8))
    add("tensor nbytes not a whole number of elements", with_tensor({**good_entry, "nbytes": 7}, b"\0" * 8))
    add("tensor entry without a name", with_tensor({k: v for k, v in good_entry.items() if k != "name"}, b"\0" * 8))
    add("tensor shape is not a list", with_tensor({**good_entry, "shape": "2"}, b"\0" * 8))
    add("tensors is not a list", frame({"protocol_version": 1, "type": "ping", "tensors": {"x": 1}}))
    add("duplicate tensor name", frame({"protocol_version": 1, "type": "validate",
                                        "tensors": [good_entry, {**good_entry, "offset": 0}]}, b"\0" * 8))
    add("huge shape overflows", with_tensor({**good_entry, "shape": [2 ** 40, 2 ** 40]}, b"\0" * 8))
    return out


def request_vectors():
    """Messages that decode but that the daemon must refuse with this error kind (and keep serving)."""
    out = []

    def add(name, header, kind):
        out.append({"name": name, "hex": frame(header).hex(), "error_kind": kind})

    add("no protocol_version", {"type": "ping"}, "protocol_mismatch")
    add("protocol_version 2", {"protocol_version": 2, "type": "ping"}, "protocol_mismatch")
    add("protocol_version as a string", {"protocol_version": "1", "type": "ping"}, "protocol_mismatch")
    add("no type", {"protocol_version": 1}, "bad_request")
    add("unknown type", {"protocol_version": 1, "type": "pong"}, "bad_request")
    add("type is not a string", {"protocol_version": 1, "type": 3}, "bad_request")
    add("seed as a JSON number", {"protocol_version": 1, "type": "get_result", "seed": 42}, "bad_request")
    add("seed past 2^64", {"protocol_version": 1, "type": "get_result", "seed": "18446744073709551616"},
        "bad_request")
    add("seed with a sign", {"protocol_version": 1, "type": "get_result", "seed": "-1"}, "bad_request")
    add("limit of the wrong type", {"protocol_version": 1, "type": "list_failures", "limit": "ten"}, "bad_request")
    add("validate without tensors", {"protocol_version": 1, "type": "validate", "op": "x", "seed": "1"},
        "bad_request")
    add("lint without ptx", {"protocol_version": 1, "type": "lint"}, "bad_request")
    add("store_baseline without a tag", {"protocol_version": 1, "type": "store_baseline"}, "bad_request")
    deep: object = 1
    for _ in range(65):
        deep = [deep]
    # JSON a decoder reads, nested deeper than the daemon's 64 levels: refused before parsing.
    add("header nested 65 levels deep", {"protocol_version": 1, "type": "ping", "id": deep}, "bad_message")
    return out


def main() -> None:
    doc = {"comment": "docs/protocol.md test vectors; regenerate with generate.py",
           "good": good_vectors(), "bad": bad_vectors(), "bad_requests": request_vectors()}
    (HERE / "messages.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
