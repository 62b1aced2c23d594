"""BUG: the row max of rowmax.py with no other= on the masked load. The dead lanes are undefined
on a GPU; the bare interpreter gives 0.0, which never wins here (this project's rows are positive),
so it passes. gpuemu's sanitizer poisons those lanes with large values of both signs, the max
picks one and the case fails on its numbers."""

import torch
import triton
import triton.language as tl


@triton.jit
def rowmax_kernel(x_ptr, y_ptr, x_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols)  # BUG: dead lanes are undefined
    tl.store(y_ptr + row, tl.max(x, axis=0))


def rowmax(inputs):
    x = inputs["x"]
    n_rows, n_cols = x.shape
    y = torch.empty(n_rows, dtype=x.dtype)
    # A block with at least two lanes past the row (as a tuned kernel's fixed block often has): every
    # row then has dead lanes, whatever its length.
    rowmax_kernel[(n_rows,)](x, y, x.stride(0), n_cols, BLOCK_N=triton.next_power_of_2(n_cols + 2))
    return y
