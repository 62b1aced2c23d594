"""The numpy adapter (gpuemu.frameworks.numpy) and the one conversion point (Converter): every dtype
and layout in and out without a copy or a cast, bfloat16 as ml_dtypes or the older float32 form,
case_dtype(), outputs gpuemu cannot store, and DLPack values."""

from __future__ import annotations

import numpy as np
import pytest

from framework_cases import OnlyDLPack, all_cases, bits_of, case_storage, every_16bit_pattern, need
from gpuemu import frameworks
from gpuemu._internal.wire import tensors
from gpuemu.frameworks import AdapterError, AdapterSettings, Converter

ml_dtypes = need("ml_dtypes")


def converter(form="ml_dtypes", role="op") -> Converter:
    return Converter(AdapterSettings(framework="numpy", device="auto", numpy_bfloat16=form, role=role))


@pytest.mark.parametrize("dtype, layout", all_cases())
def test_round_trip_keeps_memory_strides_and_bits(dtype, layout):
    storage = case_storage(dtype, layout)
    conv = converter()
    x = conv.input(storage, dtype, "x", "op")
    assert x.dtype.name == dtype and x.shape == storage.shape and x.strides == storage.strides
    if storage.size:
        assert np.shares_memory(x, storage)  # a view, not a copy
    ((name, out),) = conv.outputs(x, "op")
    assert name == "out" and out.dtype.name == dtype
    header, raw = tensors.encode_view(out, conv.wire_dtype(out, dtype))
    assert header["dtype"] == dtype and header["shape"] == list(storage.shape)
    assert bytes(raw) == bits_of(storage).tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pattern_survives_bit_for_bit(dtype):
    storage = every_16bit_pattern(dtype)
    conv = converter()
    x = conv.input(storage, dtype, "x", "op")
    assert x.dtype.name == dtype
    ((_, out),) = conv.outputs(x)
    header, raw = tensors.encode_view(out, conv.wire_dtype(out, dtype))
    assert header["dtype"] == dtype
    assert np.array_equal(np.frombuffer(raw, np.uint16), np.arange(65536, dtype=np.uint16))


def test_bfloat16_is_real_ml_dtypes_and_arithmetic_stays_bfloat16():
    bits = np.array([0x3F80, 0x4000, 0xC040], dtype=np.uint16)  # 1, 2, -3
    x = converter().input(bits, "bfloat16", "x")
    assert x.dtype == np.dtype(ml_dtypes.bfloat16)
    assert (x + x).dtype == np.dtype(ml_dtypes.bfloat16)
    assert np.array_equal(x.astype(np.float64), [1.0, 2.0, -3.0])


def test_float32_form_gives_exact_float32_and_rounds_an_ops_float32_output():
    bits = np.array([0x3F81, 0x7FC1], dtype=np.uint16)  # 1.0078125, a NaN with a payload
    conv = converter("float32")
    x = conv.input(bits, "bfloat16", "x")
    assert x.dtype == np.float32 and x[0] == np.float32(1.0078125)
    # An op's float32 output of a bfloat16 case is stored as bfloat16 (the kernel's store) ...
    out = np.array([1.00390625, 3.0], np.float32)  # 1 + 2^-8 is a tie: rounds to even 1.0
    ((_, arr),) = conv.outputs(out)
    header, raw = tensors.encode_view(arr, conv.wire_dtype(arr, "bfloat16"))
    assert header["dtype"] == "bfloat16" and list(np.frombuffer(raw, np.uint16)) == [0x3F80, 0x4040]
    # ... a reference's stays float32, and with ml_dtypes nothing is rounded (dtype_mismatch instead).
    assert converter("float32", role="reference").wire_dtype(arr, "bfloat16") is None
    assert converter("ml_dtypes").wire_dtype(arr, "bfloat16") is None


def test_case_dtype_is_set_during_the_call_only():
    seen = []
    conv = converter()
    conv.call(lambda inputs, **kw: seen.append(frameworks.case_dtype()), {}, {}, "bf16")
    assert seen == ["bfloat16"] and frameworks.case_dtype() is None
    with pytest.raises(RuntimeError):
        conv.call(lambda inputs: (_ for _ in ()).throw(RuntimeError("boom")), {}, {}, "float16")
    assert frameworks.case_dtype() is None


def test_dlpack_output_and_to_storage():
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    ((_, out),) = converter().outputs({"y": OnlyDLPack(arr)})
    assert out.dtype == np.int32 and np.array_equal(out, arr) and np.shares_memory(out, arr)
    storage, dtype = frameworks.to_storage(OnlyDLPack(arr.T))
    assert dtype == "int32" and storage.strides == arr.T.strides and np.array_equal(storage, arr.T)


@pytest.mark.parametrize("value, message", [
    (None, "output 'out' is None"),
    ("text", "not a numeric array"),
    ([object()], "not a numeric array"),
    (np.zeros(2, np.complex64), "dtype complex64"),
    (np.zeros(2, np.uint32), "dtype uint32, which gpuemu cannot store"),
    ({}, "empty dict"),
])
def test_outputs_gpuemu_cannot_store_are_adapter_errors_naming_op_and_output(value, message):
    with pytest.raises(AdapterError, match=message) as info:
        converter().outputs(value, "softmax")
    assert "softmax" in str(info.value)


def test_other_ml_dtypes_are_refused_not_cast():
    with pytest.raises(AdapterError, match="output 'out' has dtype float8_e4m3fn"):
        converter().outputs(np.zeros(3, ml_dtypes.float8_e4m3fn), "matmul")


def test_numpy_cannot_run_on_cuda():
    with pytest.raises(AdapterError, match="runs on the CPU only"):
        Converter(AdapterSettings(framework="numpy", device="cuda"))


def test_settings_name_the_allowed_values():
    with pytest.raises(ValueError, match=f"framework must be one of {', '.join(frameworks.FRAMEWORKS)}, not 'torch'; "
                                         "did you mean 'pytorch'"):
        AdapterSettings(framework="torch")
    with pytest.raises(ValueError, match="numpy_bfloat16 must be one of ml_dtypes, float32"):
        AdapterSettings(numpy_bfloat16="bf16")
