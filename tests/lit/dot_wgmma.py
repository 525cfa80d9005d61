# Why: on sm_90 (target sm_90a) a tl.dot of f16 or bf16 operands whose
# shape fits a warpgroup (4 warps per 64 rows of M, all warps over M,
# 16 <= N <= 256) runs on wgmma.mma_async m64nNk16: B (and A unless its
# layout holds the register fragments) from shared memory in the swizzled
# layouts wgmma's matrix descriptors describe, matmul.py's B stored along N
# (the transpose flag, last immediate 1). st.shared writes (no pipeline) are
# fenced for the async proxy before the barrier; the pipeline's cp.async
# copies are not (their wait and the barrier suffice, as in Triton's PTX).
# The entry says its CTA size (.reqntid); the instructions are fenced, committed and waited for,
# the pipeline's copies of a later iteration issued while they run.
# Attention's two dots take A (q, then p) from registers; with 8 warps and
# 64 accumulator registers per thread its registers are capped at 128 so
# that two CTAs share an SM; matmul 128x128 with 4 warps (128 accumulator
# registers) at 168, for three; 128x256 with 8 warps is not capped. Shapes that do not
# fit (8 warps over 64 rows), tf32, and KILN_DISABLE_WGMMA=1 keep mma.sync.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=F16
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=256 BK=64 | %FileCheck %s --check-prefix=WIDE
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-stages 1 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=NOPIPE
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*bf16:D' 'b_ptr=*bf16:D' 'c_ptr=*bf16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=BF16
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=SYNC
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=16 | %FileCheck %s --check-prefix=SYNC
# RUN: KILN_DISABLE_WGMMA=1 %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=OFF
# RUN: { KILN_DISABLE_WGMMA=maybe %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 2>&1 || true; } | %FileCheck %s --check-prefix=BAD
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s nested_dots 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=NEST
# RUN: %kiln compile --target cuda:sm_90 --emit ir --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s --check-prefix=ATTNIR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s --check-prefix=ATTN
# F16: .target sm_90a
# F16: .extern .shared .align 1024
# F16: .entry matmul_kernel
# F16: .reqntid 128, 1, 1
# F16-NEXT: .maxnreg 168
# F16-NOT: fence.proxy.async
# F16: cp.async.cg.shared.global {{.*}}, 16,
# F16: cp.async.wait_group 1
# F16-NEXT: bar.sync
# F16: wgmma.fence.sync.aligned
# F16: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1; }
# F16: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# F16: wgmma.commit_group.sync.aligned
# F16: cp.async.cg.shared.global {{.*}}, 16,
# F16: cp.async.commit_group
# F16: wgmma.wait_group.sync.aligned 0
# F16-NOT: mma.sync
# F16-NOT: ldmatrix
# F16-NOT: .local
# WIDE-NOT: .maxnreg
# WIDE: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
# WIDE-NOT: .local
# NOPIPE-NOT: cp.async
# NOPIPE: st.shared.v4.b32
# NOPIPE: fence.proxy.async.shared::cta
# NOPIPE-NEXT: // end inline asm
# NOPIPE-NEXT: bar.sync
# NOPIPE: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# BF16: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
# SYNC-NOT: wgmma
# SYNC: mma.sync.aligned
# SYNC-NOT: wgmma
# OFF: .target sm_90{{$}}
# OFF-NOT: wgmma
# OFF: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# OFF-NOT: wgmma
# BAD: KILN_DISABLE_WGMMA='maybe' is not a boolean
# A loop's copies go out with its own dot, also after an inner loop with its own.
# The inner loop's dot only accumulates: each iteration waits for the one
# before (wait 1) and a barrier, then refills that one's ring slot; the last
# is waited for after the loop.
# NEST: wgmma.commit_group
# NEST-NEXT: // end inline asm
# NEST-NEXT: // begin inline asm
# NEST-NEXT: wgmma.wait_group.sync.aligned 1
# NEST: bar.sync
# NEST: cp.async.commit_group
# NEST: bra
# NEST-NOT: cp.async.commit_group
# NEST: wgmma.wait_group.sync.aligned 0
# NEST: wgmma.commit_group
# NEST-NOT: wgmma.wait_group
# NEST: cp.async.commit_group
# NEST: wgmma.wait_group.sync.aligned 0
# ATTNIR: = for {{.*}} #mma<warps=[8,1]>
# ATTN: .entry attn_fwd
# ATTN: .maxnreg 128
# ATTN: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 0; }
# ATTN: ex2.approx
# ATTN: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1; }
# ATTN-NOT: mma.sync
# ATTN-NOT: .local


import triton
import triton.language as tl


@triton.jit
def nested_dots(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, 8):
        for j in range(0, 4):
            x = tl.load(a_ptr + rm[:, None] * 256 + j * BK + rk[None, :])
            y = tl.load(b_ptr + (j * BK + rk[:, None]) * BN + rn[None, :])
            acc += tl.dot(x, y)
        a = tl.load(a_ptr + rm[:, None] * 256 + i * BK + rk[None, :])
        b = tl.load(b_ptr + (i * BK + rk[:, None]) * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
