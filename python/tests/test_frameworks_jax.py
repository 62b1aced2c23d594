"""The JAX adapter against real jax: every dtype and layout in and out (values and bits exact; JAX
arrays have no strides), bfloat16 as jnp.bfloat16, float64 only with jax_enable_x64 (never a
silent float32), tracers and non-arrays refused, and Pallas' interpret() switch."""

from __future__ import annotations

import numpy as np
import pytest

from framework_cases import all_cases, bits_of, case_storage, every_16bit_pattern, need
from gpuemu import frameworks
from gpuemu._internal.wire import tensors
from gpuemu.frameworks import AdapterError, AdapterSettings, Converter

jax = need("jax")
jnp = need("jax.numpy")


@pytest.fixture(scope="module")
def x64_conv() -> Converter:
    # A reference's converter turns on jax_enable_x64 (float64 references), so every dtype exists;
    # the op's converter made after it round-trips every dtype bit for bit (a reference's would widen).
    Converter(AdapterSettings(framework="jax", device="cpu", role="reference"))
    return Converter(AdapterSettings(framework="jax", device="cpu", role="op"))


@pytest.mark.parametrize("dtype, layout", all_cases())
def test_round_trip_keeps_values_and_bits(x64_conv, dtype, layout):
    storage = case_storage(dtype, layout)
    x = x64_conv.input(storage, dtype, "x", "op")
    assert isinstance(x, jax.Array) and x.dtype == jnp.dtype(dtype) and x.shape == storage.shape
    ((_, out),) = x64_conv.outputs(x, "op")
    assert out.dtype.name == dtype
    header, raw = tensors.encode_view(out, x64_conv.wire_dtype(out, dtype))
    assert header["dtype"] == dtype and header["shape"] == list(storage.shape)
    assert bytes(raw) == bits_of(storage).tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pattern_survives_bit_for_bit(x64_conv, dtype):
    x = x64_conv.input(every_16bit_pattern(dtype), dtype, "x")
    assert x.dtype == jnp.dtype(dtype)
    ((_, out),) = x64_conv.outputs(x)
    _, raw = tensors.encode_view(out)
    assert np.array_equal(np.frombuffer(raw, np.uint16), np.arange(65536, dtype=np.uint16))


def test_an_ops_float64_input_without_x64_is_an_error_not_a_float32(x64_conv):
    jax.config.update("jax_enable_x64", False)
    try:
        op_conv = Converter(AdapterSettings(framework="jax", device="cpu", role="op"))
        with pytest.raises(AdapterError, match=r"op 'norm': input 'x' \(float64\): JAX would silently turn float64 "
                                               r"into float32 because jax_enable_x64 is off"):
            op_conv.input(np.zeros(3), "float64", "x", "norm")
        assert op_conv.input(np.zeros(3, np.float32), "float32", "x").dtype == jnp.float32
    finally:
        jax.config.update("jax_enable_x64", True)


def test_a_reference_converter_turns_x64_on(x64_conv):
    assert jax.config.read("jax_enable_x64")
    assert x64_conv.input(np.array([1 + 2.0**-40]), "float64", "x").dtype == jnp.float64


def test_tracer_and_non_arrays_are_adapter_errors(x64_conv):
    leaked = []

    @jax.jit
    def kernel(x):
        leaked.append(x * 2)
        return x

    kernel(jnp.ones(3))
    with pytest.raises(AdapterError, match="op 'softmax': output 'out' is a JAX tracer"):
        x64_conv.outputs(leaked[0], "softmax")
    with pytest.raises(AdapterError, match="output 'out' is a list, not a tensor"):
        x64_conv.outputs([1.0], "softmax")
    with pytest.raises(AdapterError, match="has dtype complex64, which gpuemu cannot store"):
        x64_conv.outputs(jnp.ones(2, jnp.complex64), "softmax")


def test_jitted_op_runs_and_its_result_is_read(x64_conv):
    op = jax.jit(lambda inputs: jnp.exp(inputs["x"]).astype(inputs["x"].dtype))
    x = x64_conv.input(np.array([0x3F80, 0x0000], np.uint16), "bfloat16", "x")
    out = x64_conv.call(op, {"x": x}, {}, "bfloat16")
    ((_, arr),) = x64_conv.outputs(out)
    assert arr.dtype.name == "bfloat16" and arr.astype(np.float64).tolist() == [2.71875, 1.0]


def test_interpret_follows_triton_interpret_else_the_gpu(monkeypatch):
    from gpuemu.frameworks import jax as adapter

    monkeypatch.delenv("GPUEMU_PALLAS_INTERPRET", raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert adapter.interpret() is True
    monkeypatch.setenv("GPUEMU_PALLAS_INTERPRET", "0")  # the Pallas switch wins
    assert adapter.interpret() is False
    monkeypatch.delenv("GPUEMU_PALLAS_INTERPRET")
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert adapter.interpret() is False
    monkeypatch.delenv("TRITON_INTERPRET")
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    assert adapter.interpret() is (not has_gpu)


def test_torch_tensor_to_jax_through_gpuemu():
    torch = need("torch")
    x = frameworks.to_framework(torch.tensor([1.5, 2.5], dtype=torch.bfloat16), "jax")
    assert x.dtype == jnp.bfloat16 and x.tolist() == [1.5, 2.5]
