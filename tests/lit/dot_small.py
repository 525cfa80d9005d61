# Why: Triton 3.6 on NVIDIA takes dots with M or N down to 1 (K at least 16
# for 16-bit operands, 8 for fp32, 32 for 8-bit), as mamba3's decode step
# does (a matrix-vector product written as a dot with N = 1). Shapes under a
# tensor-core tile run as exact FMAs; the results are checked against NumPy
# on both backends by bench/gpu_cases.py (small_dot, matvec_bf16).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py small_dot 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' M=1 N=16 K=16 | %FileCheck %s --check-prefix=ROW
# RUN: %kiln compile --target cuda:sm_80 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matvec_bf16 'a_ptr=*fp32:D' 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' M=64 K=64 | %FileCheck %s --check-prefix=VEC
# RUN: (%kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py small_dot 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' M=16 N=16 K=4 2>&1; true) | %FileCheck %s --check-prefix=KMIN
# ROW: .entry small_dot
# ROW-NOT: mma
# ROW: fma.rn.f32
# VEC: .entry matvec_bf16
# VEC-NOT: mma
# VEC: fma.rn.f32
# KMIN: tl.dot of 32-bit operands needs K >= 8 (as Triton on NVIDIA)
