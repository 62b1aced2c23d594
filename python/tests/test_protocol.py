# The daemon message codec on its own: tensors of every dtype and layout, NaN/Inf, exact u64 seeds,
# and malformed bytes rejected with a message (the shared vectors are checked in test_protocol_vectors).
import math

import numpy as np
import pytest

from gpuemu._internal.wire import protocol
from gpuemu._internal.core.layouts import with_layout
from gpuemu._internal.core.values import generate_tensor
from gpuemu._internal.wire.records import float_from_wire, float_to_wire, seed_from_wire, seed_to_wire, validation_result


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
                                   "uint8", "bool"])
def test_tensors_round_trip_bit_exactly(dtype):
    x = generate_tensor(5, dtype, (3, 4), "any", "boundary")
    y = with_layout(x, "transposed")
    wire = {"a": x if dtype != "bfloat16" else (x, "bfloat16"), "b": y if dtype != "bfloat16" else (y, "bfloat16")}
    header, tensors = protocol.decode_message(protocol.encode_message({"type": "t"}, wire))
    for name, want in (("a", x), ("b", y)):
        got = tensors[name]
        assert got.shape == want.shape
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
    assert [t["dtype"] for t in header["tensors"]] == [dtype, dtype]
    assert header["tensors"][0]["strides"] == [4, 1]
    if dtype != "bfloat16":  # a transposed view travels as that layout, not as a copy
        assert header["tensors"][1]["strides"] == [1, 3]
        assert tensors["b"].strides == y.strides


def test_nonfinite_values_round_trip_in_tensors_and_fields():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype=np.float32)
    header, tensors = protocol.decode_message(
        protocol.encode_message({"type": "t", "stats": {"max_rel": math.inf, "v": [math.nan, -math.inf, 1.5]}},
                                {"x": x}))
    assert tensors["x"].tobytes() == x.tobytes()
    assert header["stats"] == {"max_rel": "Infinity", "v": ["NaN", "-Infinity", 1.5]}
    assert float_from_wire(header["stats"]["max_rel"]) == math.inf
    assert math.isnan(float_from_wire("NaN")) and float_to_wire(-math.inf) == "-Infinity"


def test_seeds_are_exact_decimal_strings():
    for seed in (0, 1, 2**53 + 1, 2**63, 2**64 - 1):
        assert seed_to_wire(seed) == str(seed) and seed_from_wire(seed_to_wire(seed)) == seed
        header, _ = protocol.decode_message(protocol.encode_message({"seed": seed_to_wire(seed)}))
        assert seed_from_wire(header["seed"]) == seed
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match="unsigned 64-bit"):
            seed_to_wire(bad)
    with pytest.raises(ValueError, match="decimal string"):
        seed_from_wire(1.5)
    record = {"seed": "18446744073709551615", "op": "softmax", "kind": "mismatch", "max_abs": "Infinity",
              "max_rel": "NaN", "message": "1 of 4 elements outside", "shapes": {"x": [2, 2]}, "dtype": "float16"}
    result = validation_result(record)
    assert result.seed == 2**64 - 1 and not result.passed and result.max_diff == math.inf
    assert math.isnan(result.max_rel_diff) and result.failures[0]["kind"] == "mismatch"
    assert result.repro_info.shape == (2, 2) and result.repro_info.seed == 2**64 - 1


@pytest.mark.parametrize("data, match", [
    (b"", "shorter than"),
    (b"XXXX" + bytes(16), "does not start with"),
    (protocol.encode_message({"a": 1})[:-1], "do not add up"),
])
def test_malformed_messages_are_rejected_with_a_reason(data, match):
    with pytest.raises(protocol.MessageError, match=match):
        protocol.decode_message(data)


def test_bfloat16_cases_travel_as_bfloat16_only_when_exact():
    from gpuemu._internal.client.client import _wire

    exact = generate_tensor(3, "bfloat16", (4, 4), (-2.0, 2.0), "regular")  # float32 holding bfloat16 values
    assert _wire(exact, "bfloat16")[1] == "bfloat16"
    header, tensors = protocol.decode_message(protocol.encode_message({}, {"x": _wire(exact, "bfloat16")}))
    assert header["tensors"][0]["dtype"] == "bfloat16" and np.array_equal(tensors["x"], exact)
    inexact = exact + np.float32(1e-3)
    assert _wire(inexact, "bfloat16") is inexact  # rounding would change what the op saw: sent as float32
    assert _wire(exact, "float32") is exact
