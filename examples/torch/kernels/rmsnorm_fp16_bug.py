"""BUG: the RMSNorm of rmsnorm.py with the squares taken in the input's dtype. In float16 a
square above 65504 (|x| > 256, ordinary for activations) is inf, the rms is 0 and the row
comes out as zeros; float32 cases pass, which is why the bug ships."""

import torch

EPS = 1e-6


def rmsnorm(inputs):
    x, w = inputs["x"], inputs["w"]
    ms = (x * x).mean(dim=-1, keepdim=True)  # BUG: float16 squares overflow to inf
    rms = torch.rsqrt(ms.float() + EPS)
    return (x.float() * rms * w.float()).to(x.dtype)
