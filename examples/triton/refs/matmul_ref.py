"""float64 matmul."""

import numpy as np


def matmul(inputs):
    return np.asarray(inputs["a"], dtype=np.float64) @ np.asarray(inputs["b"], dtype=np.float64)
