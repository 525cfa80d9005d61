# Extra cases for shared/scripts/kernel-cases (group "gpu"): the shared
# kernels at several sizes including tails, and bench/gpu_kernels.py's
# 2-D/3-D layout cases (reductions on every axis, scans, broadcasts,
# transposes, dots, atomics, libdevice math).
#   kernel-cases KILN --backend cuda --extra bench/gpu_cases.py --only gpu
for n, block in [(1, 1024), (1000, 1024), (10007, 1024), (10007, 256), ((1 << 20) + 3, 1024), (5000, 128)]:
    x, y = f32(n), f32(n)
    cases.append(Case("gpu", K("vector_add"), "add_kernel", [(n + block - 1) // block],
                      dict(x_ptr=x, y_ptr=y, out_ptr=f"zeros:{n}:f32", n=n, BLOCK=block),
                      ["out_ptr"], lambda i: {"out_ptr": i["x_ptr"] + i["y_ptr"]}, exact=True))
for n, block, a in [(1, 256, 2.0), (10007, 256, 1.5), (65536, 1024, -0.25)]:
    x, y = f32(n), f32(n)
    cases.append(Case("gpu", K("vector_add"), "axpy_kernel", [(n + block - 1) // block],
                      dict(a=a, x_ptr=x, y_ptr=y.copy(), n=n, BLOCK=block),
                      ["y_ptr"], lambda i, a=a: {"y_ptr": np.float32(a) * i["x_ptr"] + i["y_ptr"]}))
cases.append(Case("gpu", K("vector_add"), "empty_kernel", [4], dict(x_ptr=f32(64), n=64, BLOCK=64),
                  ["x_ptr"], lambda i: {"x_ptr": i["x_ptr"]}, exact=True))


def gpu_softmax_ref(i):
    a = i["in_ptr"].astype(np.float64)
    e = np.exp(a - a.max(1, keepdims=True))
    return {"out_ptr": e / e.sum(1, keepdims=True)}


for rows, cols, block in [(37, 781, 1024), (5, 1, 128), (64, 4096, 4096), (3, 1000, 2048), (128, 256, 256)]:
    cases.append(Case("gpu", K("softmax"), "softmax_kernel", [rows],
                      dict(out_ptr=f"zeros:{rows}x{cols}:f32", in_ptr=f32(rows, cols), in_stride=cols,
                           out_stride=cols, n_cols=cols, BLOCK=block),
                      ["out_ptr"], gpu_softmax_ref, tol=1e-4))


# ---- 2-D and beyond: layouts, conversions, collectives (issue 10) ----
import os as _os
G = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "gpu_kernels.py")
for M, N, BM, BN in [(50, 60, 16, 64), (100, 120, 32, 128), (7, 300, 4, 512)]:
    R2 = f32(M, N)
    cases.append(Case("gpu", K("reductions"), "reduce_rows", [(M + BM - 1) // BM],
                      dict(x_ptr=R2, sum_ptr=f"zeros:{M}:f32", max_ptr=f"zeros:{M}:f32", argmin_ptr=f"zeros:{M}:i32",
                           M=M, N=N, stride=N, BM=BM, BN=BN), ["sum_ptr", "max_ptr", "argmin_ptr"],
                      lambda i: {"sum_ptr": i["x_ptr"].sum(1), "max_ptr": i["x_ptr"].max(1),
                                 "argmin_ptr": i["x_ptr"].argmin(1).astype(np.int32)}))
for M, N, BM, BN in [(50, 60, 16, 32), (300, 200, 64, 32), (1000, 70, 128, 128)]:
    R2 = f32(M, N)
    cases.append(Case("gpu", K("reductions"), "column_sum", [(N + BN - 1) // BN],
                      dict(x_ptr=R2, out_ptr=f"zeros:{N}:f32", M=M, N=N, stride=N, BM=BM, BN=BN),
                      ["out_ptr"], lambda i: {"out_ptr": i["x_ptr"].sum(0)}, tol=1e-3))
for n, block in [(1000, 1024), (200, 256), (3000, 4096), (31, 32)]:
    cases.append(Case("gpu", K("reductions"), "prefix_sum", [1],
                      dict(x_ptr=rng.integers(-5, 5, n).astype(np.int32), out_ptr=f"zeros:{n}:i32", n=n, BLOCK=block),
                      ["out_ptr"], lambda i: {"out_ptr": np.cumsum(i["x_ptr"]).astype(np.int32)}, exact=True))
for M, N, Kd, BM, BN, BK, dt in [(100, 130, 70, 32, 32, 32, "f16"), (130, 70, 50, 64, 64, 16, "f16"),
                                 (64, 64, 64, 16, 64, 32, "f32"), (33, 17, 9, 16, 16, 16, "f32")]:
    npdt = np.float16 if dt == "f16" else np.float32
    A2, B2 = f32(M, Kd).astype(npdt), f32(Kd, N).astype(npdt)
    cases.append(Case("gpu", K("matmul"), "matmul_kernel", [(M + BM - 1) // BM, (N + BN - 1) // BN],
                      dict(a_ptr=A2, b_ptr=B2, c_ptr=f"zeros:{M}x{N}:{dt}", M=M, N=N, K=Kd, stride_am=Kd, stride_ak=1,
                           stride_bk=N, stride_bn=1, stride_cm=N, stride_cn=1, BM=BM, BN=BN, BK=BK),
                      ["c_ptr"], lambda i: {"c_ptr": i["a_ptr"].astype(np.float32) @ i["b_ptr"].astype(np.float32)},
                      tol=2e-2))  # fp32 operands: tl.dot's default input_precision is tf32 (10-bit mantissa)
# BM 64 with 8 warps: on sm_90 two warpgroups, each its own 64 columns of
# N (Triton's warpsPerCTA [4, 2]); B N-major (stride_bn 1) and K-major.
for M, N, Kd, bkm in [(130, 250, 200, False), (64, 128, 128, True), (100, 256, 64, False)]:
    A2, B2 = f32(M, Kd).astype(np.float16), f32(Kd, N).astype(np.float16)
    Bm = B2.T.copy() if bkm else B2
    cases.append(Case("gpu", K("matmul"), "matmul_kernel", [(M + 63) // 64, (N + 127) // 128],
                      dict(a_ptr=A2, b_ptr=Bm, c_ptr=f"zeros:{M}x{N}:f32", M=M, N=N, K=Kd, stride_am=Kd, stride_ak=1,
                           stride_bk=1 if bkm else N, stride_bn=Kd if bkm else 1, stride_cm=N, stride_cn=1,
                           BM=64, BN=128, BK=32, num_warps=8),
                      ["c_ptr"], lambda i, bkm=bkm: {"c_ptr": i["a_ptr"].astype(np.float32) @
                                                     (i["b_ptr"].T if bkm else i["b_ptr"]).astype(np.float32)},
                      tol=2e-2))
# Per-block power-of-two scales, exp2(ceil(log2(amax))), for amax 2^k and
# 2^k (1 +- 2^-20), k from -12 to 12: 2^k, 2^(k+1) and 2^k. (Whether kiln's
# ue8m0 scales, whose amax / 448 lands within an ulp of 2^k, are Triton's is
# gpu_parity.py's act_quant case: that depends on div.full and libdevice's
# log2f rounding exactly as Triton's do.)
PS_K = np.array([-12 + b % 25 for b in range(75)])
PS_MUL = np.array([1.0, 1 + 2.0 ** -20, 1 - 2.0 ** -20])[np.arange(75) // 25]
PS_AMAX = (2.0 ** PS_K * PS_MUL).astype(np.float32)
PS = ((rng.random((75, 128)) * 2 - 1) * 0.99 * PS_AMAX[:, None]).astype(np.float32)
PS[np.arange(75), np.arange(75) % 128] = PS_AMAX
cases.append(Case("gpu", G, "pow2_scale", [75], dict(x_ptr=PS.reshape(-1), s_ptr="zeros:75:f32", BLOCK=128), ["s_ptr"],
                  lambda i: {"s_ptr": (2.0 ** (PS_K + (PS_MUL > 1))).astype(np.float32)}, exact=True))
EX = f32(3000)
cases.append(Case("gpu", G, "erf_kernel", [3], dict(x_ptr=EX, out_ptr="zeros:3000:f32", n=3000, BLOCK=1024), ["out_ptr"],
                  lambda i: {"out_ptr": np.vectorize(math.erf)(i["x_ptr"].astype(np.float64))}, tol=1e-5))
for M, N, BM, BN in [(100, 70, 32, 32), (64, 256, 64, 16), (5, 300, 8, 128)]:
    cases.append(Case("gpu", G, "transpose", [(M + BM - 1) // BM, (N + BN - 1) // BN],
                      dict(x_ptr=f32(M, N), out_ptr=f"zeros:{N}x{M}:f32", M=M, N=N, BM=BM, BN=BN),
                      ["out_ptr"], lambda i: {"out_ptr": i["x_ptr"].T.copy()}, exact=True))
for n, block in [(1000, 1024), (77, 128), (5000, 8192)]:
    cases.append(Case("gpu", G, "argmax_1d", [1], dict(x_ptr=f32(n), out_ptr="zeros:1:i32", n=n, BLOCK=block),
                      ["out_ptr"], lambda i: {"out_ptr": np.array([i["x_ptr"].argmax()], np.int32)}, exact=True))
cases.append(Case("gpu", G, "outer_add", [1], dict(x_ptr=f32(50), y_ptr=f32(70), out_ptr="zeros:50x70:f32", M=50, N=70, BM=64, BN=128),
                  ["out_ptr"], lambda i: {"out_ptr": i["x_ptr"][:, None] * np.float32(10) + i["y_ptr"][None, :]}))
SX = rng.integers(-4, 5, (30, 50)).astype(np.int32)


def scans_ref(i):
    x = i["x_ptr"].astype(np.int64)
    return {"c0_ptr": np.cumsum(x, 0).astype(np.int32), "c1_ptr": np.cumsum(x, 1).astype(np.int32),
            "p1_ptr": np.cumprod(np.fmod(x, 3) - 1, 1).astype(np.int32)}


cases.append(Case("gpu", G, "scans_2d", [1], dict(x_ptr=SX, c0_ptr="zeros:30x50:i32", c1_ptr="zeros:30x50:i32",
                                                   p1_ptr="zeros:30x50:i32", M=30, N=50, BM=32, BN=64),
                  ["c0_ptr", "c1_ptr", "p1_ptr"], scans_ref, exact=True))
X3 = f32(4, 8, 16)
cases.append(Case("gpu", G, "reduce_3d", [1], dict(x_ptr=X3, s1_ptr="zeros:4x16:f32", m0_ptr="zeros:8x16:f32", a2_ptr="zeros:4x8:i32",
                                                    A=4, B=8, C=16), ["s1_ptr", "m0_ptr", "a2_ptr"],
                  lambda i: {"s1_ptr": i["x_ptr"].sum(1), "m0_ptr": i["x_ptr"].min(0), "a2_ptr": i["x_ptr"].argmax(2).astype(np.int32)}))
cases.append(Case("gpu", G, "row_stats", [4], dict(x_ptr=f32(50, 60), out_ptr="zeros:50x60:f32", M=50, N=60, BM=16, BN=64),
                  ["out_ptr"], lambda i: {"out_ptr": gpu_softmax_ref({"in_ptr": i["x_ptr"]})["out_ptr"]}))
HX = rng.integers(0, 1000, (20, 30)).astype(np.int32)
cases.append(Case("gpu", G, "hist_2d", [1], dict(x_ptr=HX, hist_ptr="zeros:16:i32", M=20, N=30, BM=32, BN=32), ["hist_ptr"],
                  lambda i: {"hist_ptr": np.bincount(i["x_ptr"].ravel() & 15, minlength=16).astype(np.int32)}, exact=True))
IX = rng.integers(-100, 100, (16, 32)).astype(np.int32)
cases.append(Case("gpu", G, "int_reductions", [1], dict(x_ptr=IX, out_ptr="zeros:80:i32", BM=16, BN=32), ["out_ptr"],
                  lambda i: {"out_ptr": np.concatenate([np.bitwise_xor.reduce(i["x_ptr"], 0), i["x_ptr"].max(1),
                                                        i["x_ptr"].argmin(0)]).astype(np.int32)}, exact=True))
RX = f32(256)
cases.append(Case("gpu", G, "reshape_kernel", [1], dict(x_ptr=RX, out_ptr="zeros:32:f32", BM=8, BN=32), ["out_ptr"],
                  lambda i: {"out_ptr": i["x_ptr"].reshape(8, 32).sum(0)}, tol=1e-4))

# ---- dot dtypes on tensor cores (issue 11): int8 -> int32 (exact), f16
# accumulators (out_dtype=tl.float16, rounded to f16 each k step), tf32x3 ----
D = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "dot_kernels.py")


def dot_case(kernel, M, N, Kd, BM, BN, BK, a, b, b_k_major, out, ref, extra={}, **kw):
    # b_k_major: B stored N x K (K contiguous, as the pipeline's cp.async wants it for 8-bit operands)
    bk, bn = (1, Kd) if b_k_major else (N, 1)
    cases.append(Case("gpu", D, kernel, [(M + BM - 1) // BM, (N + BN - 1) // BN],
                      dict(a_ptr=a, b_ptr=b.T.copy() if b_k_major else b, c_ptr=f"zeros:{M}x{N}:{out}", M=M, N=N, K=Kd,
                           stride_am=Kd, stride_ak=1, stride_bk=bk, stride_bn=bn, stride_cm=N, stride_cn=1,
                           BM=BM, BN=BN, BK=BK, **extra),
                      ["c_ptr"], lambda i: {"c_ptr": ref(i["a_ptr"], i["b_ptr"].T if b_k_major else i["b_ptr"])}, **kw))


def i8(*s):
    return rng.integers(-128, 128, s).astype(np.int8)


# BM 64/128 with 4 warps: wgmma on sm_90; BM 32: mma.sync m16n8k32.
for M, N, Kd, BM, BN, BK, kmaj in [(100, 130, 70, 32, 32, 32, False), (128, 128, 256, 64, 64, 64, True),
                                   (200, 96, 160, 128, 64, 32, False), (64, 64, 64, 64, 64, 64, True),
                                   (70, 50, 300, 32, 64, 128, True)]:
    dot_case("matmul_i8", M, N, Kd, BM, BN, BK, i8(M, Kd), i8(Kd, N), kmaj, "i32",
             lambda a, b: (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32), exact=True)
for M, N, Kd, BM, BN, BK, kmaj in [(100, 130, 70, 32, 32, 32, False), (128, 128, 128, 64, 64, 32, False),
                                   (256, 64, 96, 128, 64, 32, True), (33, 17, 9, 16, 16, 16, False)]:
    dot_case("matmul_f16_acc", M, N, Kd, BM, BN, BK, (f32(M, Kd) * 0.5).astype(np.float16),
             (f32(Kd, N) * 0.5).astype(np.float16), kmaj, "f16",
             lambda a, b: a.astype(np.float32) @ b.astype(np.float32), tol=2e-2)
for M, N, Kd, BM, BN, BK, kmaj in [(100, 130, 70, 32, 32, 16, False), (64, 64, 64, 64, 64, 32, False),
                                   (33, 17, 9, 16, 16, 16, True), (128, 96, 200, 64, 32, 32, False)]:
    dot_case("matmul_tf32x3", M, N, Kd, BM, BN, BK, f32(M, Kd), f32(Kd, N), kmaj, "f32",
             lambda a, b: a.astype(np.float64) @ b.astype(np.float64), tol=1e-5)


import sys as _sys
_sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "real_triton"))
from bit_patterns import fp8_values  # noqa: E402


# fp8 operands as uint8 codes (NumPy has no fp8) of the integers -4..4, which
# e4m3 and e5m2 both hold exactly. Small integers because Hopper's wgmma
# accumulates fp8 products in less than f32's precision: on the H100 with
# random two-mantissa-bit values of magnitudes 1/8..14 (sums up to ~1600)
# kiln's and Triton 3.6's results were bit-identical and both off the exact
# sums by up to 1.13, where mma.sync was exact; with these integers (sums
# under 2^13) both instructions are exact (.device probe, 2026-12-06).
def fp8_codes(shape, e5):
    code = {}
    for c in range(256):
        v = fp8_values(np.array([c]), e5)[0]
        if np.isfinite(v) and v == int(v) and abs(v) <= 4 and int(v) not in code:
            code[int(v)] = c
    return np.vectorize(code.get)(rng.integers(-4, 5, shape)).astype(np.uint8)


# sm_90 with BM 64/128 and 4 warps: wgmma k32 (both operands K-major, so a
# row-major B is transposed by byte stores, a K-major one comes by cp.async);
# BM 32 and sm_89: mma.sync m16n8k32; sm_80: FMAs.
for M, N, Kd, BM, BN, BK, kmaj, e5 in [(100, 130, 70, 32, 32, 32, False, False), (128, 128, 256, 64, 64, 64, True, False),
                                       (200, 96, 160, 128, 64, 32, False, True), (70, 50, 300, 32, 64, 128, True, True)]:
    dot_case("matmul_fp8", M, N, Kd, BM, BN, BK, fp8_codes((M, Kd), e5), fp8_codes((Kd, N), e5), kmaj, "f32",
             lambda a, b, e5=e5: fp8_values(a, e5) @ fp8_values(b, e5), extra=dict(E5=int(e5)), tol=1e-5)

# BM 64, 8 warps: wgmma warpgroups that split N (fp8 and int8, K-major B).
for M, N, Kd, kmaj in [(128, 256, 256, True), (64, 128, 128, True), (100, 200, 160, False)]:
    dot_case("matmul_fp8", M, N, Kd, 64, 128, 64, fp8_codes((M, Kd), False), fp8_codes((Kd, N), False), kmaj, "f32",
             lambda a, b: fp8_values(a, False) @ fp8_values(b, False), extra=dict(E5=0, num_warps=8), tol=1e-5)
    dot_case("matmul_i8", M, N, Kd, 64, 128, 64, i8(M, Kd), i8(Kd, N), kmaj, "i32",
             lambda a, b: (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32), extra=dict(num_warps=8),
             exact=True)

# ---- dots with M or N under 16 (Triton 3.6: down to 1; K >= 8 for fp32) ----
for M, N, Kd, dt in [(1, 16, 16, np.float16), (16, 1, 16, np.float16), (8, 32, 16, np.float16), (2, 2, 16, np.float16),
                     (1, 32, 8, np.float32), (64, 4, 32, np.float32)]:
    cases.append(Case("gpu", D, "small_dot", [1],
                      dict(a_ptr=f32(M, Kd).astype(dt), b_ptr=f32(Kd, N).astype(dt), c_ptr=f"zeros:{M}x{N}:f32",
                           M=M, N=N, K=Kd),
                      ["c_ptr"], lambda i: {"c_ptr": i["a_ptr"].astype(np.float64) @ i["b_ptr"].astype(np.float64)},
                      tol=2e-2 if dt == np.float32 else 1e-3))


# ---- 3-D (batched) dots: fp16, fp32 (tf32 on Triton's GPU path), int8 ----
for Bt, M, N, Kd, dt, twice in [(2, 32, 32, 16, np.float16, False), (4, 16, 64, 32, np.float32, True),
                               (2, 32, 16, 32, np.int8, False), (8, 16, 16, 16, np.float16, True)]:
    if dt == np.int8:
        ain, bin_ = i8(Bt, M, Kd), i8(Bt, Kd, N)
        out = f"zeros:{Bt}x{M}x{N}:i32"
    else:
        ain, bin_ = f32(Bt, M, Kd).astype(dt), f32(Bt, Kd, N).astype(dt)
        out = f"zeros:{Bt}x{M}x{N}:f32"
    cases.append(Case("gpu", D, "batched_dot", [1],
                      dict(a_ptr=ain, b_ptr=bin_, c_ptr=out, B=Bt, M=M, N=N, K=Kd, TWICE=twice),
                      ["c_ptr"], lambda i, t=twice: {"c_ptr": (2 if t else 1) * np.matmul(
                          i["a_ptr"].astype(np.float64), i["b_ptr"].astype(np.float64))},
                      exact=dt == np.int8, tol=2e-2 if dt == np.float32 else 1e-3))


def bf16_round(x):
    b = x.astype(np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).view(np.float32)


for M, Kd in [(64, 64), (16, 128)]:
    cases.append(Case("gpu", D, "matvec_bf16", [1], dict(a_ptr=f32(M, Kd), x_ptr=f32(Kd), y_ptr=f"zeros:{M}:f32", M=M, K=Kd),
                      ["y_ptr"], lambda i: {"y_ptr": bf16_round(i["a_ptr"]).astype(np.float64) @ bf16_round(i["x_ptr"])},
                      tol=1e-3))


def split_add_ref(i):
    # Three programs add the same value: (a + a) + a, rounded as each add is.
    h = i["x_ptr"].astype(np.float16)
    b = bf16_round(i["x_ptr"])
    f = i["x_ptr"].astype(np.float32)
    return {"h_ptr": (h + h) + h, "b_ptr": bf16_bits(bf16_round(bf16_round(b + b) + b)), "f_ptr": (f + f) + f}


for n, block in [(1000, 256), (4096, 1024), (4099, 1024), (7, 128)]:
    cases.append(Case("gpu", G, "split_add_halves", [(n + block - 1) // block, 3],
                      dict(x_ptr=f32(n), h_ptr=f"zeros:{n}:f16", b_ptr=f"zeros:{n}:bf16", f_ptr=f"zeros:{n}:f32",
                           n=n, BLOCK=block), ["h_ptr", "b_ptr", "f_ptr"], split_add_ref, exact=True))

# Operands whose start and leading dims are loaded (tutorial 08), aligned by
# tl.multiple_of hints on the loop-carried pointers: pipelined like any matmul.
for M, N, Kd in [(128, 128, 256), (256, 128, 64)]:
    LA, LB = f32(M, Kd).astype(np.float16), f32(Kd, N).astype(np.float16)
    cases.append(Case("gpu", D, "matmul_loaded_offsets", [M // 128, N // 128],
                      dict(a_ptr=LA, b_ptr=LB, c_ptr=f"zeros:{M}x{N}:f32",
                           offs_ptr=np.array([0, 0, Kd, N], np.int32), M=M, N=N, K=Kd, BM=128, BN=128, BK=32),
                      ["c_ptr"], lambda i: {"c_ptr": i["a_ptr"].astype(np.float64) @ i["b_ptr"].astype(np.float64)},
                      tol=1e-3))
