# Twelve numpy ops at realistic sizes for benchmark (i): gpuemu's own share of a `ci run`.
"""float32/float16 numpy kernels as a user would write them; bench_refs.py has float64 references."""

import numpy as np


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def softmax(inputs):
    x = _f32(inputs["x"])
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(inputs["x"].dtype)


def layernorm(inputs):
    x = _f32(inputs["x"])
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + 1e-5)).astype(inputs["x"].dtype)


def rmsnorm(inputs):
    x = _f32(inputs["x"])
    return (x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)).astype(inputs["x"].dtype)


def gelu(inputs):
    x = _f32(inputs["x"])
    return (0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))).astype(inputs["x"].dtype)


def silu(inputs):
    x = _f32(inputs["x"])
    return (x / (1.0 + np.exp(-x))).astype(inputs["x"].dtype)


def relu(inputs):
    return np.maximum(inputs["x"], 0)


def add(inputs):
    return inputs["x"] + inputs["y"]


def mul_add(inputs):
    return (_f32(inputs["x"]) * _f32(inputs["y"]) + _f32(inputs["z"])).astype(inputs["x"].dtype)


def row_sum(inputs):
    return _f32(inputs["x"]).sum(axis=-1)


def scale_shift(inputs):
    return (_f32(inputs["x"]) * 0.5 + 0.25).astype(inputs["x"].dtype)


def exp(inputs):
    return np.exp(_f32(inputs["x"])).astype(inputs["x"].dtype)


def matmul(inputs):
    return (_f32(inputs["a"]) @ _f32(inputs["b"])).astype(inputs["a"].dtype)
