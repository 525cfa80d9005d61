# Why: a layout conversion through shared memory moves whole runs: the
# padding (one chunk per 32 chunks, to spread column accesses over the
# banks) is a chunk of the longer run, so chunks stay whole and aligned.
# matmul.py's epilogue (wgmma accumulator, pairs of columns a thread, to
# the store's blocked layout, 4 columns a thread) writes 8-byte and reads
# 16-byte vectors; with one word of padding per 32 words every read was
# scalar (128 ld.shared.f32) and half the writes too.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 4 --num-stages 3 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s
# CHECK: wgmma.mma_async
# CHECK-NOT: st.shared.f32
# CHECK: st.shared.v2.f32
# CHECK-NOT: ld.shared.f32
# CHECK: ld.shared.v4.f32
# CHECK-NOT: ld.shared.f32
# CHECK: st.global.v4.b32
