"""Reference: cumsum over the last axis in float64."""
import numpy as np

from gpuemu.script import serve


def cumsum_ref(inputs, **kwargs):
    return np.cumsum(np.asarray(inputs["x"], dtype=np.float64), axis=-1)


serve(cumsum_ref, role="reference")
