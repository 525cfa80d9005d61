# Why: causal attention (tutorial 06 with STAGE=3) reads q in two loops, the
# blocks left of the diagonal and the diagonal ones. q was made a register
# fragment load only when a single dot read it, so here it was staged into
# shared memory again in every iteration of both loops (eight 16-byte
# stores and two barriers a thread, D=64). Every use being operand A of
# tensor-core dots that want the same fragments, q is now loaded into them
# once, before the loops.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 4 --num-stages 3 %s causal_attn 'q_ptr=*fp16:D' 'k_ptr=*fp16:D' 'v_ptr=*fp16:D' 'o_ptr=*fp16:D' N_CTX=i32:D D=64 BM=128 BN=64 | %FileCheck %s
# CHECK: .entry causal_attn
# CHECK-NOT: st.shared.v4.b32
# CHECK: wgmma.mma_async
# CHECK-NOT: st.shared.v4.b32
# CHECK: wgmma.mma_async
import triton
import triton.language as tl


@triton.jit
def _inner(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, lo, hi, D: tl.constexpr, BN: tl.constexpr, DIAG: tl.constexpr):
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    for start_n in tl.range(lo, hi, BN):
        k = tl.load(k_ptr + (start_n + offs_n)[None, :] * D + offs_d[:, None])
        qk = tl.dot(q, k)
        if DIAG:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n[None, :]), qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def causal_attn(q_ptr, k_ptr, v_ptr, o_ptr, N_CTX, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32) + 1.0
    m_i = tl.zeros((BM,), dtype=tl.float32) - float("inf")
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, 0, start_m * BM, D, BN, False)
    acc, l_i, m_i = _inner(acc, l_i, m_i, q, k_ptr, v_ptr, offs_m, start_m * BM, (start_m + 1) * BM, D, BN, True)
    tl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))
