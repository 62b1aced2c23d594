"""float64 elementwise product."""

import numpy as np


def scale(inputs):
    return np.asarray(inputs["x"], dtype=np.float64) * np.asarray(inputs["w"], dtype=np.float64)
