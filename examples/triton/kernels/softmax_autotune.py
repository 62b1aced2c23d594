"""Row softmax with @triton.autotune over three block widths: gpuemu tests each config as its own variant
(softmax_autotune[BLOCK_N=16,num_warps=1], ...) instead of benchmarking them through a GPU driver."""

import torch
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK_N": 16}, num_warps=1), triton.Config({"BLOCK_N": 64}, num_warps=2),
           triton.Config({"BLOCK_N": 128}, num_warps=4)]


@triton.autotune(configs=CONFIGS, key=["n_cols"])
@triton.jit
def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK_N)
    running_max = -float("inf")
    running_sum = 0.0
    for start in range(0, n_cols, BLOCK_N):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    for start in range(0, n_cols, BLOCK_N):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - running_max) / running_sum
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(inputs):
    x = inputs["x"]
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, y, x.stride(0), y.stride(0), n_cols)
    return y
