"""float64 reference for the softmax ops: softmax over the last dimension, max-subtracted so
every finite input is safe; output stays float64 so the comparison sees it unrounded.
"""

import numpy as np

from gpuemu.script import serve


def softmax_ref(inputs, **kwargs):
    x = np.asarray(inputs["x"], dtype=np.float64)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


serve(softmax_ref, role="reference")
