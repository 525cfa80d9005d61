# Why: contiguous, 16-byte aligned accesses (the D attribute, a BLOCK that
# splits into runs of 16 bytes per thread) move as one vector per run: 4
# floats, or 8 halves packed in 4 words (PTX vectors have at most 4 parts),
# each word rounded from two floats by one cvt.rn.f16x2.f32. Halves always
# travel in 32-bit words (4 halves: v2.b32, as Triton): a predicated
# v4.b16 load makes ptxas merge each 16-bit part with its default (PRMTs).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/vector_add.py add_kernel 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'out_ptr=*fp32:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=F32
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/layernorm.py layernorm_fwd 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' 'w_ptr=*fp16:D' 'b_ptr=*fp16:D' 'mean_ptr=*fp32:D' 'rstd_ptr=*fp32:D' stride=i32:D n_cols=i32:D eps=fp32 BLOCK=4096 | %FileCheck %s --check-prefix=F16
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/layernorm.py layernorm_fwd 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' 'w_ptr=*fp16:D' 'b_ptr=*fp16:D' 'mean_ptr=*fp32:D' 'rstd_ptr=*fp32:D' stride=i32:D n_cols=i32:D eps=fp32 BLOCK=1024 | %FileCheck %s --check-prefix=F16X4
# F32: ld.global.v4.b32
# F32: ld.global.v4.b32
# F32: st.global.v4.b32
# F16: ld.global.v4.b32
# F16-NOT: .v8.
# F16: cvt.rn.f16x2.f32
# F16: st.global.v4.b32
# F16X4-NOT: global.v4.b16
# F16X4: ld.global.v2.b32
# F16X4-NOT: global.v4.b16
# F16X4: cvt.rn.f16x2.f32
# F16X4: st.global.v2.b32
