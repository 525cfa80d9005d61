# Why: on sm_80 and newer tl.dot runs on tensor cores (this file: sm_80's
# mma.sync; sm_90's wgmma is dot_wgmma.py): f16 and bf16 operands
# on mma.sync m16n8k16, fp32 ones on tf32 m16n8k8 (Triton's default
# input_precision), both operands read with ldmatrix from swizzled shared
# memory (the B operand of matmul.py, stored along N, with ldmatrix.trans).
# The accumulator of `acc += tl.dot(a, b)` stays in the mma layout across
# iterations (the add folds into the mma: no add.f32 in the loop, no
# conversion inside it) and is converted once, for the store. input_precision
# "ieee" keeps the exact FMA path; out_dtype fp16 accumulates in f16 on
# mma.sync (dot_dtypes.py has the other dtypes).
# With num_stages = 3 the loads feeding the dot become cp.async copies
# fetched two iterations ahead into a ring of stages (the loop waits for
# one group, with one barrier); with num_stages = 1 the loaded registers are
# stored to shared memory in 16-byte pieces before the dot.
# RUN: %kiln compile --target cuda:sm_80 --emit ir %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=F16
# RUN: %kiln compile --target cuda:sm_80 --emit ptx --num-stages 1 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=NOPIPE
# RUN: %kiln compile --target cuda:sm_80 --emit ptx --num-stages 2 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=TWO
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*bf16:D' 'b_ptr=*bf16:D' 'c_ptr=*bf16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=BF16
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=16 | %FileCheck %s --check-prefix=TF32
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %s dot_ieee 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' BM=64 BN=64 BK=16 | %FileCheck %s --check-prefix=IEEE
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %s dot_f16_out 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' BM=32 BN=32 BK=16 | %FileCheck %s --check-prefix=ACC16
# RUN: %kiln compile --target cuda:sm_80 --emit ir %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s --check-prefix=ATTN
# IR: = for {{.*}} #mma<warps=[2,2]>
# IR-NOT: convert_layout
# IR: dot {{.*}} #mma<warps=[2,2]>
# IR-NOT: convert_layout
# IR: yield
# IR: convert_layout
# IR-NEXT: store
# F16: .entry matmul_kernel
# F16: cp.async.cg.shared.global {{.*}}, 16,
# F16: cp.async.commit_group
# F16: cp.async.wait_group 1
# F16-NEXT: bar.sync
# F16: cp.async.cg.shared.global {{.*}}, 16,
# F16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# F16: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
# F16-NOT: add.f32
# F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# F16-NOT: .local
# TWO: cp.async.wait_group 0
# TWO-NEXT: bar.sync
# TWO: mma.sync
# NOPIPE-NOT: cp.async
# NOPIPE: st.shared.v4.b32
# NOPIPE: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# NOPIPE: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# BF16: ldmatrix.sync.aligned.m8n8.x4
# BF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# TF32: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# IEEE: .entry dot_ieee
# IEEE-NOT: mma.sync
# IEEE: fma.rn.f32
# IEEE-NOT: mma.sync
# ACC16: .entry dot_f16_out
# ACC16-NOT: fma.rn.f32
# ACC16: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16
# Attention: both dots on tensor cores with warps over M only; the row
# reductions between them and the loop-carried accumulator need no conversion.
# ATTN: = for {{.*}} #mma<warps=[4,1]>
# ATTN-NOT: convert_layout
# ATTN: dot {{.*}} #mma<warps=[4,1]>
# ATTN-NOT: convert_layout
# ATTN: max {{.*}} #slice<dim=1 #mma<warps=[4,1]>>
# ATTN-NOT: convert_layout
# ATTN: dot {{.*}} #mma<warps=[4,1]>
# ATTN-NOT: convert_layout
# ATTN: yield
import triton
import triton.language as tl


@triton.jit
def dot_ieee(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, input_precision="ieee"))


@triton.jit
def dot_f16_out(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b, out_dtype=tl.float16))
