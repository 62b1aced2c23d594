"""float64 softmax over the last dim, max-subtracted."""

import numpy as np


def softmax(inputs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
