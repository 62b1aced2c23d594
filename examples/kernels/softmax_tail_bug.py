"""Row softmax as a tile kernel with a tail-mask bug: the column loads are masked by row only, so
the last partial BLOCK_N tile reads past the row (the next row, or zeros past the allocation).
"""

import math

import numpy as np
import tile_emu as tl  # next to this file, as triton.language would be

from gpuemu.script import serve

BLOCK_M = 8
BLOCK_N = 32


def softmax_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn, BLOCK_M, BLOCK_N):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    m = tl.full((BLOCK_M,), -math.inf)
    l = tl.zeros((BLOCK_M,))
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        # BUG: the load mask forgets `cols < N`. Whenever N % BLOCK_N != 0 the tail tile takes
        # elements past the end of the row into the max and the sum (they should be -inf).
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=row_ok[:, None],
                    other=-math.inf).astype(tl.float32)
        m_new = np.maximum(m, np.max(x, axis=1))
        l = l * np.exp(m - m_new) + np.sum(np.exp(x - m_new[:, None]), axis=1)
        m = m_new
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=row_ok[:, None],
                    other=-math.inf).astype(tl.float32)
        y = np.exp(x - m[:, None]) / l[:, None]
        tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, y, mask=mask)


def softmax_tail_bug(inputs, **kwargs):
    x = inputs["x"]
    M, N = x.shape
    y = np.empty((M, N), dtype=x.dtype)
    x_ptr, (sxm, sxn) = tl.pointer(x)
    y_ptr, (sym, syn) = tl.pointer(y)
    tl.launch(softmax_kernel, (tl.cdiv(M, BLOCK_M),), x_ptr, y_ptr, M, N, sxm, sxn, sym, syn,
              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


serve(softmax_tail_bug)
