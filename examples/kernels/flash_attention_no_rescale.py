"""Flash attention as a tile kernel with an online-softmax bug: when a key tile raises the running
max, the old sum l and accumulator acc are not rescaled by exp(m_old - m_new).
"""

import math

import numpy as np
import tile_emu as tl  # next to this file, as triton.language would be

from gpuemu.script import serve

BLOCK_M = 16
BLOCK_N = 16


def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, M, N, D, sm_scale, sq, sk, sv, so,
                           BLOCK_M, BLOCK_N, BLOCK_D):
    head = tl.program_id(1)
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q_mask = (offs_m[:, None] < M) & (offs_d[None, :] < D)
    q = tl.load(q_ptr + head * sq[0] + offs_m[:, None] * sq[1] + offs_d[None, :] * sq[2], mask=q_mask, other=0.0)
    m_i = tl.full((BLOCK_M,), -math.inf)
    l_i = tl.zeros((BLOCK_M,))
    acc = tl.zeros((BLOCK_M, BLOCK_D))
    for start_n in range(0, N, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < N) & (offs_d[None, :] < D)
        k = tl.load(k_ptr + head * sk[0] + offs_n[:, None] * sk[1] + offs_d[None, :] * sk[2], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + head * sv[0] + offs_n[:, None] * sv[1] + offs_d[None, :] * sv[2], mask=kv_mask, other=0.0)
        qk = tl.dot(q, k.T) * sm_scale
        qk = np.where(offs_n[None, :] < N, qk, -math.inf)
        m_ij = np.maximum(m_i, np.max(qk, axis=1))
        p = np.exp(qk - m_ij[:, None])
        alpha = np.exp(m_i - m_ij)
        # BUG: alpha is computed but never applied, so l and acc keep terms scaled to an older,
        # smaller max. Wrong whenever a later key tile raises the running max (N > BLOCK_N).
        l_i = l_i + np.sum(p, axis=1)
        acc = acc + tl.dot(p.astype(v.dtype), v)
        m_i = m_ij
    o = acc / l_i[:, None]
    tl.store(o_ptr + head * so[0] + offs_m[:, None] * so[1] + offs_d[None, :] * so[2], o, mask=q_mask)


def flash_attention_no_rescale(inputs, sm_scale=None, **kwargs):
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    H, M, D = q.shape
    N = k.shape[1]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    o = np.empty((H, M, D), dtype=q.dtype)
    (q_ptr, sq), (k_ptr, sk), (v_ptr, sv), (o_ptr, so) = map(tl.pointer, (q, k, v, o))
    tl.launch(flash_attention_kernel, (tl.cdiv(M, BLOCK_M), H), q_ptr, k_ptr, v_ptr, o_ptr, M, N, D, scale,
              sq, sk, sv, so, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=tl.next_power_of_2(D))
    return o


serve(flash_attention_no_rescale)
