# Kernels for the language cases in bench/lang_cases.py: the parts of the
# Triton language beyond loads, stores and arithmetic (sorts, gathers, scans
# with a combine_fn, tuple reductions, Philox random numbers, fp8, exact
# division, libdevice math) and the idioms of real files (torch.finfo
# constants, constexpr functions, early returns), written as Triton users
# write them, so one file checks the CPU and the GPU against NumPy.
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

F32_MIN = tl.constexpr(torch.finfo(torch.float32).min)


@triton.jit
def sort_rows(x_ptr, out_ptr, flip_ptr, N: tl.constexpr, DESCENDING: tl.constexpr):
    row = tl.program_id(0)
    offs = row * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x, descending=DESCENDING))
    tl.store(flip_ptr + offs, tl.flip(x, 0))


@triton.jit
def gather_rows(x_ptr, idx_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    idx = tl.load(idx_ptr + rm * N + rn)
    tl.store(out_ptr + rm * N + rn, tl.gather(x, idx, axis=1))


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def scans(x_ptr, rev_ptr, prod_ptr, runmax_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(rev_ptr + offs, tl.cumsum(x, axis=0, reverse=True))
    tl.store(prod_ptr + offs, tl.cumprod(x.to(tl.float32) * 0 + 1.0 + (offs % 3 == 0).to(tl.float32), axis=0))
    tl.store(runmax_ptr + offs, tl.associative_scan(x, 0, _max_combine))


@triton.jit
def _argmin_combine(v0, i0, v1, i1):
    # Ties go to the lower index, as tl.argmin does.
    take0 = (v0 < v1) | ((v0 == v1) & (i0 < i1))
    return tl.where(take0, v0, v1), tl.where(take0, i0, i1)


@triton.jit
def tuple_reduce(x_ptr, val_ptr, idx_ptr, M, N: tl.constexpr, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=rm[:, None] < M, other=float("inf"))
    idx = tl.broadcast_to(rn[None, :], (BM, N))
    v, i = tl.reduce((x, idx), 1, _argmin_combine)
    tl.store(val_ptr + rm, v, mask=rm < M)
    tl.store(idx_ptr + rm, i, mask=rm < M)


@triton.jit
def philox_uniform(seed, out_ptr, bits_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rand(seed, offs), mask=offs < n)
    tl.store(bits_ptr + offs, tl.randint(seed, offs), mask=offs < n)


@triton.jit
def fp8_round_trip(x_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv).to(tl.float32), mask=offs < n)
    tl.store(e5_ptr + offs, x.to(tl.float8e5).to(tl.float32), mask=offs < n)


@triton.jit
def fp8_decode(code_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    # Every code of both formats to float (inf and NaN codes too).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.load(code_ptr + offs, mask=offs < n)
    tl.store(e4_ptr + offs, c.to(tl.float8e4nv, bitcast=True).to(tl.float32), mask=offs < n)
    tl.store(e5_ptr + offs, c.to(tl.float8e5, bitcast=True).to(tl.float32), mask=offs < n)


@triton.jit
def fp8_encode(x_ptr, e4_ptr, e5_ptr, n, BLOCK: tl.constexpr):
    # Float to fp8 codes: rounding to nearest even, saturation, NaN.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv).to(tl.uint8, bitcast=True), mask=offs < n)
    tl.store(e5_ptr + offs, x.to(tl.float8e5).to(tl.uint8, bitcast=True), mask=offs < n)


@triton.jit
def exact_div(x_ptr, y_ptr, out_ptr, sqrt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    y = tl.load(y_ptr + offs, mask=offs < n, other=1.0)
    tl.store(out_ptr + offs, tl.div_rn(x, y), mask=offs < n)
    tl.store(sqrt_ptr + offs, tl.sqrt_rn(tl.abs(x)), mask=offs < n)


@triton.jit
def libdevice_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.5)
    y = libdevice.tanh(x) + libdevice.log1p(tl.abs(x)) + libdevice.expm1(x * 0.5)
    y += libdevice.atan2(x, 1.5) + libdevice.pow(tl.abs(x) + 0.5, 1.25) + libdevice.erfinv(x * 0.9)
    tl.store(out_ptr + offs, y, mask=offs < n)


@triton.jit
def histogram_interleave(x_ptr, hist_ptr, pair_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(hist_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))
    tl.store(pair_ptr + tl.arange(0, 2 * N), tl.interleave(x, x * 10))


@tl.constexpr
def accum_type(dtype):
    if dtype.is_fp16() or dtype.is_bf16():
        return tl.float32
    return dtype


@triton.jit
def masked_row_max(x_ptr, out_ptr, n_cols, skip_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row == skip_row:
        if n_cols > 0:
            tl.store(out_ptr + row, F32_MIN)
            return
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=float("-inf"))
    acc: tl.constexpr = accum_type(x_ptr.dtype.element_ty)
    tl.store(out_ptr + row, tl.max(x.to(acc), axis=0))


@triton.jit
def asm_elementwise(x_ptr, h_ptr, a_ptr, tanh_ptr, h2_ptr, wide_ptr, top_ptr, n, BLOCK: tl.constexpr):
    # Inline PTX as real files use it: a fast tanh, packed half2 math, and
    # bytes unpacked four to a register with two results (cuda only).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32,
                                  is_pure=True, pack=1)
    tl.store(tanh_ptr + offs, t, mask=mask)
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    h2 = tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [h, h], dtype=tl.float16,
                                   is_pure=True, pack=2)
    tl.store(h2_ptr + offs, h2, mask=mask)
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    wide, top = tl.inline_asm_elementwise(
        """
        {
            .reg .b8 q<4>;
            mov.b32 {q0, q1, q2, q3}, $8;
            cvt.u32.u8 $0, q0;
            cvt.u32.u8 $1, q1;
            cvt.u32.u8 $2, q2;
            cvt.u32.u8 $3, q3;
            cvt.rn.f32.u32 $4, $0;
            cvt.rn.f32.u32 $5, $1;
            cvt.rn.f32.u32 $6, $2;
            cvt.rn.f32.u32 $7, $3;
            max.f32 $4, $4, $9;
            max.f32 $5, $5, $10;
            max.f32 $6, $6, $11;
            max.f32 $7, $7, $12;
        }
        """,
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r",
        args=[a, x * 300.0],
        dtype=(tl.int32, tl.float32),
        is_pure=True,
        pack=4,
    )
    tl.store(wide_ptr + offs, wide, mask=mask)
    tl.store(top_ptr + offs, top, mask=mask)


@triton.jit
def mx_dot(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    # A microscaled dot: fp4 (e2m1, two a byte along K) times fp8 (e4m3
    # bytes), each with e8m0 scales per 32 elements of K.
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rs = tl.arange(0, K // 32)
    a = tl.load(a_ptr + rm[:, None] * (K // 2) + tl.arange(0, K // 2)[None, :])
    a_scale = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + rs[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + rn[None, :])
    b_scale = tl.load(b_scale_ptr + rn[:, None] * (K // 32) + rs[None, :])
    c = tl.dot_scaled(a, a_scale, "e2m1", b, b_scale, "e4m3")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def desc_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # Host-made TensorDescriptors (triton.tools.tensor_descriptor): loads
    # past the tensor read zeros, stores past it are dropped.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def nan_minmax(x_ptr, y_ptr, o_ptr, N: tl.constexpr, ALL: tl.constexpr):
    # propagate_nan: NONE (default) takes the other operand where one is NaN,
    # ALL gives NaN.
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    if ALL:
        mx = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
        mn = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
        cl = tl.clamp(x, -1.0, y, propagate_nan=tl.PropagateNan.ALL)
    else:
        mx = tl.maximum(x, y)
        mn = tl.minimum(x, y, propagate_nan=tl.PropagateNan.NONE)
        cl = tl.clamp(x, -1.0, 1.0)
    tl.store(o_ptr + offs, mx)
    tl.store(o_ptr + N + offs, mn)
    tl.store(o_ptr + 2 * N + offs, cl)
