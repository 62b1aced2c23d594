"""BUG: the y = x * w of scale.py, but the store has no mask. Every element of y is right; the
tail block's dead lanes write past the end of y, over whatever the allocator put there (on a GPU,
another tensor; under the bare interpreter, the worker's heap, so later, innocent cases fail).
gpuemu's sanitizer refuses the store before it writes and fails this case as out_of_bounds."""

import torch
import triton
import triton.language as tl

BLOCK = 64


@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * w).to(y_ptr.dtype.element_ty))  # BUG: no mask; lanes past n write outside y


def scale(inputs):
    x, w = inputs["x"], inputs["w"]
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, w, y, n, BLOCK=BLOCK)
    return y
