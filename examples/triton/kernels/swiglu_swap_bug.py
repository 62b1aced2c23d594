"""BUG: the SwiGLU of swiglu.py with gate and up swapped: silu(b) * a, which is right only where
a == b."""

import torch
import triton
import triton.language as tl

BLOCK = 64


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    gate = tl.sigmoid(b.to(tl.float32)).to(b.dtype)  # BUG: the gate is silu of b, not of a
    tl.store(y_ptr + offsets, b * gate * a, mask=mask)


def swiglu(inputs):
    a, b = inputs["a"].contiguous(), inputs["b"].contiguous()
    y = torch.empty_like(a)
    n = a.numel()
    swiglu_kernel[(triton.cdiv(n, BLOCK),)](a, b, y, n, BLOCK=BLOCK)
    return y
