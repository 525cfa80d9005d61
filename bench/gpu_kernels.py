# Kernels for the GPU layout cases in bench/gpu_cases.py: each needs a value
# in another thread's registers (a reduction on some axis, a scan, a
# broadcast of loaded data, a transpose, a dot) or libdevice math.
import triton
import triton.language as tl


@triton.jit
def erf_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.erf(x), mask=offs < n)


@triton.jit
def transpose(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    xt = tl.trans(x)
    tl.store(out_ptr + rn[:, None] * M + rm[None, :], xt, mask=(rn[:, None] < N) & (rm[None, :] < M))


@triton.jit
def argmax_1d(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    tl.store(out_ptr, tl.argmax(x, axis=0))


@triton.jit
def outer_add(x_ptr, y_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # broadcasts of loaded data along either axis
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm, mask=rm < M, other=0.0)
    y = tl.load(y_ptr + rn, mask=rn < N, other=0.0)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x[:, None] * 10.0 + y[None, :],
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def scans_2d(x_ptr, c0_ptr, c1_ptr, p1_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * N + rn[None, :]
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.store(c0_ptr + offs, tl.cumsum(x, axis=0), mask=m)
    tl.store(c1_ptr + offs, tl.cumsum(x, axis=1), mask=m)
    tl.store(p1_ptr + offs, tl.cumprod(x % 3 - 1, axis=1), mask=m)


@triton.jit
def reduce_3d(x_ptr, s1_ptr, m0_ptr, a2_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ra = tl.arange(0, A)
    rb = tl.arange(0, B)
    rc = tl.arange(0, C)
    x = tl.load(x_ptr + ra[:, None, None] * (B * C) + rb[None, :, None] * C + rc[None, None, :])
    tl.store(s1_ptr + ra[:, None] * C + rc[None, :], tl.sum(x, axis=1))
    tl.store(m0_ptr + rb[:, None] * C + rc[None, :], tl.min(x, axis=0))
    tl.store(a2_ptr + ra[:, None] * B + rb[None, :], tl.argmax(x, axis=2))


@triton.jit
def row_stats(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # a reduction broadcast back over its axis (x - max), then another one
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=m, other=-float("inf"))
    z = tl.exp(x - tl.max(x, axis=1)[:, None])
    z = tl.where(m, z, 0.0)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], z / tl.sum(z, axis=1)[:, None], mask=m)


@triton.jit
def hist_2d(x_ptr, hist_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=m, other=0)
    tl.atomic_add(hist_ptr + (v & 15), 1, mask=m)


@triton.jit
def int_reductions(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rn, tl.xor_sum(x, axis=0))
    tl.store(out_ptr + BN + rm, tl.max(x, axis=1))
    tl.store(out_ptr + BN + BM + rn, tl.argmin(x, axis=0))


@triton.jit
def reshape_kernel(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.arange(0, BM * BN)
    x = tl.load(x_ptr + r)
    y = tl.reshape(x, (BM, BN))
    s = tl.sum(y, axis=0)
    tl.store(out_ptr + tl.arange(0, BN), s)


@triton.jit
def split_add_halves(x_ptr, h_ptr, b_ptr, f_ptr, n, BLOCK: tl.constexpr):
    # A split-K epilogue: every program along axis 1 adds its part into the
    # fp16, bf16 and fp32 outputs (vector reductions where the elements line up).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.atomic_add(b_ptr + offs, x.to(tl.bfloat16), mask=m)
    tl.atomic_add(f_ptr + offs, x, mask=m)


@triton.jit
def pow2_scale(x_ptr, s_ptr, BLOCK: tl.constexpr):
    # A power-of-two scale per block (as fp8 quantizers' ue8m0 ones):
    # exp2(ceil(log2(amax))).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    amax = tl.max(tl.abs(tl.load(x_ptr + offs)))
    s = tl.math.exp2(tl.math.ceil(tl.math.log2(amax)))
    tl.store(s_ptr + tl.program_id(0), s)
