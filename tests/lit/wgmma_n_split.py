# Why: a 64-row block with 8 warps is a common Triton config (DeepSeek-V3's
# fp8_gemm autotune, BM = 64 with num_warps = 8). Triton runs it on wgmma
# with warpsPerCTA [4, 2]: one warpgroup per half of N. kiln ran it on
# mma.sync, 0.31x Triton's speed on the H100 (and not bit-identical to
# Triton's wgmma results, whose fp8 products accumulate in less than f32).
# Each warpgroup now issues m64n64 on its own 64 columns (its B descriptor
# starts 64 rows of K-major B further on); 16-bit operands need the half to
# be a whole swizzled row (64 columns), so BN = 64 with 8 warps stays on
# mma.sync.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm 'a_ptr=*fp8e4nv:D' 'b_ptr=*fp8e4nv:D' 'c_ptr=*fp32:D' K=i32:D BM=64 BN=128 BK=128 --num-warps 8 | %FileCheck %s --check-prefix=FP8
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D BM=64 BN=128 BK=64 --num-warps 8 | %FileCheck %s --check-prefix=F16
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D BM=64 BN=64 BK=64 --num-warps 8 | %FileCheck %s --check-prefix=NARROW
# FP8: .entry mm
# FP8-NOT: mma.sync
# FP8: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
# FP8-NOT: mma.sync
# F16: .entry mm
# F16-NOT: mma.sync
# F16: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# NARROW: .entry mm
# NARROW-NOT: wgmma.mma_async
# NARROW: mma.sync.aligned.m16n8k16
import triton
import triton.language as tl


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # B stored N x K (K contiguous), as DeepSeek-V3's fp8_gemm reads it.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
