# Why: tensor descriptors (host TensorDescriptors and tl.make_tensor_descriptor)
# are lowered as strided, bounds-masked accesses, and on the GPU those must be
# as fast as the pointer loads of the same tile: 16-byte vectors and the
# cp.async ring that feeds wgmma. That needs three things this file checks:
# - the last stride, the constant 1 widened to i64, keeps the index's runs
#   (axis info looks through the cast), so in-kernel descriptors vectorize;
# - a host descriptor's shape dims and leading strides get the D attribute
#   (`tensordesc<fp16[128, 64]>:D`) as integers do, so that the bounds mask
#   is uniform over a vector; without it the loads stay scalar (b16);
# - an operand transposed between its load and the dot (tutorial 09's `b.T`,
#   attention's `k.T`) is pipelined too, staged as loaded and read K-major
#   (wgmma's transpose flag 0), and a scalar carried offset (attention's
#   `offsetk_y += BLOCK_N`) is carried ahead for the copies of later
#   iterations.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %s matmul_tma 'a_desc=tensordesc<fp16[128, 64]>:D' 'b_desc=tensordesc<fp16[256, 64]>:D' 'c_desc=tensordesc<fp16[128, 256]>:D' M=i32:D N=i32:D K=i32:D BM=128 BN=256 BK=64 | %FileCheck %s --check-prefix=HOST
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %s matmul_tma 'a_desc=tensordesc<fp16[128, 64]>' 'b_desc=tensordesc<fp16[256, 64]>' 'c_desc=tensordesc<fp16[128, 256]>' M=i32:D N=i32:D K=i32:D BM=128 BN=256 BK=64 | %FileCheck %s --check-prefix=RAGGED
# RUN: %kiln compile --target cuda:sm_90 --emit ptx --num-warps 8 %s matmul_device_desc 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32:D N=i32:D K=i32:D BM=128 BN=256 BK=64 | %FileCheck %s --check-prefix=DEVICE
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s attention_scores 'q_desc=tensordesc<fp16[128, 64]>:D' 'k_desc=tensordesc<fp16[64, 64]>:D' 'out_ptr=*fp32:D' N_CTX=i32:D BM=128 BN=64 D=64 | %FileCheck %s --check-prefix=ATTN
# RUN: %kiln compile --emit ir %s matmul_tma 'a_desc=tensordesc<fp16[128, 64]>:D_D' 'b_desc=tensordesc<fp16[256, 64]>' 'c_desc=tensordesc<fp16[128, 256]>:D' M=i32:D N=i32:D K=i32:D BM=128 BN=256 BK=64 | %FileCheck %s --check-prefix=IR
# HOST: .entry matmul_tma
# HOST-NOT: ld.global.b16
# HOST: cp.async.cg.shared.global {{.*}}, 16,
# HOST: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0; }
# HOST-NOT: ld.global.b16
# HOST: st.global.v4.b32
# RAGGED: ld.global.b16
# RAGGED-NOT: cp.async
# RAGGED: st.global.b16
# DEVICE: .entry matmul_device_desc
# DEVICE-NOT: ld.global.b16
# DEVICE: cp.async.cg.shared.global {{.*}}, 16,
# DEVICE: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0; }
# DEVICE: st.global.v4.b32
# ATTN: .entry attention_scores
# ATTN: cp.async.cg.shared.global {{.*}}, 16,
# ATTN: cp.async.commit_group
# ATTN: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# ATTN: cp.async.cg.shared.global {{.*}}, 16,
# ATTN: cp.async.commit_group
# IR: kernel @matmul_tma(%0: ptr<f16> {D} "a_desc.0", %1: i64 {D} "a_desc.1", %2: i64 "a_desc.2", %3: i64 {D} "a_desc.3", %{{[0-9]+}}: ptr<f16> {D} "b_desc.0", %{{[0-9]+}}: i64 "b_desc.1", %{{[0-9]+}}: i64 "b_desc.2", %{{[0-9]+}}: i64 "b_desc.3", %{{[0-9]+}}: ptr<f16> {D} "c_desc.0", %{{[0-9]+}}: i64 {D} "c_desc.1", %{{[0-9]+}}: i64 {D} "c_desc.2", %{{[0-9]+}}: i64 {D} "c_desc.3"
import triton
import triton.language as tl


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    off_m = (pid // num_pid_n) * BM
    off_n = (pid % num_pid_n) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(tl.cdiv(K, BK)):
        a = a_desc.load([off_m, k * BK])
        b = b_desc.load([off_n, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def matmul_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BN)
    off_m = (pid // num_pid_n) * BM
    off_n = (pid % num_pid_n) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = a_desc.load([off_m, k * BK])
        b = b_desc.load([off_n, k * BK])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def attention_scores(q_desc, k_desc, out_ptr, N_CTX, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    # The running maximum of q @ k.T over the keys, k read at a carried offset.
    start_m = tl.program_id(0)
    q = q_desc.load([start_m * BM, 0])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    offset_y = 0
    for start_n in tl.range(0, N_CTX, BN):
        k = k_desc.load([offset_y, 0]).T
        m_i = tl.maximum(m_i, tl.max(tl.dot(q, k), 1))
        offset_y += BN
    tl.store(out_ptr + start_m * BM + tl.arange(0, BM), m_i)
