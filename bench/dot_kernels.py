# Kernels for the dot dtype cases (bench/gpu_cases.py, tests/lit/dot_dtypes.py,
# tests/dot_dtypes_test.cpp): matmul.py's loop with the operand and
# accumulator dtypes Triton 3.6 puts on tensor cores besides f16/bf16 -> f32:
# int8 -> int32, f16 -> f16 (out_dtype=tl.float16) and f32 with
# input_precision="tf32x3", and fp8 (e4m3 / e5m2) -> f32. Each accumulator
# goes through `acc=` with the out_dtype Triton requires for it.
import triton
import triton.language as tl


@triton.jit
def matmul_i8(a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_f16_acc(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tf32x3(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="tf32x3")
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_fp8(a_ptr, b_ptr, c_ptr, M, N, K,
               stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, E5: tl.constexpr):
    # The bytes come as uint8 (NumPy has no fp8); the pointers are recast as
    # fp8 ones, so the loads feed the dot directly as a torch.float8 tensor's
    # would.
    fp8 = tl.float8e5 if E5 else tl.float8e4nv
    a_ptr = a_ptr.to(tl.pointer_type(fp8))
    b_ptr = b_ptr.to(tl.pointer_type(fp8))
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def small_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # M or N below the tensor cores' 16 (down to 1, as Triton 3.6 allows).
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


@triton.jit
def matvec_bf16(a_ptr, x_ptr, y_ptr, M: tl.constexpr, K: tl.constexpr):
    # mamba3's decode step: a matrix-vector product written as a dot with N = 1.
    rm = tl.arange(0, M)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    x = tl.load(x_ptr + rk)
    y = tl.dot(a.to(tl.bfloat16), x.reshape([K, 1]).to(tl.bfloat16))
    tl.store(y_ptr + rm, y.reshape([M]).to(tl.float32))


@triton.jit
def batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                TWICE: tl.constexpr):
    # A 3-D (batched) dot, as Triton's test_dot3d writes it; TWICE adds a
    # second product into the first through acc=.
    rb = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + rb * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + rb * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot(a, b)
    if TWICE:
        c = tl.dot(a, b, c)
    tl.store(c_ptr + rb * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


@triton.jit
def batched_dot_mismatch(a_ptr, b_ptr, c_ptr):
    # Not valid Triton: the batch dims of a 3-D dot must agree (a compile error).
    a = tl.load(a_ptr + tl.arange(0, 2)[:, None, None] * 256 + tl.arange(0, 16)[None, :, None] * 16
                + tl.arange(0, 16)[None, None, :])
    b = tl.load(b_ptr + tl.arange(0, 4)[:, None, None] * 256 + tl.arange(0, 16)[None, :, None] * 16
                + tl.arange(0, 16)[None, None, :])
    tl.store(c_ptr + tl.arange(0, 16), tl.sum(tl.sum(tl.dot(a, b), 0), 0))


@triton.jit
def matmul_loaded_offsets(a_ptr, b_ptr, c_ptr, offs_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):
    # As tutorial 08's grouped GEMM: where the operands start and their
    # leading dims are read from memory, and tl.multiple_of on the carried
    # pointers says they stay 16-byte aligned.
    a_ptr += tl.load(offs_ptr)
    b_ptr += tl.load(offs_ptr + 1)
    lda = tl.load(offs_ptr + 2)
    ldb = tl.load(offs_ptr + 3)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * lda + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * ldb + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        tl.multiple_of(a_ptrs, [16, 16])
        tl.multiple_of(b_ptrs, [16, 16])
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * ldb
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
