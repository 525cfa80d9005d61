# Why: the dot dtypes Triton 3.6 puts on tensor cores besides f16/bf16 ->
# f32 (dot_mma.py, dot_wgmma.py), with the instructions Triton's NVIDIA
# backend picks, on bench/dot_kernels.py's matmuls (their GPU cases are in
# bench/gpu_cases.py, their CPU results in tests/dot_dtypes_test.cpp):
# - int8 x int8 -> int32: mma.sync m16n8k32 .satfinite.s32.s8.s8.s32 (as
#   Triton's MMAv2) with both operands read K-major by ldmatrix (never .trans:
#   it moves 16-bit elements); A, loaded along K, comes by cp.async, B of a
#   row-major K x N by byte stores that transpose it. On sm_90 a warpgroup's
#   wgmma m64nNk32 .s32.s8.s8 (no transpose immediates: integer wgmma has
#   none); B stored N x K comes by cp.async too.
# - f16 accumulators (out_dtype=tl.float16): mma.sync .f16.f16.f16.f16, on
#   sm_90 wgmma .f16.f16.f16 (no f32 FMA anywhere).
# - input_precision="tf32x3": each operand split by cvt.rna.tf32.f32 into
#   big + small, three tf32 mma.sync per tile and k step (small*big,
#   big*small, then big*big), NaNs of the small sum zeroed; also on sm_90
#   (mma.sync, never wgmma).
# RUN: %kiln compile --target cuda:sm_80 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_i8 'a_ptr=*i8:D' 'b_ptr=*i8:D' 'c_ptr=*i32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=64 | %FileCheck %s --check-prefix=I8
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_i8 'a_ptr=*i8:D' 'b_ptr=*i8:D' 'c_ptr=*i32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=64 | %FileCheck %s --check-prefix=I8WG
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_i8 'a_ptr=*i8:D' 'b_ptr=*i8:D' 'c_ptr=*i32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=1 stride_bn=i32:D stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=64 | %FileCheck %s --check-prefix=I8KMAJ
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_i8 'a_ptr=*i8:D' 'b_ptr=*i8:D' 'c_ptr=*i32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=32 BN=64 BK=32 | %FileCheck %s --check-prefix=I8SYNC
# RUN: %kiln compile --target cuda:sm_80 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_f16_acc 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=32 | %FileCheck %s --check-prefix=H
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_f16_acc 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=HWG
# RUN: %kiln compile --target cuda:sm_80 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_tf32x3 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=16 | %FileCheck %s --check-prefix=X3
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_tf32x3 'a_ptr=*fp32:D' 'b_ptr=*fp32:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=16 | %FileCheck %s --check-prefix=X3
# I8: .entry matmul_i8
# I8-NOT: .trans
# I8: cp.async.cg.shared.global {{.*}}, 16,
# I8: st.shared.u8
# I8: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# I8-NOT: .trans
# I8: mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32
# I8-NOT: .trans
# I8-NOT: .local
# I8WG: .target sm_90a
# I8WG: cp.async.cg.shared.global {{.*}}, 16,
# I8WG: st.shared.u8
# I8WG: fence.proxy.async.shared::cta
# I8WG: wgmma.fence.sync.aligned
# I8WG: wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {{.*}}, p; }
# I8WG: wgmma.commit_group.sync.aligned
# I8WG: wgmma.wait_group.sync.aligned 0
# I8WG-NOT: mma.sync
# I8KMAJ-NOT: st.shared.u8
# I8KMAJ: cp.async.cg.shared.global {{.*}}, 16,
# I8KMAJ: cp.async.cg.shared.global {{.*}}, 16,
# I8KMAJ: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8
# I8KMAJ-NOT: .local
# I8SYNC-NOT: wgmma
# I8SYNC: mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32
# I8SYNC-NOT: wgmma
# H: .entry matmul_f16_acc
# H-NOT: fma.rn
# H: mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16
# H-NOT: fma.rn
# HWG: wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16
# HWG-NOT: mma.sync
# HWG: wgmma.wait_group.sync.aligned 0
# HWG-NOT: .local
# X3: .entry matmul_tf32x3
# X3-NOT: wgmma
# X3: cvt.rna.tf32.f32
# X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# X3: setp.num.f32
# X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
# X3-NOT: wgmma
# X3-NOT: fma.rn.f32
