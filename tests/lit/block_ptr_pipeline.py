# Why: a block pointer carried through a loop (`tl.advance` each iteration,
# as triton-lang/kernels' flash attention does) changes only its offsets;
# its base, shape and strides are yielded unchanged, so the loop does not
# carry them: its body reads the values from before the loop. Then the
# stride of 1 (a constant) keeps the blocks contiguous, and the K and V
# loads become 16-byte cp.async copies of the wgmma pipeline; carried, the
# stride was an unknown loop value and every element a 2-byte load.
# RUN: %kiln compile --emit ir %s attn_block_ptrs 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp32:D' stride_m=i32:D N_CTX=i32:D BM=128 BN=64 D=64 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s attn_block_ptrs 'Q=*fp16:D' 'K=*fp16:D' 'V=*fp16:D' 'Out=*fp32:D' stride_m=i32:D N_CTX=i32:D BM=128 BN=64 D=64 | %FileCheck %s --check-prefix=PTX
# The loop carries acc and the two offsets of each block pointer (i32), no i64 or pointer.
# CHECK: = for
# CHECK-SAME: : <128x64xf32>, i32, i32, i32, i32 {
# CHECK: ^0(%{{[0-9]+}}: i32, %{{[0-9]+}}: <128x64xf32>, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32):
# PTX-NOT: ld.global.b16
# PTX: cp.async.cg.shared.global {{.*}}, 16,
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# PTX-NOT: ld.global.b16
import triton
import triton.language as tl


@triton.jit
def attn_block_ptrs(Q, K, V, Out, stride_m, N_CTX, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    start_m = tl.program_id(0)
    K_block_ptr = tl.make_block_ptr(base=K, shape=(D, N_CTX), strides=(1, stride_m), offsets=(0, 0),
                                    block_shape=(D, BN), order=(0, 1))
    V_block_ptr = tl.make_block_ptr(base=V, shape=(N_CTX, D), strides=(stride_m, 1), offsets=(0, 0),
                                    block_shape=(BN, D), order=(1, 0))
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * stride_m + offs_d[None, :])
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start_n in range(0, N_CTX, BN):
        k = tl.load(K_block_ptr)
        v = tl.load(V_block_ptr)
        p = tl.dot(q, k).to(tl.float16)
        acc += tl.dot(p, v)
        K_block_ptr = tl.advance(K_block_ptr, (0, BN))
        V_block_ptr = tl.advance(V_block_ptr, (BN, 0))
    tl.store(Out + offs_m[:, None] * D + offs_d[None, :], acc)
