# fp8 dot accuracy on the device: runs bench/dot_kernels.py matmul_fp8 through
# `kiln run` (wgmma, and mma.sync with KILN_DISABLE_WGMMA=1) and through Triton on the
# same bytes, against exact sums, with random fp8 values and with the integers -4..4.
# usage (GPU machine, bundle unpacked): python3 bench/fp8_accuracy.py KILN [cuda|cpu]
import os, subprocess, sys, tempfile
import numpy as np
KILN = sys.argv[1]; backend = sys.argv[2] if len(sys.argv) > 2 else "cuda"
D = "bench/dot_kernels.py"
rng = np.random.default_rng(1)
tmp = tempfile.mkdtemp()

def codes(shape, e5):
    sign = rng.integers(0, 2, shape) << 7
    exp = rng.integers(-3, 4, shape) + (15 if e5 else 7)
    man = rng.integers(0, 4, shape)
    return (sign | (exp << (2 if e5 else 3)) | (man << (0 if e5 else 1))).astype(np.uint8)

def values(c, e5):
    c = c.astype(np.int64); mbits, bias = (2, 15) if e5 else (3, 7)
    exp, man = (c >> mbits) & ((1 << (7 - mbits)) - 1), c & ((1 << mbits) - 1)
    mag = np.where(exp == 0, man * 2.0 ** (1 - bias - mbits), (1 + man / 2.0 ** mbits) * 2.0 ** (exp - bias))
    return np.where(c & 0x80, -mag, mag)

cases = [(100, 130, 70, 32, 32, 32, False, False), (128, 128, 256, 64, 64, 64, True, False),
         (200, 96, 160, 128, 64, 32, False, True), (70, 50, 300, 32, 64, 128, True, True),
         (64, 64, 64, 32, 32, 32, True, False), (64, 64, 64, 32, 32, 32, False, False),
         (64, 64, 64, 64, 64, 64, True, False), (64, 64, 64, 64, 64, 64, False, False),
         (64, 64, 70, 32, 32, 32, True, False), (64, 64, 70, 64, 64, 32, True, False)]
envs = [("default", {}), ("nowgmma", {"KILN_DISABLE_WGMMA": "1"})]
try:
    import torch, triton, importlib.util
    spec = importlib.util.spec_from_file_location("dk", D); dk = importlib.util.module_from_spec(spec); spec.loader.exec_module(dk)
except Exception as e:
    print("no triton:", e); torch = None

def triton_run(a, bst, M, N, K, BM, BN, BK, e5, bk, bn):
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(bst).cuda()
    c = torch.zeros((M, N), dtype=torch.float32, device="cuda")
    dk.matmul_fp8[((M+BM-1)//BM, (N+BN-1)//BN)](ta, tb, c, M, N, K, K, 1, bk, bn, N, 1, BM=BM, BN=BN, BK=BK, E5=int(e5))
    return c.cpu().numpy()

def small_ints(shape, e5):
    # codes of the integers -4..4 (exact in both formats)
    v = rng.integers(-4, 5, shape)
    table = {0: 0}
    for code in range(256):
        x = values(np.array([code]), e5)[0]
        if x == int(x) and abs(x) <= 4 and int(x) not in table: table[int(x)] = code
    return np.vectorize(table.get)(v).astype(np.uint8)
for (M, N, K, BM, BN, BK, kmaj, e5), ints in [(c, i) for i in (False, True) for c in cases]:
    gen = small_ints if ints else codes
    a, b = gen((M, K), e5), gen((K, N), e5)
    want = values(a, e5) @ values(b, e5)
    bk, bn = (1, K) if kmaj else (N, 1)
    bst = b.T.copy() if kmaj else b
    np.save(f"{tmp}/a.npy", a); np.save(f"{tmp}/b.npy", bst)
    for name, env in envs:
        out = f"{tmp}/c.npy"
        cmd = [KILN, "run", D, "matmul_fp8", "--grid", f"{(M+BM-1)//BM},{(N+BN-1)//BN}", "--backend", backend,
               f"a_ptr=@{tmp}/a.npy", f"b_ptr=@{tmp}/b.npy", f"c_ptr=zeros:{M}x{N}:f32", f"M={M}", f"N={N}", f"K={K}",
               f"stride_am={K}", "stride_ak=1", f"stride_bk={bk}", f"stride_bn={bn}", f"stride_cm={N}", "stride_cn=1",
               f"BM={BM}", f"BN={BN}", f"BK={BK}", f"E5={int(e5)}", "--out", f"c_ptr={out}"]
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
        tag = ("ints " if ints else "") + f"M{M} N{N} K{K} BM{BM} BN{BN} BK{BK} kmaj={int(kmaj)} e5={int(e5)} {name}"
        if r.returncode:
            print(tag, "FAILED", r.stderr[:300]); continue
        got = np.load(out).reshape(M, N)
        d = np.abs(got - want)
        bad = np.argwhere(d > 1e-4)
        print(tag, "maxdiff", d.max(), "bad", len(bad), "of", M * N, "max|ref|", np.abs(want).max())
        if torch is not None and name == "default":
            t = triton_run(a, bst, M, N, K, BM, BN, BK, e5, bk, bn)
            print("   triton maxdiff vs exact", np.abs(t - want).max(), " kiln vs triton", np.abs(t - got).max())
        if len(bad):
            rows = sorted(set(bad[:, 0].tolist())); cols = sorted(set(bad[:, 1].tolist()))
            print("   rows", rows[:20], "...", len(rows), " cols", cols[:20], "...", len(cols))
            i, j = bad[0]
            # which single K term explains the first bad element?
            ab = values(a, e5)[i] * values(b, e5)[:, j]
            diff = got[i, j] - want[i, j]
            print("   first", (i, j), "got", got[i, j], "want", want[i, j], "diff", diff,
                  "terms matching -diff:", np.where(np.abs(ab + diff) < 1e-6)[0][:10].tolist(),
                  "matching +diff:", np.where(np.abs(ab - diff) < 1e-6)[0][:10].tolist())
