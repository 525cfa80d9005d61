#!/usr/bin/env python3
"""Runs Triton 3.x on the same kernel files and the same data as kiln's
tensor-core workloads (`kiln bench dot`), checks both against torch, and
prints one table (TFLOP/s, and for each the max error).
matmul error: max |C - ref| / max |ref| with ref = fp32 torch.matmul of the
same fp16 inputs (TF32 off); attention: max |O - ref| with ref = fp32 SDPA.
usage: dot_report.py RESULTS.json SHARED_DIR
RESULTS.json: `kiln bench dot --backend cuda --data DIR --out RESULTS.json` (or
`kiln bench all ...` with --data), made in the same device call; --data DIR
holds the inputs and outputs this script reads."""
import importlib.util, json, os, sys, tempfile, time

if len(sys.argv) != 3:
    sys.exit(__doc__)
results, shared = sys.argv[1], sys.argv[2]
with open(results) as f:
    doc = json.load(f)
if "dot" in doc.get("errors", {}):
    print("kiln bench dot failed:", doc["errors"]["dot"])
    sys.exit(1)
k = doc.get("dot")
if k is None:
    sys.exit(f"dot_report.py: {results} has no dot section; run `kiln bench dot --backend cuda --data DIR`")
cases = list(k["matmul"].values()) + list(k["attention"].values())
if any("files" not in c for c in cases):
    sys.exit(f"dot_report.py: {results} was run without --data DIR, so there are no tensors to check")

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_cache_")
import torch
import triton

torch.backends.cuda.matmul.allow_tf32 = False


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(shared, "kernels", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def timed(fn, rounds=7, per_round=10):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(per_round):
            fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) / per_round)
    ts.sort()
    return ts[len(ts) // 2]


def f16(path, *shape):
    return torch.from_file(path, size=int(torch.tensor(shape).prod()), dtype=torch.float16).reshape(*shape).cuda()


va, mm, at = load("vector_add"), load("matmul"), load("attention")
x = torch.randn(1 << 20, device="cuda")
va.add_kernel[(1024,)](x, x, torch.empty_like(x), x.numel(), BLOCK=1024)
torch.cuda.synchronize()
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
c = torch.empty_like(a)
t = time.perf_counter()
mm.matmul_kernel[(32, 32)](a, a, c, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1, BM=128, BN=128, BK=32,
                           num_warps=4, num_stages=3)
torch.cuda.synchronize()
triton_compile_ms = (time.perf_counter() - t) * 1e3
del a, c

rows = []
for name, c in k["matmul"].items():
    c = dict(c["case"], files=c["files"], tflops=c["tflops"], name=name)
    M, N, K = c["M"], c["N"], c["K"]
    a, b, got = f16(c["files"] + "_a.bin", M, K), f16(c["files"] + "_b.bin", K, N), f16(c["files"] + "_c.bin", M, N)
    ref = a.float() @ b.float()
    scale = ref.abs().max().item()
    kerr = (got.float() - ref).abs().max().item() / scale
    o = torch.empty(M, N, device="cuda", dtype=torch.float16)
    grid = (triton.cdiv(M, c["BM"]), triton.cdiv(N, c["BN"]))
    run = lambda: mm.matmul_kernel[grid](a, b, o, M, N, K, K, 1, N, 1, N, 1, BM=c["BM"], BN=c["BN"], BK=c["BK"],
                                         num_warps=c["warps"], num_stages=c["stages"])
    ts = timed(run)
    terr = (o.float() - ref).abs().max().item() / scale
    tt = timed(lambda: torch.matmul(a, b))
    fl = 2 * M * N * K
    rows.append((f"matmul {c['name']} s{c['stages']}", c["tflops"], fl / ts / 1e12, fl / tt / 1e12, kerr, terr))
    del a, b, got, ref, o
    torch.cuda.empty_cache()

for name, c in k["attention"].items():
    c = dict(c["case"], files=c["files"], tflops=c["tflops"], name=name)
    Z, H, N, D = c["Z"], c["H"], c["N"], c["D"]
    q, kk, v, got = (f16(c["files"] + f"_{t}.bin", Z * H, N, D) for t in "qkvo")
    scale = 1.0 / D ** 0.5
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), kk.float(), v.float(), is_causal=c["causal"],
                                                           scale=scale)
    kerr = (got.float() - ref).abs().max().item()
    o = torch.empty_like(q)
    grid = (triton.cdiv(N, c["BM"]), Z * H)
    run = lambda: at.attn_fwd[grid](q, kk, v, o, scale, N, HEAD_DIM=D, BLOCK_M=c["BM"], BLOCK_N=c["BN"],
                                    CAUSAL=c["causal"], num_warps=c["warps"])
    ts = timed(run, 5, 5)
    terr = (o.float() - ref).abs().max().item()
    qs, ks, vs = (t.reshape(Z, H, N, D) for t in (q, kk, v))
    tt = timed(lambda: torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=c["causal"]), 5, 5)
    fl = 4 * Z * H * N * N * D * (0.5 if c["causal"] else 1.0)
    rows.append((f"attention {c['name']} BM{c['BM']} BN{c['BN']} w{c['warps']}", c["tflops"], fl / ts / 1e12,
                 fl / tt / 1e12, kerr, terr))
    del q, kk, v, got, ref, o
    torch.cuda.empty_cache()

print(f"{'TFLOP/s':44} {'kiln':>8} {'triton ' + triton.__version__:>13} {'torch':>8} {'kiln/tri':>9} "
      f"{'kiln err':>9} {'triton err':>10}")
for name, kv, tv, tt, ke, te in rows:
    print(f"{name:44} {kv:8.1f} {tv:13.1f} {tt:8.1f} {kv / tv:9.2f} {ke:9.2e} {te:10.2e}")
print("errors: matmul max|C-ref|/max|ref| (fp32 torch of the same fp16 inputs), attention max|O-ref| (fp32 SDPA)")
print(f"cold compile matmul.py 128x128x32 w4 s3, source to cubin, process warm (ms): kiln "
      f"{k['matmul_cold_compile_ms']:.1f}, triton {triton_compile_ms:.1f}")
print("kiln matmul compile stages (ms):", {s: round(v, 2) for s, v in k["matmul_compile_stages_ms"].items()},
      "registers", k["matmul_registers"], "spill bytes", k["matmul_spill_bytes"])
