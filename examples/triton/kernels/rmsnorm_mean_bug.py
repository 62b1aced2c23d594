"""BUG: the RMSNorm of rmsnorm.py without the division by the row length: the sum of squares is
used as the mean square, so every row longer than one element comes out sqrt(N) times too small."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    eps = eps.to(tl.float32)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean_square = tl.sum(x * x, axis=0)  # BUG: no `/ n_cols`
    rstd = libdevice.rsqrt(mean_square + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * y_row_stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(inputs, eps=1e-6):
    x, w = inputs["x"], inputs["w"]
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    rmsnorm_kernel[(n_rows,)](x, w, y, x.stride(0), y.stride(0), n_cols, eps, BLOCK_N=triton.next_power_of_2(n_cols))
    return y
