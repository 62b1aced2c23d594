"""Attention as a tile kernel with a scaling bug: the scores q k^T are never multiplied by
1/sqrt(D), so the softmax is too sharp whenever D > 1.
"""

import math

import numpy as np
import tile_emu as tl  # next to this file, as triton.language would be

from gpuemu.script import serve

BLOCK_M = 16


def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M, N, D, sm_scale, sq, sk, sv, so, BLOCK_M, BLOCK_N, BLOCK_D):
    head = tl.program_id(1)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_mask = (offs_m[:, None] < M) & (offs_d[None, :] < D)
    kv_mask = (offs_n[:, None] < N) & (offs_d[None, :] < D)
    q = tl.load(q_ptr + head * sq[0] + offs_m[:, None] * sq[1] + offs_d[None, :] * sq[2], mask=q_mask, other=0.0)
    k = tl.load(k_ptr + head * sk[0] + offs_n[:, None] * sk[1] + offs_d[None, :] * sk[2], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + head * sv[0] + offs_n[:, None] * sv[1] + offs_d[None, :] * sv[2], mask=kv_mask, other=0.0)
    # BUG: sm_scale is passed in but never applied to the scores.
    s = tl.dot(q, k.T)
    s = np.where(offs_n[None, :] < N, s, -math.inf)
    p = np.exp(s - np.max(s, axis=1)[:, None])
    p = p / np.sum(p, axis=1)[:, None]
    o = tl.dot(p.astype(v.dtype), v)
    tl.store(o_ptr + head * so[0] + offs_m[:, None] * so[1] + offs_d[None, :] * so[2], o, mask=q_mask)


def attention_no_scale(inputs, sm_scale=None, **kwargs):
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    H, M, D = q.shape
    N = k.shape[1]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    o = np.empty((H, M, D), dtype=q.dtype)
    (q_ptr, sq), (k_ptr, sk), (v_ptr, sv), (o_ptr, so) = map(tl.pointer, (q, k, v, o))
    tl.launch(attention_kernel, (tl.cdiv(M, BLOCK_M), H), q_ptr, k_ptr, v_ptr, o_ptr, M, N, D, scale,
              sq, sk, sv, so, BLOCK_M=BLOCK_M, BLOCK_N=tl.next_power_of_2(N), BLOCK_D=tl.next_power_of_2(D))
    return o


serve(attention_no_scale)
