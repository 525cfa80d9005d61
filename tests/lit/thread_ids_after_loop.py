# Why: index bits computed from the thread id before a long loop and used
# after it would hold registers through the loop (attention's epilogue
# spilled 112 bytes at d64 so); after a top-level loop the id is read again
# (a volatile mov that LLVM cannot merge with the entry's read) and the
# epilogue's index bits come from there. Also: exp2 on fp32 is Triton's
# ex2.approx.ftz.f32, and a conversion through shared memory addresses its
# slots as one per-thread base plus constants ([reg+imm], vector stores).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=128 BN=128 BK=32 | %FileCheck %s --check-prefix=MM
# RUN: %kiln compile --target cpu --emit llir %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s --check-prefix=CPU
# CHECK: mov.u32 {{%r[0-9]+}}, %tid.x;
# CHECK: $L__BB0_2:
# CHECK: ex2.approx.ftz.f32
# CHECK-NOT: ex2.approx.f32
# CHECK: bra {{.*}}$L__BB0_2;
# CHECK: wgmma.wait_group.sync.aligned 0
# CHECK: mov.u32 {{%r[0-9]+}}, %tid.x;
# CHECK: st.shared.v2.f32 [[[BASE:%rd[0-9]+]]],
# CHECK-NEXT: st.shared.v2.f32 [[[BASE]]+{{[0-9]+}}],
# MM: bra {{.*}}$L__BB0_2;
# MM: mov.u32 {{%r[0-9]+}}, %tid.x;
# MM: st.shared.v2.f32 [[[BASE:%rd[0-9]+]]],
# MM-COUNT-31: st.shared.v2.f32 [[[BASE]]+{{[0-9]+}}],
# CPU-NOT: tid.x
