# Why: tl.dot takes 3-D (batched) blocks, [B, M, K] x [B, K, N] -> [B, M, N],
# as Triton does (its test_dot3d); kiln runs each batch's product as FMAs
# over per-batch panels in shared memory on the GPU (tensor cores are for
# 2-D dots) and as a loop over the batch on the CPU. Results are checked
# against NumPy on both backends by bench/gpu_cases.py (batched_dot).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py batched_dot 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' B=2 M=32 N=32 K=16 TWICE=0 | %FileCheck %s --check-prefix=GPU
# RUN: %kiln compile --target cpu --emit ir $(dirname %s)/../../bench/dot_kernels.py batched_dot 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' B=2 M=32 N=32 K=16 TWICE=1 | %FileCheck %s --check-prefix=IR
# RUN: (%kiln compile --target cpu --emit ir $(dirname %s)/../../bench/dot_kernels.py batched_dot 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' B=2 M=32 N=32 K=8 TWICE=0 2>&1; true) | %FileCheck %s --check-prefix=BADK
# GPU: .entry batched_dot
# GPU-NOT: mma
# GPU: bar.sync
# GPU: fma.rn.f32
# IR: = dot {{.*}} : <2x32x32xf32>
# IR: = dot {{.*}} : <2x32x32xf32>
# BADK: tl.dot of 16-bit operands needs K >= 16 (as Triton on NVIDIA)
