"""RMSNorm written in torch ops: y = x / sqrt(mean(x**2) + eps) * w. The squares and their
mean are computed in float32 whatever the input dtype; only the result is cast back."""

import torch

EPS = 1e-6


def rmsnorm(inputs):
    x, w = inputs["x"], inputs["w"]
    xf = x.float()
    rms = torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + EPS)
    return (xf * rms * w.float()).to(x.dtype)
