# Why: loads feeding a wgmma dot in a loop are pipelined at the alignment
# their addresses have. 16-byte aligned rows go through cp.async.cg of 16
# bytes; 8- and 4-byte aligned ones (row strides of 36 and 34 halves)
# through cp.async.ca of that size, zero-filled where masked; rows with no
# known alignment (the ragged matmul's runtime strides of 3900 and 4100
# halves, without D) are loaded one iteration ahead into registers, issued
# between the wgmma's commit and its wait, and stored by the dot (no
# cp.async). Those loads run 8 halves along the contiguous dim per thread,
# addressed from each run's first pointer at constant offsets (one 64-bit
# address a run, not one an element: the accumulator leaves no room for
# 64). A 2-D row offset `rows[:, None] * stride` is aligned only as the
# stride is (axis info of expand_dims): rows at a runtime stride without D
# are not copied 16 bytes at a time (SA=0: the kernel's runtime strides).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm_rows 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D stride_am=i32 stride_bk=i32 SA=40 SB=72 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=A16
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm_rows 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D stride_am=i32 stride_bk=i32 SA=36 SB=68 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=A8
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm_rows 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D stride_am=i32 stride_bk=i32 SA=34 SB=66 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=A4
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm_rows 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D stride_am=i32 stride_bk=i32 SA=33 SB=65 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=A2
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mm_rows 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' K=i32:D stride_am=i32 stride_bk=i32 SA=0 SB=0 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=A2
# RUN: %kiln compile --target cuda:sm_90 --emit ir %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32 K=i32 stride_am=i32 stride_ak=1 stride_bk=i32 stride_bn=1 stride_cm=i32 stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=RAGIR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32 K=i32 stride_am=i32 stride_ak=1 stride_bk=i32 stride_bn=1 stride_cm=i32 stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=RAG
# A16: cp.async.cg.shared.global {{.*}}, 16,
# A16-NOT: ld.global.b16
# A8-NOT: cp.async.cg
# A8: cp.async.ca.shared.global {{.*}}, 8,
# A8: cp.async.commit_group
# A8: wgmma.commit_group.sync.aligned
# A8: cp.async.ca.shared.global {{.*}}, 8,
# A8-NOT: ld.global.b16
# A4-NOT: cp.async.cg
# A4: cp.async.ca.shared.global {{.*}}, 4,
# A4-NOT: ld.global.b16
# A2-NOT: cp.async
# A2: ld.global.b16
# A2: st.shared.v4.b32
# A2: wgmma.commit_group.sync.aligned
# A2-NEXT: // end inline asm
# A2: ld.global.b16
# A2: wgmma.wait_group.sync.aligned 0
# A2-NOT: cp.async
# RAGIR: load {{.*}} : <128x32xf16> #blocked<spt=[1,8]
# RAGIR: load {{.*}} : <32x128xf16> #blocked<spt=[1,8]
# RAG-NOT: cp.async
# RAG: add.s64 {{.*}}, 2;
# RAG: add.s64 {{.*}}, 14;
# RAG: $L__BB0_2:
# RAG: st.shared.v4.b32
# RAG: fence.proxy.async.shared::cta
# RAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
# RAG: wgmma.commit_group.sync.aligned
# RAG: @%p{{[0-9]+}} ld.global.b16
# RAG: wgmma.wait_group.sync.aligned 0
# RAG-NOT: cp.async
import triton
import triton.language as tl


@triton.jit
def mm_rows(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, SA: tl.constexpr, SB: tl.constexpr,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Row strides SA, SB known to the compiler, or (0) the runtime ones.
    sa = stride_am
    sb = stride_bk
    if SA > 0:
        sa = SA
        sb = SB
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sa + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * sb + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=rk[None, :] + k < K, other=0.0)
        acc += tl.dot(a, tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * sb
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
