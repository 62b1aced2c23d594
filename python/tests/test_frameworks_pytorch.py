"""The PyTorch adapter against real torch: every dtype and layout in and out with no copy (torch
tensors over the worker's memory, strides kept, bfloat16 by its bits), no_grad around the call,
and each bad output (wrong device, dtype, requires_grad, not a tensor) a clear AdapterError."""

from __future__ import annotations

import numpy as np
import pytest

from framework_cases import OnlyDLPack, all_cases, bits_of, case_storage, every_16bit_pattern, need
from gpuemu import frameworks
from gpuemu._internal.wire import tensors
from gpuemu.frameworks import AdapterError, AdapterSettings, Converter

torch = need("torch")


@pytest.fixture(scope="module")
def conv() -> Converter:
    return Converter(AdapterSettings(framework="pytorch", device="cpu"))


@pytest.mark.parametrize("dtype, layout", all_cases())
def test_round_trip_keeps_memory_strides_and_bits(conv, dtype, layout):
    storage = case_storage(dtype, layout)
    t = conv.input(storage, dtype, "x", "op")
    assert t.dtype == getattr(torch, dtype) and tuple(t.shape) == storage.shape
    if storage.size:
        assert t.stride() == tuple(s // storage.itemsize for s in storage.strides)  # as_strided, not a copy
        assert t.data_ptr() == storage.ctypes.data
    ((_, out),) = conv.outputs(t, "op")
    assert out.dtype.name == dtype
    if storage.size and storage.flags.c_contiguous:
        assert np.shares_memory(out, storage)  # back without a copy too (a strided one is made row-major once)
    header, raw = tensors.encode_view(out, conv.wire_dtype(out, dtype))
    assert header["dtype"] == dtype and header["shape"] == list(storage.shape)
    assert bytes(raw) == bits_of(storage).tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pattern_survives_bit_for_bit(conv, dtype):
    t = conv.input(every_16bit_pattern(dtype), dtype, "x")
    assert t.dtype == getattr(torch, dtype)
    assert torch.equal(t.view(torch.int16), torch.arange(65536, dtype=torch.int32).to(torch.int16))
    ((_, out),) = conv.outputs(t)
    _, raw = tensors.encode_view(out)
    assert np.array_equal(np.frombuffer(raw, np.uint16), np.arange(65536, dtype=np.uint16))


def test_bfloat16_values_are_real_bfloat16(conv):
    t = conv.input(np.array([0x3F80, 0x4040, 0xBF81], np.uint16), "bfloat16", "x")  # 1, 3, -1.0078125
    assert t.tolist() == [1.0, 3.0, -1.0078125]
    assert (t * 2).dtype == torch.bfloat16


def test_the_op_runs_under_no_grad_with_case_dtype(conv):
    seen = {}

    def op(inputs):
        seen["grad"] = torch.is_grad_enabled()
        seen["dtype"] = frameworks.case_dtype()
        return inputs["x"] * 2

    x = torch.ones(3, requires_grad=False)
    out = conv.call(op, {"x": x}, {}, "float32")
    assert seen == {"grad": False, "dtype": "float32"} and not out.requires_grad
    assert torch.is_grad_enabled()


@pytest.mark.parametrize("make, message", [
    (lambda: torch.ones(3, device="meta"), "is on device 'meta', but the op runs on 'cpu'"),
    (lambda: torch.ones(3, dtype=torch.complex64), "has dtype torch.complex64, which gpuemu cannot store"),
    (lambda: torch.ones(3, dtype=torch.uint32), "has dtype torch.uint32"),
    (lambda: torch.ones(3, requires_grad=True), "requires grad"),
    (lambda: torch.ones(3).to_sparse(), "has layout torch.sparse_coo"),
    (lambda: [1.0, 2.0], "is a list, not a tensor"),
    (lambda: 3.0, "is a float, not a tensor"),
    (lambda: None, "is a NoneType, not a tensor"),
])
def test_bad_outputs_are_adapter_errors_naming_op_output_and_dtype(conv, make, message):
    with pytest.raises(AdapterError, match=message) as info:
        conv.outputs({"y": make()}, "softmax")
    assert str(info.value).startswith("op 'softmax': output 'y'")


def test_numpy_and_other_dlpack_outputs_are_accepted(conv):
    ((_, a),) = conv.outputs(np.arange(3, dtype=np.int64))
    assert a.dtype == np.int64
    ((_, b),) = conv.outputs(frameworks.to_numpy(torch.arange(4, dtype=torch.int16)))
    assert b.dtype == np.int16 and list(b) == [0, 1, 2, 3]


def test_to_framework_from_other_tensors_and_dlpack():
    ml_dtypes = need("ml_dtypes")
    bf = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    t = frameworks.to_framework(bf, "pytorch")
    assert t.dtype == torch.bfloat16 and t.tolist() == [1.5, -2.0]
    # A torch tensor given where gpuemu expects one (validate_op inputs, run_op outputs).
    storage, dtype = frameworks.to_storage(torch.tensor([1.5, -2.0], dtype=torch.bfloat16).t())
    assert dtype == "bfloat16" and list(storage) == [0x3FC0, 0xC000]
    src = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    storage, dtype = frameworks.to_storage(src)
    assert dtype == "float32" and storage.strides == (4, 16) and storage.ctypes.data == src.data_ptr()


def test_auto_device_is_cpu_without_a_gpu():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: auto picks it")
    assert Converter(AdapterSettings(framework="pytorch", device="auto")).settings.device == "cpu"
    with pytest.raises(AdapterError, match="device 'cuda' was asked for, but torch sees no GPU"):
        Converter(AdapterSettings(framework="pytorch", device="cuda"))


def test_describe_says_what_runs(conv):
    assert conv.describe() == {"framework": "pytorch", "framework_version": torch.__version__, "device": "cpu"}


def test_a_bfloat16_tensor_known_only_by_dlpack_is_read_through_torch(conv):
    # numpy's DLPack import has no bfloat16; gpuemu reads it through torch instead (issue #18).
    t = torch.tensor([[1.0, 3.0], [-1.0078125, 0.5]], dtype=torch.bfloat16)
    ((_, out),) = conv.outputs(OnlyDLPack(t), "op")
    assert out.dtype.name == "bfloat16" and out.tolist() == t.float().tolist()
    storage, dtype = frameworks.to_storage(OnlyDLPack(t.t()))
    assert dtype == "bfloat16" and np.array_equal(storage, t.t().contiguous().view(torch.int16).numpy().view(np.uint16))
