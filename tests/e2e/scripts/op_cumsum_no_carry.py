"""Op under test: a blocked cumsum over the last axis (BLOCK = 32) that drops the carry between
blocks, so every element past the first block is wrong. Runs warm (persistent = true) or cold."""
import numpy as np

from gpuemu.script import serve

BLOCK = 32


def cumsum_no_carry(inputs, **kwargs):
    x = np.asarray(inputs["x"])
    out = np.empty(x.shape, dtype=x.dtype)
    for start in range(0, x.shape[-1], BLOCK):
        # BUG: each block starts again from 0 instead of from the previous block's total.
        out[..., start:start + BLOCK] = np.cumsum(x[..., start:start + BLOCK], axis=-1, dtype=x.dtype)
    return out


serve(cumsum_no_carry)
