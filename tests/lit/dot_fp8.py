# Why: fp8 dots (float8e4nv / float8e5 operands, f32 accumulators) go on
# tensor cores as Triton 3.6's NVIDIA backend puts them, on
# bench/dot_kernels.py's matmul_fp8 (uint8 tensors recast to fp8 pointers;
# its GPU cases are in bench/gpu_cases.py):
# - sm_89 and sm_90 without a warpgroup tile: mma.sync m16n8k32
#   .f32.e4m3.e4m3.f32 / .e5m2.e5m2 (inline PTX: LLVM 19 has no intrinsic;
#   PTX 8.4), both operands read K-major by ldmatrix as for int8; a K-major
#   operand comes by 16-byte cp.async (the recast pointer keeps its
#   alignment), a row-major B by byte stores that transpose it.
# - sm_90 with BM a multiple of 64: wgmma m64nNk32 .f32.e4m3.e4m3 with the
#   scale immediates and no transpose ones (8-bit operands are K-major).
# - sm_80 has no fp8 tensor cores: FMAs on the decoded values.
# RUN: %kiln compile --target cuda:sm_89 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_fp8 'a_ptr=*u8:D' 'b_ptr=*u8:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=64 E5=0 | %FileCheck %s --check-prefix=MMA
# RUN: %kiln compile --target cuda:sm_89 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_fp8 'a_ptr=*u8:D' 'b_ptr=*u8:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=1 stride_bn=i32:D stride_cm=i32:D stride_cn=1 BM=64 BN=64 BK=64 E5=1 | %FileCheck %s --check-prefix=MMA5
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_fp8 'a_ptr=*u8:D' 'b_ptr=*u8:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=1 stride_bn=i32:D stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=64 E5=0 | %FileCheck %s --check-prefix=WG
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_fp8 'a_ptr=*u8:D' 'b_ptr=*u8:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=64 BK=32 E5=1 | %FileCheck %s --check-prefix=WG5
# RUN: %kiln compile --target cuda:sm_80 --emit ptx $(dirname %s)/../../bench/dot_kernels.py matmul_fp8 'a_ptr=*u8:D' 'b_ptr=*u8:D' 'c_ptr=*fp32:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=32 BN=32 BK=32 E5=0 | %FileCheck %s --check-prefix=FMA
# MMA: .version 8.4
# MMA: .entry matmul_fp8
# MMA: cp.async.cg.shared.global {{.*}}, 16,
# MMA: st.shared.u8
# MMA: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# MMA-NOT: .trans
# MMA: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
# MMA-NOT: fma.rn.f32
# MMA-NOT: .local
# MMA5-NOT: st.shared.u8
# MMA5: cp.async.cg.shared.global {{.*}}, 16,
# MMA5: cp.async.cg.shared.global {{.*}}, 16,
# MMA5: mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32
# MMA5-NOT: .local
# WG: .target sm_90a
# WG-NOT: st.shared.u8
# WG: cp.async.cg.shared.global {{.*}}, 16,
# WG: wgmma.fence.sync.aligned
# WG: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1; }
# WG: wgmma.wait_group.sync.aligned
# WG-NOT: mma.sync
# WG-NOT: .local
# WG5: st.shared.u8
# WG5: wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2 {{.*}}, p, 1, 1; }
# WG5-NOT: mma.sync
# FMA: .entry matmul_fp8
# FMA-NOT: mma.sync
# FMA-NOT: wgmma
# FMA: fma.rn.f32
