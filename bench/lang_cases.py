# Extra cases for shared/scripts/kernel-cases (group "lang"): the kernels of
# bench/lang_kernels.py against NumPy, on either backend:
#   kernel-cases KILN [--backend cuda] --extra bench/lang_cases.py --only lang
# Random numbers are checked against a NumPy Philox4x32-10 written from
# Triton's definition (same constants and rounds), so both backends must be
# bit-exact with Triton.
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.abspath(__file__))
L = _os.path.join(_here, "lang_kernels.py")
_sys.path.insert(0, _os.path.join(_here, "real_triton"))
from bit_patterns import fp8_values  # noqa: E402

for n, desc in [(64, False), (128, True)]:
    x = f32(5, n)
    cases.append(Case("lang", L, "sort_rows", [5],
                      dict(x_ptr=x, out_ptr=f"zeros:5x{n}:f32", flip_ptr=f"zeros:5x{n}:f32", N=n, DESCENDING=desc),
                      ["out_ptr", "flip_ptr"],
                      lambda i, d=desc: {"out_ptr": np.sort(i["x_ptr"], 1)[:, ::-1] if d else np.sort(i["x_ptr"], 1),
                                         "flip_ptr": i["x_ptr"][:, ::-1]}, exact=True))

gx, gidx = f32(8, 16), rng.integers(0, 16, (8, 16)).astype(np.int32)
cases.append(Case("lang", L, "gather_rows", [1], dict(x_ptr=gx, idx_ptr=gidx, out_ptr="zeros:8x16:f32", M=8, N=16),
                  ["out_ptr"], lambda i: {"out_ptr": np.take_along_axis(i["x_ptr"], i["idx_ptr"].astype(np.int64), 1)},
                  exact=True))


def scans_ref(i):
    x = i["x_ptr"]
    v = 1.0 + (np.arange(x.size) % 3 == 0)
    return {"rev_ptr": np.cumsum(x[::-1])[::-1].astype(np.int32),
            "prod_ptr": np.cumprod(v).astype(np.float32),
            "runmax_ptr": np.maximum.accumulate(x)}


sx = rng.integers(-50, 50, 64).astype(np.int32)
cases.append(Case("lang", L, "scans", [1],
                  dict(x_ptr=sx, rev_ptr="zeros:64:i32", prod_ptr="zeros:64:f32", runmax_ptr="zeros:64:i32", N=64),
                  ["rev_ptr", "prod_ptr", "runmax_ptr"], scans_ref, exact=True))

tx = rng.integers(0, 5, (50, 32)).astype(np.float32)  # ties: the lower index wins
cases.append(Case("lang", L, "tuple_reduce", [4],
                  dict(x_ptr=tx, val_ptr="zeros:50:f32", idx_ptr="zeros:50:i32", M=50, N=32, BM=16),
                  ["val_ptr", "idx_ptr"],
                  lambda i: {"val_ptr": i["x_ptr"].min(1), "idx_ptr": i["x_ptr"].argmin(1).astype(np.int32)},
                  exact=True))


def philox_ref(seed, offsets, rounds=10):
    m32 = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & m32
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.full_like(c0, np.uint64(seed) & m32)
    k1 = np.full_like(c0, (np.uint64(seed) >> np.uint64(32)) & m32)
    A, B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        p0, p2 = A * c0, B * c2  # < 2^64: exact in uint64
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0) & m32, p2 & m32, \
                         ((p0 >> np.uint64(32)) ^ c3 ^ k1) & m32, p0 & m32
        k0 = (k0 + np.uint64(0x9E3779B9)) & m32
        k1 = (k1 + np.uint64(0xBB67AE85)) & m32
    return c0.astype(np.uint32)


def philox_case_ref(seed, n):
    bits = philox_ref(seed, np.arange(n))
    x = bits.view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x).astype(np.float32)
    return {"out_ptr": x * np.float32(4.6566127342e-10), "bits_ptr": bits.view(np.int32)}


for seed in [1234, 2**40 + 7]:
    cases.append(Case("lang", L, "philox_uniform", [4],
                      dict(seed=seed, out_ptr="zeros:1000:f32", bits_ptr="zeros:1000:i32", n=1000, BLOCK=256),
                      ["out_ptr", "bits_ptr"], lambda i, s=seed: philox_case_ref(s, 1000), exact=True))

# Values both fp8 formats hold exactly (two mantissa bits at most).
_fp8 = np.array([m * 2.0 ** e for m in (1.0, 1.25, 1.5, 1.75) for e in range(-6, 8)], np.float32)
_fp8 = np.concatenate([_fp8, -_fp8, [0.0]]).astype(np.float32)
cases.append(Case("lang", L, "fp8_round_trip", [1],
                  dict(x_ptr=_fp8, e4_ptr=f"zeros:{_fp8.size}:f32", e5_ptr=f"zeros:{_fp8.size}:f32", n=_fp8.size,
                       BLOCK=128),
                  ["e4_ptr", "e5_ptr"], lambda i: {"e4_ptr": i["x_ptr"], "e5_ptr": i["x_ptr"]}, exact=True))


def _fp8_encode(x, e5):
    """Nearest code, ties to the even code, saturating at the largest finite
    value (infinities too); NaN is 0x7F."""
    mags = fp8_values(np.arange(128), e5).astype(np.float64)
    finite = np.flatnonzero(np.isfinite(mags))
    mags = mags[finite]
    a = np.abs(x.astype(np.float64))
    out = np.empty(x.shape, np.uint8)
    for i, v in enumerate(a):
        if np.isnan(v):
            out[i] = 0x7F
            continue
        d = np.abs(mags - min(v, mags[-1]))
        best = np.flatnonzero(d == d.min())
        code = finite[best[0]] if len(best) == 1 else finite[[b for b in best if finite[b] % 2 == 0][0]]
        out[i] = code | (0x80 if np.signbit(x[i]) else 0)
    return out


_codes = np.arange(256, dtype=np.uint8)
cases.append(Case("lang", L, "fp8_decode", [2],
                  dict(code_ptr=_codes, e4_ptr="zeros:256:f32", e5_ptr="zeros:256:f32", n=256, BLOCK=128),
                  ["e4_ptr", "e5_ptr"], lambda i: {"e4_ptr": fp8_values(i["code_ptr"], False),
                                                   "e5_ptr": fp8_values(i["code_ptr"], True)}, tol=0.0))
# Every finite value of both formats, the midpoints between neighbours (ties
# to even) and a step either side of them, tiny and huge values, inf, NaN, -0.
_v = np.unique(np.concatenate([fp8_values(_codes, False), fp8_values(_codes, True)]).astype(np.float64))
_v = _v[np.isfinite(_v) & (_v >= 0)]
_mid = (_v[1:] + _v[:-1]) / 2
_x = np.concatenate([_v, _mid, np.nextafter(_mid.astype(np.float32), np.float32(0)),
                     np.nextafter(_mid.astype(np.float32), np.float32(np.inf)), [1e-12, 1e-3, 500.0, 1e6, 1e30]])
_x = np.concatenate([_x, -_x, [np.inf, -np.inf, np.nan, -0.0]]).astype(np.float32)
cases.append(Case("lang", L, "fp8_encode", [(_x.size + 255) // 256],
                  dict(x_ptr=_x, e4_ptr=f"zeros:{_x.size}:u8", e5_ptr=f"zeros:{_x.size}:u8", n=_x.size, BLOCK=256),
                  ["e4_ptr", "e5_ptr"], lambda i: {"e4_ptr": _fp8_encode(i["x_ptr"], False),
                                                   "e5_ptr": _fp8_encode(i["x_ptr"], True)}, exact=True))

dx, dy = f32(3000), (f32(3000) + np.float32(2.0))
cases.append(Case("lang", L, "exact_div", [3],
                  dict(x_ptr=dx, y_ptr=dy, out_ptr="zeros:3000:f32", sqrt_ptr="zeros:3000:f32", n=3000, BLOCK=1024),
                  ["out_ptr", "sqrt_ptr"],
                  lambda i: {"out_ptr": i["x_ptr"] / i["y_ptr"], "sqrt_ptr": np.sqrt(np.abs(i["x_ptr"]))}, exact=True))


def libdevice_ref(i):
    x = i["x_ptr"].astype(np.float64)
    erfinv = np.vectorize(_erfinv)
    y = np.tanh(x) + np.log1p(np.abs(x)) + np.expm1(x * 0.5)
    y += np.arctan2(x, 1.5) + np.power(np.abs(x) + 0.5, 1.25) + erfinv(x * 0.9)
    return {"out_ptr": y}


def _erfinv(y):
    # Newton on erf, from a good start: enough for float32 references.
    if y <= -1 or y >= 1:
        return math.copysign(math.inf, y)
    x = math.copysign(math.sqrt(-math.log((1 - abs(y)) / 2)), y) * 0.8
    for _ in range(60):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


lx = np.clip(f32(2000), -0.99, 0.99).astype(np.float32)
cases.append(Case("lang", L, "libdevice_math", [2], dict(x_ptr=lx, out_ptr="zeros:2000:f32", n=2000, BLOCK=1024),
                  ["out_ptr"], libdevice_ref, tol=2e-5))

hx = rng.integers(0, 16, 128).astype(np.int32)
cases.append(Case("lang", L, "histogram_interleave", [1],
                  dict(x_ptr=hx, hist_ptr="zeros:16:i32", pair_ptr="zeros:256:i32", N=128, BINS=16),
                  ["hist_ptr", "pair_ptr"],
                  lambda i: {"hist_ptr": np.bincount(i["x_ptr"], minlength=16).astype(np.int32),
                             "pair_ptr": np.stack([i["x_ptr"], i["x_ptr"] * 10], 1).reshape(-1)}, exact=True))

mx = (f32(6, 100) * 8).astype(np.float16)


def row_max_ref(i):
    r = i["x_ptr"].astype(np.float32).max(1)
    r[2] = np.finfo(np.float32).min
    return {"out_ptr": r}


cases.append(Case("lang", L, "masked_row_max", [6],
                  dict(x_ptr=mx, out_ptr="zeros:6:f32", n_cols=100, skip_row=2, BLOCK=128),
                  ["out_ptr"], row_max_ref, exact=True))

if backend == "cuda":  # inline PTX: the CPU refuses it with a clear error (tests/lit/inline_asm.py)
    ax, ah = f32(1000), (f32(1000) * 4).astype(np.float16)
    aa = rng.integers(0, 256, 1000).astype(np.uint8)
    cases.append(Case("lang", L, "asm_elementwise", [4],
                      dict(x_ptr=ax, h_ptr=ah, a_ptr=aa, tanh_ptr="zeros:1000:f32", h2_ptr="zeros:1000:f16",
                           wide_ptr="zeros:1000:i32", top_ptr="zeros:1000:f32", n=1000, BLOCK=256),
                      ["tanh_ptr", "h2_ptr", "wide_ptr", "top_ptr"],
                      lambda i: {"tanh_ptr": np.tanh(i["x_ptr"]), "h2_ptr": i["h_ptr"] + i["h_ptr"],
                                 "wide_ptr": i["a_ptr"].astype(np.int32),
                                 "top_ptr": np.maximum(i["a_ptr"].astype(np.float32),
                                                       (i["x_ptr"] * np.float32(300.0)).astype(np.float32))},
                      tol=2e-3))


def e2m1_values(codes):
    sign = np.where(codes & 8, -1.0, 1.0)
    exp, man = (codes >> 1) & 3, codes & 1
    mag = np.where(exp == 0, man * 0.5, (1 + man * 0.5) * 2.0 ** (exp.astype(np.float64) - 1))
    return sign * mag


def e4m3_values(b):
    sign = np.where(b & 0x80, -1.0, 1.0)
    exp, man = ((b >> 3) & 15).astype(np.float64), (b & 7).astype(np.float64)
    return sign * np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * 2.0 ** (exp - 7))


def mx_dot_ref(i):
    packed = i["a_ptr"]
    a = np.stack([e2m1_values(packed & 15), e2m1_values(packed >> 4)], -1).reshape(packed.shape[0], -1)
    a = a * np.repeat(2.0 ** (i["a_scale_ptr"].astype(np.float64) - 127), 32, axis=1)
    b = e4m3_values(i["b_ptr"]) * np.repeat(2.0 ** (i["b_scale_ptr"].astype(np.float64) - 127), 32, axis=1).T
    return {"c_ptr": (a @ b).astype(np.float32)}


mxb = rng.integers(0, 256, (64, 16)).astype(np.uint8)
mxb[(mxb & 0x7F) == 0x7F] = 0x3C  # no NaN codes
cases.append(Case("lang", L, "mx_dot", [1],
                  dict(a_ptr=rng.integers(0, 256, (16, 32)).astype(np.uint8),
                       a_scale_ptr=rng.integers(124, 131, (16, 2)).astype(np.uint8), b_ptr=mxb,
                       b_scale_ptr=rng.integers(124, 131, (16, 2)).astype(np.uint8), c_ptr="zeros:16x16:f32",
                       M=16, N=16, K=64),
                  ["c_ptr"], mx_dot_ref, tol=1e-5))

# Host tensor descriptors on a ragged matmul (no dim a multiple of its block).
da = rng.standard_normal((100, 72)).astype(np.float16)
db = rng.standard_normal((72, 40)).astype(np.float16)
cases.append(Case("lang", L, "desc_matmul", [2, 2],
                  dict(a_desc=f"tensordesc({npy('desc_a', da)}, [64, 32])",
                       b_desc=f"tensordesc({npy('desc_b', db)}, [32, 32])",
                       c_desc="tensordesc(zeros:100x40:f32, [64, 32])", K=72, BM=64, BN=32, BK=32),
                  ["c_desc"], lambda i: {"c_desc": da.astype(np.float32) @ db.astype(np.float32)}, tol=2e-3))

# tl.maximum / minimum / clamp with and without propagate_nan (NaN in either operand).
nx, ny = f32(64), f32(64) + 2.0
nx[::5], ny[::7] = np.nan, np.nan
for all_ in [False, True]:
    def nan_ref(i, a=all_):
        x, y = i["x_ptr"], i["y_ptr"]
        if a:
            return {"o_ptr": np.concatenate([np.maximum(x, y), np.minimum(x, y), np.minimum(np.maximum(x, -1.0), y)])}
        return {"o_ptr": np.concatenate([np.fmax(x, y), np.fmin(x, y), np.fmin(np.fmax(x, -1.0), 1.0)])}
    cases.append(Case("lang", L, "nan_minmax", [1], dict(x_ptr=nx, y_ptr=ny, o_ptr="zeros:192:f32", N=64, ALL=all_),
                      ["o_ptr"], nan_ref, tol=0))
