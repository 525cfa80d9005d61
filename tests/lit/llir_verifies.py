# Why: kiln builds its LLVM IR through the C++ API, which accepts some IR
# that LLVM's own reader and verifier refuse (inline asm returning a
# one-member struct did, for every scalar masked load on the GPU). The IR
# printed by --emit llir must read back and verify, or dumps and
# KILN_OVERRIDE_DIR edits of it cannot be used.
# RUN: %kiln compile --target cuda:sm_90 --emit llir --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=1 | %opt -passes=verify -disable-output
# RUN: %kiln compile --target cuda:sm_90 --emit llir --num-warps 8 %shared/kernels/softmax.py softmax_kernel 'out_ptr=*fp32' 'in_ptr=*fp32' in_stride=i32 out_stride=i32 n_cols=i32 BLOCK=1024 | %opt -passes=verify -disable-output
# RUN: %kiln compile --target cuda:sm_90 --emit llir --num-warps 4 --num-stages 3 %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32 K=i32 stride_am=i32 stride_ak=1 stride_bk=i32 stride_bn=1 stride_cm=i32 stride_cn=1 BM=128 BN=128 BK=32 | %opt -passes=verify -disable-output
# RUN: %kiln compile --target cpu --emit llir %shared/kernels/softmax.py softmax_kernel 'out_ptr=*fp32' 'in_ptr=*fp32' in_stride=i32 out_stride=i32 n_cols=i32 BLOCK=1024 | %opt -passes=verify -disable-output
