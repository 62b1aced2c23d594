"""Op under test: a correct cumsum over the last axis that accumulates in the input's dtype (as a
GPU scan does), so its error grows with the partial sums."""
import numpy as np

from gpuemu.script import serve


def cumsum_f32(inputs, **kwargs):
    x = np.asarray(inputs["x"])
    return np.cumsum(x, axis=-1, dtype=x.dtype)


serve(cumsum_f32)
