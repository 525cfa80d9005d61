# Why: attention's loop on sm_90 (two wgmma dots a iteration) spends its
# time between the dots, so: the qk dot starts from zeros with scale-d 0 (no
# 32 registers zeroed first); p goes into the A fragments by
# cvt.rn.f16x2.f32 (one a word); and the pv dot is not waited for in its
# iteration: it runs on while the next iteration waits for its copies and
# issues qk, whose wait covers acc too (acc is first read after it), and
# after the loop one wait covers the last. Its K/V ring has a spare slot
# (4 of 8 KiB for 3 stages: offsets masked by 24576), since the next
# iteration refills the slot 2 ahead while pv may still read its own.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s
# With 4 warps its registers are not capped: 3 CTAs under 168 would leave
# the 128 accumulator and 64 A registers (q, p) too little room (184 bytes
# of spills, 25% slower on the H100); with 8 warps (dot_wgmma.py) 2 CTAs do.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 4 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=64 BLOCK_M=128 BLOCK_N=64 CAUSAL=0 | %FileCheck %s --check-prefix=W4
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %shared/kernels/attention.py attn_fwd 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp16:D' sm_scale=fp32 N_CTX=i32:D HEAD_DIM=128 BLOCK_M=128 BLOCK_N=64 CAUSAL=1 | %FileCheck %s --check-prefix=D128
# CHECK: mov.b32 [[ZERO:%r[0-9]+]], 0;
# CHECK: $L__BB0_2:
# CHECK: and.b32 {{.*}}, 24576;
# CHECK-NOT: mov.f32
# CHECK: setp.ne.b32 p, [[ZERO]], 0; wgmma.mma_async.sync.aligned.m64n64k16
# CHECK: wgmma.commit_group.sync.aligned
# CHECK: cp.async.commit_group
# CHECK: wgmma.wait_group.sync.aligned 0
# CHECK: ex2.approx
# CHECK: cvt.rn.f16x2.f32
# CHECK-NOT: cvt.rn.f16.f32
# CHECK: wgmma.mma_async.sync.aligned.m64n64k16
# CHECK: wgmma.commit_group.sync.aligned
# CHECK-NOT: wgmma.wait_group
# CHECK: bra {{.*}}$L__BB0_2;
# CHECK: wgmma.wait_group.sync.aligned 0
# W4: .reqntid 128, 1, 1
# W4-NOT: .maxnreg
# W4: wgmma.mma_async.sync.aligned.m64n64k16
# D128: wgmma.commit_group.sync.aligned
# D128: wgmma.wait_group.sync.aligned 0
# D128: wgmma.mma_async.sync.aligned.m64n128k16
# D128: wgmma.commit_group.sync.aligned
# D128-NOT: wgmma.wait_group
# D128: bra {{.*}}$L__BB0_2;
# D128: wgmma.wait_group.sync.aligned 0
