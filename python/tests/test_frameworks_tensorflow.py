"""The TensorFlow adapter against real tensorflow: every dtype and layout in and out (values and bits
exact; TF tensors have no strides), bfloat16 as tf.bfloat16, eager tensors only, and outputs gpuemu
cannot store refused with the op, output and dtype named."""

from __future__ import annotations

import numpy as np
import pytest

from framework_cases import all_cases, bits_of, case_storage, every_16bit_pattern, need
from gpuemu import frameworks
from gpuemu._internal.wire import tensors
from gpuemu.frameworks import AdapterError, AdapterSettings, Converter

tf = need("tensorflow")


@pytest.fixture(scope="module")
def conv() -> Converter:
    return Converter(AdapterSettings(framework="tensorflow", device="cpu"))


@pytest.mark.parametrize("dtype, layout", all_cases())
def test_round_trip_keeps_values_and_bits(conv, dtype, layout):
    storage = case_storage(dtype, layout)
    x = conv.input(storage, dtype, "x", "op")
    assert isinstance(x, tf.Tensor) and x.dtype == getattr(tf, dtype) and tuple(x.shape) == storage.shape
    ((_, out),) = conv.outputs(x, "op")
    assert out.dtype.name == dtype
    header, raw = tensors.encode_view(out, conv.wire_dtype(out, dtype))
    assert header["dtype"] == dtype and header["shape"] == list(storage.shape)
    assert bytes(raw) == bits_of(storage).tobytes()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_every_16bit_pattern_survives_bit_for_bit(conv, dtype):
    x = conv.input(every_16bit_pattern(dtype), dtype, "x")
    assert x.dtype == getattr(tf, dtype)
    ((_, out),) = conv.outputs(x)
    _, raw = tensors.encode_view(out)
    assert np.array_equal(np.frombuffer(raw, np.uint16), np.arange(65536, dtype=np.uint16))


def test_variables_and_tf_functions_give_eager_outputs(conv):
    op = tf.function(lambda inputs: tf.nn.softmax(inputs["x"]))
    x = conv.input(np.array([[0.0, 0.0]], np.float32), "float32", "x")
    out = conv.call(op, {"x": x}, {}, "float32")
    (( _, arr),) = conv.outputs(out)
    assert arr.tolist() == [[0.5, 0.5]]
    ((_, var),) = conv.outputs(tf.Variable([1, 2], dtype=tf.int32))
    assert var.dtype == np.int32 and var.tolist() == [1, 2]


def test_symbolic_and_bad_outputs_are_adapter_errors(conv):
    leaked = []

    @tf.function
    def kernel(x):
        leaked.append(x * 2)
        return x

    kernel(tf.ones(3))
    with pytest.raises(AdapterError, match="op 'gelu': output 'out' is a symbolic graph tensor"):
        conv.outputs(leaked[0], "gelu")
    with pytest.raises(AdapterError, match="has dtype tf.complex64, which gpuemu cannot store"):
        conv.outputs(tf.complex(tf.ones(2), tf.ones(2)), "gelu")
    with pytest.raises(AdapterError, match="has dtype tf.uint16"):
        conv.outputs(tf.ones(2, tf.uint16), "gelu")
    with pytest.raises(AdapterError, match="output 'out' is a str, not a tensor"):
        conv.outputs("nope", "gelu")


def test_tensorflow_tensor_given_to_gpuemu():
    storage, dtype = frameworks.to_storage(tf.constant([1.5, -2.0], dtype=tf.bfloat16))
    assert dtype == "bfloat16" and list(storage) == [0x3FC0, 0xC000]
