"""BUG: the y = x * w of scale.py, but x is loaded without a mask. The tail block's dead lanes
read past the end of x; the masked store discards those values, so the output is right and the
bare interpreter passes. On a GPU the read is out of bounds (garbage, or a fault when x ends at a
page); gpuemu's sanitizer fails it as out_of_bounds, naming x, the program and the offsets."""

import torch
import triton
import triton.language as tl

BLOCK = 64


@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs).to(tl.float32)  # BUG: no mask; lanes past n read outside x
    w = tl.load(w_ptr + offs, mask=mask).to(tl.float32)
    tl.store(y_ptr + offs, (x * w).to(y_ptr.dtype.element_ty), mask=mask)


def scale(inputs):
    x, w = inputs["x"], inputs["w"]
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, w, y, n, BLOCK=BLOCK)
    return y
