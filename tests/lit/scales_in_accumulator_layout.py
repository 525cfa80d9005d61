# Why: DeepSeek-V3's fp8_gemm_kernel scales each K block's dot by a per-row
# and a per-column vector loaded in the loop (`tl.dot(a, b) * a_s[:, None] *
# b_s[None, :]`). Loaded in a blocked layout, each vector went through
# shared memory to the accumulator's slice layout every iteration: four
# barriers after the wgmma wait, and the loop-carried pointers converted
# the same way. Such a vector (and an epilogue's bias) is now loaded in the
# accumulator's slice layout, as Triton's layout propagation does: no
# shared memory between the wgmma wait and the end of the iteration. The
# per-column scale's address is one for every 64 columns (`offs_n // BK`,
# AxisInfo's constancy): each thread loads it once, not once per column
# it holds (16), and each of its two rows' scales once.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 --num-stages 3 %s scaled_gemm 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' 'a_s_ptr=*fp32:D' 'b_s_ptr=*fp32:D' 'bias_ptr=*fp32:D' M=i32:D N=1024 K=1024 BM=64 BN=128 BK=64 | %FileCheck %s
# CHECK: .entry scaled_gemm
# CHECK: cp.async.wait_group
# CHECK-COUNT-3: ld.global.f32
# CHECK-NOT: ld.global.f32
# CHECK: wgmma.fence
# CHECK: wgmma.mma_async
# CHECK: wgmma.wait_group
# CHECK-NOT: bar.sync
# CHECK-NOT: ld.shared
# CHECK: bra
import triton
import triton.language as tl


@triton.jit
def scaled_gemm(a_ptr, b_ptr, c_ptr, a_s_ptr, b_s_ptr, bias_ptr, M, N: tl.constexpr, K: tl.constexpr,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    k = tl.cdiv(K, BK)
    offs_m = (pid_m * BM + tl.arange(0, BM)) % M
    offs_n = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_n[None, :] * K + offs_k[:, None]
    a_s_ptrs = a_s_ptr + offs_m * k
    b_s_ptrs = b_s_ptr + (offs_n // BK) * k
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(k):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        a_s = tl.load(a_s_ptrs)
        b_s = tl.load(b_s_ptrs)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BK
        b_ptrs += BK
        a_s_ptrs += 1
        b_s_ptrs += 1
    acc = acc + tl.load(bias_ptr + offs_n)[None, :]
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)
