"""SwiGLU, silu(a) * b, as a @triton.jit kernel in the tensors' own dtype: for a bfloat16 case the
products are bfloat16 arithmetic (only the sigmoid runs in fp32, as tl.sigmoid needs), which
Triton's bare interpreter computes on the raw 16-bit patterns; gpuemu computes it in fp32 and
rounds to nearest even, as a GPU does."""

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
    gate = tl.sigmoid(a.to(tl.float32)).to(a.dtype)
    tl.store(y_ptr + offsets, a * gate * b, mask=mask)


def swiglu(inputs):
    a, b = inputs["a"].contiguous(), inputs["b"].contiguous()
    y = torch.empty_like(a)
    n = a.numel()
    swiglu_kernel[(triton.cdiv(n, BLOCK),)](a, b, y, n, BLOCK=BLOCK)
    return y
