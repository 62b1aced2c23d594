"""float64 LayerNorm over the last dim, eps = 1e-5 as the kernels use."""

import numpy as np

EPS = 1e-5


def layernorm(inputs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    w = np.asarray(inputs["w"], dtype=np.float64)
    b = np.asarray(inputs["b"], dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w + b
