"""K-tiled matmul c = a @ b as a tile kernel with an accumulation bug: `acc = tl.dot(...)` where
it should be `acc += ...`, so only the last BLOCK_K slice survives whenever K > BLOCK_K.
"""

import numpy as np
import tile_emu as tl  # next to this file, as triton.language would be

from gpuemu.script import serve

BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32


def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N))
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        # BUG: `=` instead of `+=` drops every K slice but the last one.
        acc = tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc, mask=c_mask)


def matmul_acc_bug(inputs, **kwargs):
    a, b = inputs["a"], inputs["b"]
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), dtype=a.dtype)
    a_ptr, (sam, sak) = tl.pointer(a)
    b_ptr, (sbk, sbn) = tl.pointer(b)
    c_ptr, (scm, scn) = tl.pointer(c)
    tl.launch(matmul_kernel, (tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)), a_ptr, b_ptr, c_ptr, M, N, K,
              sam, sak, sbk, sbn, scm, scn, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c


serve(matmul_acc_bug)
