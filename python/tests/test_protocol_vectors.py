# tests/vectors/protocol/messages.json, which the C++ codec test also loads: every good message
# decodes to its stated header and tensors and re-encodes byte for byte; every bad one is refused.
import json
import math

import numpy as np
from pathlib import Path

import pytest

from gpuemu._internal.wire import protocol

REPO_ROOT = Path(__file__).resolve().parents[2]

VECTORS = json.loads((REPO_ROOT / "tests" / "vectors" / "protocol" / "messages.json").read_text())


def logical(value):
    return math.nan if value == "NaN" else math.inf if value == "Infinity" else -math.inf if value == "-Infinity" else value


def same_values(got: np.ndarray, want: list) -> bool:
    flat = [v.item() for v in np.asarray(got).reshape(-1)]
    want = [logical(v) for v in want]
    if len(flat) != len(want):
        return False
    for a, b in zip(flat, want):
        if isinstance(b, float) and math.isnan(b):
            if not math.isnan(a):
                return False
        elif a != b or (isinstance(b, float) and b == 0 and math.copysign(1, a) != math.copysign(1, b)):
            return False
    return True


@pytest.mark.parametrize("vector", VECTORS["good"], ids=lambda v: v["name"])
def test_good_messages_decode_and_re_encode(vector):
    data = bytes.fromhex(vector["hex"])
    header, tensors = protocol.decode_message(data)
    assert header == vector["header"]
    assert set(tensors) == set(vector["tensors"])
    entries = {e["name"]: e for e in header.get("tensors", [])}
    for name, want in vector["tensors"].items():
        got = tensors[name]
        assert entries[name]["dtype"] == want["dtype"]
        assert list(got.shape) == want["shape"]
        if want["dtype"] != "bfloat16":  # bfloat16 decodes to a fresh float32 array (numpy has no bfloat16)
            assert [s // got.itemsize for s in got.strides] == want["strides"] or got.size <= 1
        assert same_values(got, want["values"]), name

    # The header as written is the canonical JSON (sorted keys, compact): framing it again gives the bytes.
    raw_header, payload = protocol.split_frame(data)
    assert protocol.encode_frame(raw_header, payload) == data
    # And encoding from the decoded arrays gives the same bytes, layouts included.
    body = {k: v for k, v in header.items() if k != "tensors"}
    wire = {name: (arr, "bfloat16") if entries[name]["dtype"] == "bfloat16" else arr for name, arr in tensors.items()}
    if not any(e["dtype"] == "bfloat16" and "strides" in e for e in entries.values()):
        assert protocol.encode_message(body, wire) == data


@pytest.mark.parametrize("vector", VECTORS["bad"], ids=lambda v: v["name"])
def test_bad_messages_are_refused(vector):
    assert vector["error_kind"] == "bad_message"
    with pytest.raises(protocol.MessageError):
        protocol.decode_message(bytes.fromhex(vector["hex"]))


@pytest.mark.parametrize("vector", VECTORS["bad_requests"], ids=lambda v: v["name"])
def test_bad_requests_are_well_formed_messages(vector):
    # The codec accepts them; the daemon refuses them by content (test_client_daemon sends them).
    header, _ = protocol.decode_message(bytes.fromhex(vector["hex"]))
    assert isinstance(header, dict)
