# float64 references of bench_ops.py for benchmark (i).
"""Each reference computes in float64 and returns float64."""

import numpy as np


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def softmax(inputs):
    x = _f64(inputs["x"])
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(inputs):
    x = _f64(inputs["x"])
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)


def rmsnorm(inputs):
    x = _f64(inputs["x"])
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6)


def gelu(inputs):
    x = _f64(inputs["x"])
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def silu(inputs):
    x = _f64(inputs["x"])
    return x / (1.0 + np.exp(-x))


def relu(inputs):
    return np.maximum(_f64(inputs["x"]), 0.0)


def add(inputs):
    return _f64(inputs["x"]) + _f64(inputs["y"])


def mul_add(inputs):
    return _f64(inputs["x"]) * _f64(inputs["y"]) + _f64(inputs["z"])


def row_sum(inputs):
    return _f64(inputs["x"]).sum(axis=-1)


def scale_shift(inputs):
    return _f64(inputs["x"]) * 0.5 + 0.25


def exp(inputs):
    return np.exp(_f64(inputs["x"]))


def matmul(inputs):
    return _f64(inputs["a"]) @ _f64(inputs["b"])
