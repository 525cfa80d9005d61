# Why: a hint on a loop-carried value (tutorial 08's grouped GEMM writes
# tl.multiple_of(a_ptrs, [16, 16]) at the top of its k loop, its operands'
# starts and leading dims read from memory) holds in every iteration. The
# axis info gave it only to the value it was asked for first; the loop's
# other carried values kept the bare analysis, so B's loads were 2-byte
# scalars and the loop was not pipelined. Now both operands are 16-byte
# cp.async copies. The kernel is bench/dot_kernels.py's, which the GPU cases
# (bench/gpu_cases.py) run against NumPy.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_loaded_offsets 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp32:D' 'offs_ptr=*i32:D' M=i32:D N=i32:D K=i32:D BM=128 BN=128 BK=32 | %FileCheck %s
# CHECK: .entry matmul_loaded_offsets
# CHECK-NOT: ld.global.b16
# CHECK: cp.async.cg.shared.global {{.*}}, 16,
# CHECK-NOT: ld.global.b16
# CHECK: wgmma.mma_async
# CHECK-NOT: ld.global.b16
