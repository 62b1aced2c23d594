"""float64 SwiGLU: silu(a) * b."""

import numpy as np


def swiglu(inputs):
    a = np.asarray(inputs["a"], dtype=np.float64)
    b = np.asarray(inputs["b"], dtype=np.float64)
    return a / (1.0 + np.exp(-a)) * b
