# Tests for gpuemu._internal.wire.tensors and gpuemu._internal.core.dtypes: round trips for every dtype, strided and transposed
# views, every fp16/bf16 bit pattern, exact RNE rounding from float64, and invalid inputs.
import base64
from fractions import Fraction

import numpy as np
import pytest

from gpuemu._internal.core.dtypes import DTYPE_NAMES, from_bf16_bits, to_bf16_bits
from gpuemu._internal.wire.tensors import decode_raw, decode_tensor, encode_raw, encode_tensor, numpy_dtype
from gpuemu._internal.core.values import generate_tensor


def exact_round(x: float, mant_bits: int, emin: int, emax: int) -> float:
    """Reference RNE of a finite double to a binary format, with Fractions (slow, obviously right)."""
    if x == 0:
        return x
    q = Fraction(abs(x))
    e = max(q.numerator.bit_length() - q.denominator.bit_length(), emin)
    while Fraction(2) ** e > q and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    ulp = Fraction(2) ** (e - mant_bits)
    n, rem = divmod(q, ulp)
    if rem > ulp / 2 or (rem == ulp / 2 and n % 2 == 1):
        n += 1
    v = n * ulp
    if v >= Fraction(2) ** (emax + 1):
        return float("inf") if x > 0 else float("-inf")
    return float(v) if x > 0 else -float(v)


def tricky_doubles(mant_bits: int, emin: int, emax: int, rng: np.random.Generator) -> np.ndarray:
    """Midpoints between neighbours of the target format and the doubles just beside them."""
    out = []
    for e in list(range(emin - mant_bits - 1, emin + 3)) + list(rng.integers(emin, emax + 1, 40)) + [emax]:
        for m in rng.integers(0, 1 << mant_bits, 8).tolist() + [0, (1 << mant_bits) - 1]:
            mid = (1 + (m + 0.5) / (1 << mant_bits)) * 2.0 ** int(e)
            for v in (mid, np.nextafter(mid, 0), np.nextafter(mid, np.inf)):
                out += [v, -v]
    return np.array(out, dtype=np.float64)


def test_numpy_dtype_mapping():
    assert numpy_dtype("bfloat16") == np.float32
    assert numpy_dtype("bf16") == np.float32
    assert numpy_dtype("float16") == np.float16
    assert numpy_dtype("bool") == np.bool_
    with pytest.raises(ValueError, match="unknown dtype 'complex64'"):
        numpy_dtype("complex64")


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_round_trip_every_dtype(dtype):
    arr = generate_tensor(3, dtype, (3, 4), "any", "boundary")
    obj = encode_tensor(arr, dtype)
    assert obj["shape"] == [3, 4] and obj["strides"] == [4, 1] and obj["dtype"] == dtype
    back = decode_tensor(obj)
    assert back.dtype == numpy_dtype(dtype) and np.array_equal(back, arr)
    header, raw = encode_raw(arr, dtype)
    assert "data" not in header and np.array_equal(decode_raw(dtype, header["shape"], None, raw), arr)


def test_default_dtype_is_the_arrays_own():
    assert encode_tensor(np.array([True, False]))["dtype"] == "bool"
    assert encode_tensor(np.arange(3, dtype=np.int16))["dtype"] == "int16"
    assert encode_tensor([1.5, 2.5])["dtype"] == "float64"
    with pytest.raises(ValueError, match="complex"):
        encode_tensor(np.array([1j]))
    with pytest.raises(ValueError, match="uint32"):
        encode_tensor(np.array([1], dtype=np.uint32))


def test_strided_view_over_storage_with_gaps():
    storage = np.arange(3 * 6, dtype="<f4")  # 3 rows of 4 values plus 2 padding elements each
    obj = {"shape": [3, 4], "strides": [6, 1], "dtype": "float32", "data": base64.b64encode(storage.tobytes()).decode()}
    view = decode_tensor(obj)
    assert view.shape == (3, 4) and view.strides == (24, 4)
    assert np.array_equal(view, storage.reshape(3, 6)[:, :4])
    assert view.flags.writeable


def test_transposed_view_shares_the_buffer():
    logical = np.arange(6, dtype=np.float64).reshape(2, 3)
    buffer = bytearray(np.ascontiguousarray(logical.T).tobytes())  # column-major storage
    view = decode_raw("float64", [2, 3], [1, 2], buffer)
    assert np.array_equal(view, logical)
    assert np.shares_memory(view, np.frombuffer(buffer, dtype=np.float64))
    readonly = decode_raw("float64", [2, 3], [1, 2], bytes(buffer))
    assert not readonly.flags.writeable


def test_bf16_strided_decodes_exactly_to_float32():
    bits = np.array([0x3F80, 0xFFFF, 0x4000, 0xFFFF, 0xC040, 0xFFFF], dtype="<u2")
    out = decode_raw("bfloat16", [3], [2], bits.tobytes())
    assert out.dtype == np.float32 and out.tolist() == [1.0, 2.0, -3.0]


def test_every_bf16_pattern_round_trips():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = from_bf16_bits(bits)
    nan = np.isnan(values)
    assert nan.sum() == 2 * 127
    assert np.array_equal(to_bf16_bits(values)[~nan], bits[~nan])
    with np.errstate(invalid="ignore"):  # casting signalling NaNs raises the invalid flag
        wide = values.astype(np.float64)
    assert np.array_equal(to_bf16_bits(wide)[~nan], bits[~nan])
    again = from_bf16_bits(to_bf16_bits(values[nan]))
    assert np.isnan(again).all() and np.array_equal(np.signbit(again), np.signbit(values[nan]))


def test_every_fp16_pattern_round_trips_through_the_codec():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    values = bits.view(np.float16)
    back = decode_tensor(encode_tensor(values.astype(np.float64), "float16"))
    nan = np.isnan(values)
    assert np.array_equal(back.view(np.uint16)[~nan], bits[~nan]) and np.isnan(back[nan]).all()
    # subnormals decode exactly
    assert float(values[1]) == 2.0**-24 and float(values[0x3FF]) == 1023 * 2.0**-24


def test_bf16_rounding_from_float64_is_exact_rne():
    xs = tricky_doubles(7, -126, 127, np.random.default_rng(1))
    xs = np.concatenate([xs, [3.3961e38, (2 - 2.0**-8) * 2.0**127, np.nextafter((2 - 2.0**-8) * 2.0**127, 0), 1e-50]])
    got = from_bf16_bits(to_bf16_bits(xs)).astype(np.float64)
    want = np.array([exact_round(float(x), 7, -126, 127) for x in xs])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(xs[i], got[i], want[i]) for i in bad[:5]]


def test_numpy_float16_cast_is_exact_rne_from_float64():
    xs = tricky_doubles(10, -14, 15, np.random.default_rng(2))
    with np.errstate(over="ignore"):
        got = xs.astype(np.float16).astype(np.float64)
    want = np.array([exact_round(float(x), 10, -14, 15) for x in xs])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(xs[i], got[i], want[i]) for i in bad[:5]]


def test_encode_bfloat16_rounds_from_float32_and_float64():
    x32 = np.array([1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, -0.0], dtype=np.float32)  # ties: to even
    assert to_bf16_bits(x32).tolist() == [0x3F80, 0x3F82, 0x8000]
    x64 = np.array([1.0 + 2.0**-8 + 2.0**-40])  # just above a tie: a float32 detour would lose it
    assert to_bf16_bits(x64).tolist() == [0x3F81]
    assert encode_tensor(x64, "bfloat16")["data"] == base64.b64encode(bytes([0x81, 0x3F])).decode()


@pytest.mark.parametrize(
    "obj, message",
    [
        ([1, 2], "JSON object"),
        ({"shape": [2], "dtype": "float32"}, "missing data"),
        ({"shape": [2], "dtype": "float32", "data": "!!!"}, "base64"),
        ({"shape": [2], "dtype": "float32", "data": 5}, "base64 string"),
        ({"shape": [3], "dtype": "float32", "data": base64.b64encode(bytes(8)).decode()}, "reaches element 2"),
        ({"shape": [2], "dtype": "float32", "data": base64.b64encode(bytes(7)).decode()}, "whole number"),
        ({"shape": [2, 2], "strides": [1], "dtype": "int8", "data": "AAAA"}, "rank"),
        ({"shape": [2], "strides": [-1], "dtype": "int8", "data": "AAAA"}, "negative"),
        ({"shape": [-2], "dtype": "int8", "data": "AAAA"}, "negative dimension"),
        ({"shape": [2], "dtype": "float8", "data": "AAAA"}, "unknown dtype"),
        ({"shape": "2", "dtype": "int8", "data": "AAAA"}, "list of integers"),
        ({"shape": [1.5], "dtype": "int8", "data": "AAAA"}, "integers"),
        ({"shape": [2], "dtype": "bool", "data": base64.b64encode(bytes([0, 2])).decode()}, "0 and 1"),
    ],
)
def test_invalid_inputs_raise_value_error(obj, message):
    with pytest.raises(ValueError, match=message):
        decode_tensor(obj)


def test_empty_tensors_and_scalars():
    empty = decode_tensor({"shape": [0, 3], "dtype": "float32", "data": ""})
    assert empty.shape == (0, 3)
    scalar = decode_tensor(encode_tensor(np.float32(2.5)))
    assert scalar.shape == () and scalar == 2.5
    assert decode_raw("bfloat16", [0], None, b"").dtype == np.float32
