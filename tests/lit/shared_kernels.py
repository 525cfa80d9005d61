# Why: every kernel of shared/kernels compiles for the GPU without one
# (PTX for sm_90), including the 2-D ones: attention's two dots (on tensor
# cores, wgmma), its row max and sum, and the broadcasts of their results.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32 HEAD_DIM=64 BLOCK_M=64 BLOCK_N=32 CAUSAL=true | %FileCheck %s --check-prefix=ATTN
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/reductions.py reduce_rows 'x_ptr=*fp32:D' 'sum_ptr=*fp32:D' 'max_ptr=*fp32:D' 'argmin_ptr=*i32:D' M=i32 N=i32 stride=i32 BM=16 BN=64 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/atomics.py histogram 'x_ptr=*i32:D' 'hist_ptr=*i32:D' n=i32 n_bins=i32 BLOCK=512 | %FileCheck %s --check-prefix=ATOM
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/composition.py normalize 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' n=i32 BLOCK=1024 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/control_flow.py collatz_steps 'x_ptr=*i32:D' 'out_ptr=*i32:D' n=i32 BLOCK=1 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/dtypes.py convert 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32 BLOCK=256 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/softmax.py softmax_kernel 'out_ptr=*fp32:D' 'in_ptr=*fp32:D' in_stride=i32 out_stride=i32 n_cols=i32 BLOCK=1024 | %FileCheck %s
# CHECK: .entry
# CHECK-NOT: .local
# ATTN: .entry attn_fwd
# ATTN: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
# ATTN: ex2.approx
# ATTN-NOT: .local
# ATOM: atom.global
