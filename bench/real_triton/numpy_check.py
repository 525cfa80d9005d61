#!/usr/bin/env python3
"""Real kernels of the corpus on kiln's CPU backend against NumPy references.

gpu_parity.py holds kiln to Triton on a GPU; this holds the same kind of
kernels (and more of FlagGems') to plain NumPy on any machine, with small
shapes: each case runs `kiln run --backend cpu` on the file exactly as found
and compares its outputs. It found lmdeploy's bitonic top-k sorting wrongly
(keep_dims passed by position, 5d0749b).

    bench/real_triton/numpy_check.py --root CORPUS [--kiln build/bin/kiln]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from bit_patterns import bf16_bits, bf16_values, e4m3_bits, e4m3_values

ap = argparse.ArgumentParser()
ap.add_argument("--root", required=True)
ap.add_argument("--kiln", default="build/bin/kiln")
opts = ap.parse_args()
C = opts.root.rstrip("/") + "/"
K = opts.kiln
D = tempfile.mkdtemp(prefix="kiln_numpy_check_")
rng = np.random.default_rng(0)
failures = 0


bf16, unbf16 = bf16_bits, bf16_values
T8 = e4m3_values()


def fp8_bits(shape):
    return e4m3_bits(rng, shape)


def run(file, kernel, grid, args, outs, warps=None):
    """kiln run of `kernel`; ndarray args go through .npy files (uint16: bf16,
    uint8: fp8e4nv bit patterns); returns the named outputs, or None."""
    global failures
    words = []
    for n, v in args.items():
        if isinstance(v, np.ndarray):
            p = f"{D}/{kernel}_{n}.npy"
            np.save(p, v)
            words.append(f"{n}=@{p}" + {np.dtype(np.uint16): ":bf16", np.dtype(np.uint8): ":fp8e4nv"}.get(v.dtype, ""))
        else:
            words.append(f"{n}={str(v).lower() if isinstance(v, bool) else v}")
    cmd = [K, "run", C + file, kernel, "--backend", "cpu", "--grid", ",".join(map(str, grid))] + words
    if warps:
        cmd += ["--num-warps", str(warps)]
    for o in outs:
        cmd += ["--out", f"{o}={D}/{kernel}_{o}_out.npy"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        failures += 1
        print(f"{kernel:40s} ERROR {r.stderr.strip()[-300:]}")
        return None
    return {o: np.load(f"{D}/{kernel}_{o}_out.npy") for o in outs}


def report(name, got, want, tol):
    global failures
    err = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
    failures += err > tol
    print(f"{name:40s} max rel err {err:.2e} {'ok' if err <= tol else 'WRONG'}")


def verdict(name, ok):
    global failures
    failures += not ok
    print(f"{name:40s} {'ok' if ok else 'WRONG'}")


# Liger group norm
B, G, H, CPG = 2, 4, 512, 8
x = rng.standard_normal((B, G, H)).astype(np.float32); w = rng.standard_normal(G * CPG).astype(np.float32); b = rng.standard_normal(G * CPG).astype(np.float32)
o = run('linkedin__Liger-Kernel/src/liger_kernel/ops/group_norm.py', '_group_norm_forward_kernel', (B, G),
        dict(Y_ptr=np.zeros_like(x), Y_row_stride=G * H, Y_col_stride=H, X_ptr=x, X_row_stride=G * H, X_col_stride=H,
             Mean_ptr=np.zeros((B, G), np.float32), Mean_row_stride=G, Mean_col_stride=1, RSTD_ptr=np.zeros((B, G), np.float32),
             RSTD_row_stride=G, RSTD_col_stride=1, W_ptr=w, B_ptr=b, hidden_size=H, channels_per_group=CPG, eps=1e-5, BLOCK_SIZE=512),
        ['Y_ptr', 'Mean_ptr', 'RSTD_ptr'])
if o:
    m = x.mean(-1); v = (x * x).mean(-1) - m * m; r = 1 / np.sqrt(v + 1e-5)
    ch = np.arange(H) // (H // CPG)
    y = (x - m[..., None]) * r[..., None] * w[np.arange(G)[:, None] * CPG + ch][None] + b[np.arange(G)[:, None] * CPG + ch][None]
    report('liger group_norm Y', o['Y_ptr'], y, 1e-4); report('liger group_norm mean', o['Mean_ptr'], m, 1e-5)

# Dao rotary (not interleaved)
Bt, S, NH, HD = 2, 16, 4, 64
xx = rng.standard_normal((Bt, S, NH, HD)).astype(np.float32); cs = rng.standard_normal((S, HD // 2)).astype(np.float32); sn = rng.standard_normal((S, HD // 2)).astype(np.float32)
o = run('Dao-AILab__flash-attention/flash_attn/ops/triton/rotary.py', 'rotary_kernel', (NH // 2, S // 8, Bt),
        dict(OUT=bf16(np.zeros_like(xx)), X=bf16(xx), COS=bf16(cs), SIN=bf16(sn), CU_SEQLENS='None', SEQLEN_OFFSETS=0, seqlen=S, nheads=NH, seqlen_ro=S,
             stride_out_batch=S * NH * HD, stride_out_seqlen=NH * HD, stride_out_nheads=HD, stride_out_headdim=1,
             stride_x_batch=S * NH * HD, stride_x_seqlen=NH * HD, stride_x_nheads=HD, stride_x_headdim=1, ROTARY_DIM=HD,
             IS_SEQLEN_OFFSETS_TENSOR=False, IS_VARLEN=False, INTERLEAVED=False, CONJUGATE=False, BLOCK_H=2, BLOCK_M=8), ['OUT'])
if o:
    xb, cb, sb = unbf16(bf16(xx)), unbf16(bf16(cs)), unbf16(bf16(sn))
    x1, x2 = xb[..., :HD // 2], xb[..., HD // 2:]
    c, s = cb[None, :, None, :], sb[None, :, None, :]
    want = np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], -1)
    report('dao rotary', unbf16(o['OUT']), want, 3e-2)

# fla chunk local cumsum
Bc, T, Hc, BT = 2, 128, 4, 64
sarr = rng.standard_normal((Bc, T, Hc)).astype(np.float32)
o = run('fla-org__flash-linear-attention/fla/ops/utils/cumsum.py', 'chunk_local_cumsum_scalar_kernel', (T // BT, Bc * Hc),
        dict(s=sarr, o=np.zeros_like(sarr), scale='None', cu_seqlens='None', chunk_indices='None', T=T, B=Bc, H=Hc, BT=BT, REVERSE=False, HAS_SCALE=False, IS_VARLEN=False), ['o'])
if o:
    want = np.cumsum(sarr.reshape(Bc, T // BT, BT, Hc), axis=2).reshape(Bc, T, Hc)
    report('fla chunk_local_cumsum', o['o'], want, 1e-5)

# fla l2norm
Tn, Dn = 64, 128
xl = rng.standard_normal((Tn, Dn)).astype(np.float32)
o = run('fla-org__flash-linear-attention/fla/modules/l2norm.py', 'l2norm_fwd_kernel', (Tn // 16,),
        dict(x=xl, y=np.zeros_like(xl), rstd=np.zeros(Tn, np.float32), eps=1e-6, T=Tn, D=Dn, BD=Dn, NB=64, BT=16), ['y', 'rstd'])
if o:
    r = 1 / np.sqrt((xl * xl).sum(1) + 1e-6)
    report('fla l2norm', o['y'], xl * r[:, None], 1e-5)

# lmdeploy silu and mul
M, N = 8, 1024
gu = rng.standard_normal((M, 2 * N)).astype(np.float32)
o = run('InternLM__lmdeploy/lmdeploy/pytorch/kernels/cuda/activation.py', '_silu_and_mul_kernel', (N // 512, 4),
        dict(gateup_ptr=bf16(gu), out_ptr=bf16(np.zeros((M, N), np.float32)), N=N, M=M, stride_gum=2 * N, stride_gun=1, stride_om=N, stride_on=1, BLOCK_SIZE_N=512), ['out_ptr'])
if o:
    g, u = unbf16(bf16(gu))[:, :N], unbf16(bf16(gu))[:, N:]
    report('lmdeploy silu_and_mul', unbf16(o['out_ptr']), g / (1 + np.exp(-g)) * u, 3e-2)

# mamba gated layer norm (not rms, z after norm)
M2, N2, NG = 8, 256, 2
xm = rng.standard_normal((M2, N2 * NG)).astype(np.float32); wm = rng.standard_normal(N2 * NG).astype(np.float32); bm = rng.standard_normal(N2 * NG).astype(np.float32); zm = rng.standard_normal((M2, N2 * NG)).astype(np.float32)
o = run('state-spaces__mamba/mamba_ssm/ops/triton/layernorm_gated.py', '_layer_norm_fwd_1pass_kernel', (M2, NG),
        dict(X=bf16(xm), Y=bf16(np.zeros_like(xm)), W=bf16(wm), B=bf16(bm), Z=bf16(zm), Mean=np.zeros((NG, M2), np.float32), Rstd=np.zeros((NG, M2), np.float32),
             stride_x_row=N2 * NG, stride_y_row=N2 * NG, stride_z_row=N2 * NG, M=M2, N=N2, eps=1e-6, BLOCK_N=256, HAS_BIAS=True, HAS_Z=True, NORM_BEFORE_GATE=False, IS_RMS_NORM=False), ['Y'])
if o:
    X, W, Bb, Z = unbf16(bf16(xm)), unbf16(bf16(wm)), unbf16(bf16(bm)), unbf16(bf16(zm))
    X = X * (Z / (1 + np.exp(-Z)))  # NORM_BEFORE_GATE False: gate first
    Xg = X.reshape(M2, NG, N2); mean = Xg.mean(-1, keepdims=True); var = ((Xg - mean) ** 2).mean(-1, keepdims=True)
    y = ((Xg - mean) / np.sqrt(var + 1e-6)).reshape(M2, NG * N2) * W + Bb
    report('mamba gated layernorm', unbf16(o['Y']), y, 3e-2)

DS = "deepseek-ai__DeepSeek-V3/inference/kernel.py"
# DeepSeek-V3 weight dequant: fp8 e4m3 in, one scale per 128x128 block.
bits = fp8_bits((256, 256))
sc = rng.standard_normal((2, 2)).astype(np.float32)
o = run(DS, "weight_dequant_kernel", (2, 2), dict(x_ptr=bits, s_ptr=sc, y_ptr=bf16(np.zeros((256, 256), np.float32)), M=256, N=256,
                                                  BLOCK_SIZE=128), ["y_ptr"])
if o:
    report("deepseek weight_dequant", unbf16(o["y_ptr"]), T8[bits] * np.kron(sc, np.ones((128, 128), np.float32)), 3e-2)


def nearest_e4m3(q):
    """q rounded to e4m3, ties to the even code (saturating at 448)."""
    mags = T8[:127]  # codes 0..126: magnitudes in increasing order
    a = np.minimum(np.abs(q), 448.0)
    i = np.clip(np.searchsorted(mags, a), 1, 126)
    lo, hi = mags[i - 1], mags[i]
    pick_hi = (a - lo > hi - a) | ((a - lo == hi - a) & (i % 2 == 0))
    return np.sign(q) * np.where(pick_hi, hi, lo)


# DeepSeek-V3 act_quant with ue8m0 (power-of-two) scales: fp8 out.
xa = (rng.standard_normal((4, 512)) * 3).astype(np.float32)
o = run(DS, "act_quant_kernel", (16,), dict(x_ptr=bf16(xa), y_ptr=np.zeros((4, 512), np.uint8), s_ptr=np.zeros(16, np.float32),
                                             BLOCK_SIZE=128, scale_fmt="'ue8m0'"), ["y_ptr", "s_ptr"])
if o:
    xb = unbf16(bf16(xa)).reshape(-1, 128)
    s = np.exp2(np.ceil(np.log2(np.maximum(np.abs(xb).max(1), 1e-4) / 448.0)))
    report("deepseek act_quant scale", o["s_ptr"], s, 0)
    report("deepseek act_quant y", T8[o["y_ptr"].reshape(-1, 128)], nearest_e4m3(xb / s[:, None]), 0)
# DeepSeek-V3 fp8 GEMM: tl.dot on fp8, a scale per row and 128-block of K.
M, N, Kd = 64, 256, 256
a, b = fp8_bits((M, Kd)), fp8_bits((N, Kd))
a_s, b_s = rng.random((M, Kd // 128)).astype(np.float32), rng.random((N // 128, Kd // 128)).astype(np.float32)
o = run(DS, "fp8_gemm_kernel", (M // 64, N // 128), dict(a_ptr=a, b_ptr=b, c_ptr=bf16(np.zeros((M, N), np.float32)), a_s_ptr=a_s, b_s_ptr=b_s,
                                                         M=M, N=N, K=Kd, BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128),
        ["c_ptr"], warps=8)
if o:
    want = np.zeros((M, N), np.float32)
    for kb in range(Kd // 128):
        k = slice(kb * 128, kb * 128 + 128)
        want += (T8[a][:, k] @ T8[b][:, k].T) * a_s[:, kb][:, None] * np.repeat(b_s[:, kb], 128)[None, :]
    err = float(np.max(np.abs(unbf16(o["c_ptr"]) - want)) / np.max(np.abs(want)))
    verdict(f"deepseek fp8_gemm (err / max|C| {err:.1e})", err < 1e-2)
# Dao cross entropy fwd
R, V = 8, 1000
lg = rng.standard_normal((R, V)).astype(np.float32); lab = rng.integers(0, V, R).astype(np.int64); lab[3] = -100
o = run('Dao-AILab__flash-attention/flash_attn/ops/triton/cross_entropy.py', 'cross_entropy_fwd_kernel', (R,),
        dict(loss_ptr=np.zeros(R, np.float32), lse_ptr=np.zeros(R, np.float32), z_loss_ptr=np.zeros(R, np.float32), logits_ptr=bf16(lg), labels_ptr=lab,
             smoothing=0.0, logit_scale=1.0, lse_square_scale=0.0, ignore_index=-100, total_classes=V, class_start_idx=0, n_cols=V, logits_row_stride=V,
             BLOCK_SIZE=1024, HAS_SMOOTHING=False, SPLIT=False, PRECOMPUTED_LSE=False), ['loss_ptr', 'lse_ptr'], warps=4)
if o:
    L = unbf16(bf16(lg)); lse = np.log(np.exp(L - L.max(1, keepdims=True)).sum(1)) + L.max(1)
    loss = np.where(lab == -100, 0.0, lse - L[np.arange(R), np.clip(lab, 0, V - 1)])
    report('dao cross_entropy lse', o['lse_ptr'], lse, 1e-4); report('dao cross_entropy loss', o['loss_ptr'], loss, 1e-4)

G = 'FlagOpen__FlagGems/src/flag_gems/ops/'
# argmax along dim 1 of (M, N, K)
M, N, Kk = 6, 700, 3
x = rng.standard_normal((M, N, Kk)).astype(np.float32); x[2, 5, 1] = x[2, 600, 1] = 9.0  # a tie: the first wins
o = run(G + 'argmax.py', 'argmax_kernel', ((M + 3) // 4, Kk), dict(inp=x, out_index=np.zeros((M, Kk), np.int64), M=M, N=N, K=Kk, BLOCK_M=4, BLOCK_N=512), ['out_index'])
if o: verdict('flaggems argmax (ties: first index)', np.array_equal(o['out_index'], x.argmax(1)))
# var_mean welford
x2 = rng.standard_normal((10, 3000)).astype(np.float32)
o = run(G + 'var_mean.py', 'var_mean_welford_kernel', ((10 + 3) // 4,), dict(X=x2, Var=np.zeros(10, np.float32), Mean=np.zeros(10, np.float32), M=10, N=3000, correction=1, BLOCK_M=4, BLOCK_N=1024), ['Var', 'Mean'])
if o: report('flaggems var_mean var', o['Var'], x2.var(1, ddof=1), 1e-4); report('flaggems var_mean mean', o['Mean'], x2.mean(1), 1e-5)
# log_softmax along dim 1 of (M, N, K)
x3 = rng.standard_normal((5, 300, 2)).astype(np.float32)
o = run(G + 'log_softmax.py', 'log_softmax_kernel', ((5 + 7) // 8, 2), dict(output_ptr=np.zeros_like(x3), input_ptr=x3, M=5, N=300, K=2), ['output_ptr'], warps=8)
if o:
    mx = x3.max(1, keepdims=True); want = x3 - mx - np.log(np.exp(x3 - mx).sum(1, keepdims=True))
    report('flaggems log_softmax', o['output_ptr'], want, 1e-5)
# sort rows of 1000 (bitonic argsort)
x4 = rng.standard_normal((4, 1000)).astype(np.float32)
o = run(G + 'sort.py', 'sort_kernel', (4,), dict(in_ptr=x4, out_ptr=np.zeros_like(x4), out_index_ptr=np.zeros((4, 1000), np.int64), N=1000, BLOCK_SIZE=1024, DESCENDING=False, IS_FLOAT=True), ['out_ptr', 'out_index_ptr'])
if o:
    ok = np.array_equal(o['out_ptr'], np.sort(x4, 1)) and np.array_equal(np.take_along_axis(x4, o['out_index_ptr'], 1), o['out_ptr'])
    verdict('flaggems sort', ok)
# mean dim
x5 = rng.standard_normal((20, 1000)).astype(np.float32)
o = run(G + 'mean.py', 'mean_dim_kernel', ((20 + 7) // 8,), dict(X=x5, Mean=np.zeros(20, np.float32), M=20, N=1000, BLOCK_M=8, BLOCK_N=256), ['Mean'])
if o: report('flaggems mean_dim', o['Mean'], x5.mean(1), 1e-5)
# cumsum part
x6 = rng.standard_normal(5000).astype(np.float32)
o = run(G + 'cumsum.py', 'scan_part_sum_kernel', (5,), dict(inp=x6, out=np.zeros_like(x6), partial_sum=np.zeros(5, np.float32), n_elements=5000, part_num=5, BLOCK_SIZE=1024), ['out', 'partial_sum'])
if o:
    want = np.concatenate([np.cumsum(x6[i * 1024:(i + 1) * 1024]) for i in range(5)])
    report('flaggems scan_part_sum out', o['out'], want, 1e-4)
    report('flaggems scan_part_sum partial', o['partial_sum'], np.array([x6[i * 1024:(i + 1) * 1024].sum() for i in range(5)]), 1e-4)
# topk stage1: per chunk top k
x7 = rng.standard_normal((2, 4096)).astype(np.float32)
o = run(G + 'topk.py', 'topk_stage1_kernel', (2, 4), dict(y_ptr=np.zeros((2, 4, 8), np.float32), index_ptr=np.zeros((2, 4, 8), np.int64), x_ptr=x7, k=8, N=4096, CHUNK_SIZE=1024, DESCENDING=True), ['y_ptr', 'index_ptr'])
if o:
    want = -np.sort(-x7.reshape(2, 4, 1024), -1)[..., :8]
    ok = np.array_equal(o['y_ptr'], want)
    verdict('flaggems topk_stage1', ok)

L = 'linkedin__Liger-Kernel/src/liger_kernel/ops/'
# Liger rope (in place on q, k)
bs, sl, nq, nk, hd = 2, 8, 4, 2, 64
q = rng.standard_normal((bs * sl, nq * hd)).astype(np.float32); k = rng.standard_normal((bs * sl, nk * hd)).astype(np.float32)
cs = rng.standard_normal((sl, hd)).astype(np.float32); sn = rng.standard_normal((sl, hd)).astype(np.float32)
o = run(L + 'rope.py', '_triton_rope', (bs * sl,), dict(q_ptr=bf16(q), q_row_stride=nq * hd, k_ptr=bf16(k), k_row_stride=nk * hd, cos=cs, cos_row_stride=hd, sin=sn, sin_row_stride=hd,
        sl=sl, bs=bs, cos_bs=1, n_qh=nq, n_kh=nk, hd=hd, pad_n_qh=nq, pad_n_kh=nk, pad_hd=hd, BLOCK_SIZE=hd, BACKWARD_PASS=False), ['q_ptr', 'k_ptr'])
def rope(x, nh):
    x = unbf16(bf16(x)).reshape(bs, sl, nh, hd); c = cs[None, :, None, :hd // 2]; s = sn[None, :, None, :hd // 2]
    x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).reshape(bs * sl, nh * hd)
if o: report('liger rope q', unbf16(o['q_ptr']), rope(q, nq), 3e-2); report('liger rope k', unbf16(o['k_ptr']), rope(k, nk), 3e-2)
# Liger JSD beta 0.5, no label
R, V = 4, 3000
X = np.log(rng.dirichlet(np.ones(V), R)).astype(np.float32); Y = np.log(rng.dirichlet(np.ones(V), R)).astype(np.float32)
o = run(L + 'jsd.py', '_jsd_kernel', (R,), dict(X_ptr=X, X_stride=V, Y_ptr=Y, Y_stride=V, loss_ptr=np.zeros((R, V), np.float32), loss_stride=V, dX_ptr=np.zeros((R, V), np.float32), dX_stride=V,
        label_ptr=np.zeros(1, np.float32), beta=0.5, n_non_ignore=R, ignore_index=-100, n_cols=V, BLOCK_SIZE=4096, HAS_LABEL=False), ['loss_ptr', 'dX_ptr'])
if o:
    P, Q = np.exp(Y), np.exp(X); Mx = 0.5 * (P + Q); logM = np.log(Mx)
    loss = 0.5 * (P * (Y - logM) + Q * (X - logM)) / R
    report('liger jsd loss', o['loss_ptr'], loss, 1e-5)
# Liger TVD
p = rng.dirichlet(np.ones(V), R).astype(np.float32); qq = rng.dirichlet(np.ones(V), R).astype(np.float32)
o = run(L + 'tvd.py', '_tv_distance_kernel', (R,), dict(p_ptr=p, p_stride=V, q_ptr=qq, q_stride=V, loss_ptr=np.zeros(R, np.float32), loss_stride=1, grads_ptr=np.zeros((R, V), np.float32), grads_stride=V,
        label_ptr=np.zeros(1, np.float32), ignore_index=-100, n_cols=V, scale=1.0 / R, BLOCK_SIZE=4096, HAS_LABEL=False, reduction=3), ['loss_ptr', 'grads_ptr'])
if o:
    report('liger tvd loss', o['loss_ptr'], 0.5 * np.abs(p - qq).sum(1) / R, 1e-5)
    report('liger tvd grads', o['grads_ptr'], np.where(p > qq, 0.5, -0.5) / R, 1e-6)
# Liger DyT
Mq, Nq = 4, 2048
x = rng.standard_normal((Mq, Nq)).astype(np.float32); a = np.array([0.7], np.float32); g = rng.standard_normal(Nq).astype(np.float32); b = rng.standard_normal(Nq).astype(np.float32)
o = run(L + 'dyt.py', '_dyt_fwd_kernel', (Nq // 1024, Mq), dict(X=bf16(x), Y=bf16(np.zeros_like(x)), Alpha=a, Gamma=bf16(g), Beta=bf16(b), HAVE_BETA=True, N=Nq, BLOCK_N=1024), ['Y'])
if o: report('liger dyt', unbf16(o['Y']), np.tanh(0.7 * unbf16(bf16(x))) * unbf16(bf16(g)) + unbf16(bf16(b)), 3e-2)
# Liger fused add rms norm
x = rng.standard_normal((4, 1024)).astype(np.float32); r = rng.standard_normal((4, 1024)).astype(np.float32); w = rng.standard_normal(1024).astype(np.float32)
o = run(L + 'fused_add_rms_norm.py', '_fused_add_rms_norm_forward_kernel', (4,), dict(Y_ptr=bf16(np.zeros_like(x)), Y_row_stride=1024, S_ptr=bf16(np.zeros_like(x)), S_row_stride=1024, X_ptr=bf16(x), X_row_stride=1024,
        R_ptr=bf16(r), R_row_stride=1024, W_ptr=bf16(w), W_row_stride=1, RSTD_ptr=np.zeros(4, np.float32), RSTD_row_stride=1, n_cols=1024, eps=1e-6, offset=0.0, casting_mode=0, BLOCK_SIZE=1024), ['Y_ptr', 'S_ptr'])
if o:
    S = unbf16(bf16(unbf16(bf16(x)) + unbf16(bf16(r))))
    Yw = S / np.sqrt((S * S).mean(1, keepdims=True) + 1e-6) * unbf16(bf16(w))
    report('liger fused_add_rms S', unbf16(o['S_ptr']), S, 3e-2); report('liger fused_add_rms Y', unbf16(o['Y_ptr']), Yw, 5e-2)
# tutorial 04 seeded dropout: deterministic per seed, p of zeros, survivors scaled
xd = rng.standard_normal(1 << 16).astype(np.float32)
o = run('triton-lang__triton/python/tutorials/04-low-memory-dropout.py', '_seeded_dropout', (64,), dict(x_ptr=xd, output_ptr=np.zeros_like(xd), n_elements=1 << 16, p=0.5, seed=123, BLOCK_SIZE=1024), ['output_ptr'])
if o:
    y = o['output_ptr']; kept = y != 0
    verdict(f'tutorial seeded dropout (kept {kept.mean():.3f})', abs(kept.mean() - 0.5) < 0.01 and np.allclose(y[kept], 2 * xd[kept]))

# lmdeploy's bitonic top-k, kernel 0: each 2048-score block of a row sorted
# descending in one warp (the block a hypercube of 2s; its flips pass
# keep_dims to tl.xor_sum by position).
T, Lr, KB = 8, 16384, 2048
sc = rng.standard_normal((T, Lr)).astype(np.float32)
sl = rng.integers(0, Lr + 1, T).astype(np.int32)
sl[:3] = (Lr, 1000, 3)
o = run("InternLM__lmdeploy/lmdeploy/pytorch/kernels/cuda/bitonic_topk.py", "_bitonic_topk_kernel0", (16,),
        dict(score_ptr=sc, seqlen_ptr=sl, out_ptr=np.zeros_like(sc), ids_ptr=np.zeros((T, Lr), np.int32), stride_m=Lr,
             num_tokens=T, num_blocks_per_row=Lr // KB, K=KB, fill=-1, descending=1, sorted=True), ["out_ptr", "ids_ptr"], warps=1)
if o:
    good = total = 0
    for t in range(T):
        for lo in range(0, min(sl[t], Lr), KB):
            n = min(KB, sl[t] - lo)
            got, ids = o["out_ptr"][t, lo:lo + n], o["ids_ptr"][t, lo:lo + n]
            total += 1
            good += np.array_equal(got, np.sort(sc[t, lo:lo + n])[::-1]) and np.array_equal(sc[t, ids], got)
    verdict(f"lmdeploy bitonic_topk0 ({good}/{total} blocks)", good == total)

print(f"{failures} failing" if failures else "all correct")
sys.exit(1 if failures else 0)
