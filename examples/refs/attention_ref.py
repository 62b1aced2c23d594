"""float64 reference for the attention and flash attention ops: softmax(q k^T * scale) v per
head, scale = 1/sqrt(D) unless an sm_scale kwarg is given.
"""

import math

import numpy as np

from gpuemu.script import serve


def attention_ref(inputs, sm_scale=None, **kwargs):
    q = np.asarray(inputs["q"], dtype=np.float64)
    k = np.asarray(inputs["k"], dtype=np.float64)
    v = np.asarray(inputs["v"], dtype=np.float64)
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    p = np.exp(s - np.max(s, axis=-1, keepdims=True))
    p /= np.sum(p, axis=-1, keepdims=True)
    return np.matmul(p, v)


serve(attention_ref, role="reference")
