# fp8 matmul on the H200 beside Triton 3.6, in one call: bench/dot_kernels.py's
# matmul_fp8 (uint8 codes recast to float8e4nv / float8e5 pointers, B K-major as
# torch._scaled_mm and Triton's fp8 tutorial lay it out) at M=N=K, through
# `kiln run --backend cuda --repeat` (launches back to back, one synchronize:
# the mean includes execution) and through Triton's do_bench, with the result
# checked against torch on the decoded values.
#   python3 bench/fp8_matmul.py [KILN] [SIZE ...]
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import triton

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import dot_kernels  # noqa: E402

kiln = sys.argv[1] if len(sys.argv) > 1 else "kiln"
sizes = [int(s) for s in sys.argv[2:]] or [4096]
rng = np.random.default_rng(0)


def codes(shape, e5):
    # Two mantissa bits, exponents -3..3: exact in both formats.
    sign = rng.integers(0, 2, shape) << 7
    exp = rng.integers(-3, 4, shape) + (15 if e5 else 7)
    man = rng.integers(0, 4, shape)
    return (sign | (exp << (2 if e5 else 3)) | (man << (0 if e5 else 1))).astype(np.uint8)


def decode(c, e5):
    t = torch.float8_e5m2 if e5 else torch.float8_e4m3fn
    return torch.from_numpy(c).cuda().view(t).to(torch.float32)


cfg = dict(BM=128, BN=128, BK=64)
print("| fp8 matmul, 128x128x64 w4 s3 | kiln TFLOP/s | Triton TFLOP/s | kiln/Triton | kiln max rel err | Triton max rel err |")
print("|---|---:|---:|---:|---:|---:|")
with tempfile.TemporaryDirectory() as d:
    for n in sizes:
        for e5 in (False, True):
            a, bt = codes((n, n), e5), codes((n, n), e5)  # bt: N x K
            np.save(f"{d}/a.npy", a)
            np.save(f"{d}/bt.npy", bt)
            ref = decode(a, e5) @ decode(bt, e5).T
            args = [f"a_ptr=@{d}/a.npy", f"b_ptr=@{d}/bt.npy", f"c_ptr=zeros:{n}x{n}:f32", f"M={n}", f"N={n}",
                    f"K={n}", f"stride_am={n}", "stride_ak=1", "stride_bk=1", f"stride_bn={n}", f"stride_cm={n}",
                    "stride_cn=1", f"E5={int(e5)}"] + [f"{k}={v}" for k, v in cfg.items()]
            grid = f"{triton.cdiv(n, 128)},{triton.cdiv(n, 128)}"
            r = subprocess.run([kiln, "run", "--backend", "cuda", "--num-warps", "4", "--num-stages", "3",
                                "--grid", grid, "--repeat", "50", "--json", "--out", f"c_ptr={d}/c.npy",
                                os.path.join(here, "dot_kernels.py"), "matmul_fp8"] + args,
                               capture_output=True, text=True)
            if r.returncode:
                print(f"| {n} {'e5m2' if e5 else 'e4m3'} | kiln failed: {r.stderr.strip()[:300]} |")
                continue
            doc = json.loads(r.stdout)
            us = doc.get("burst_us") or doc.get("launch", {}).get("burst_us")
            kc = torch.from_numpy(np.load(f"{d}/c.npy")).cuda()
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(bt).cuda()
            tc = torch.empty((n, n), dtype=torch.float32, device="cuda")
            launch = lambda: dot_kernels.matmul_fp8[(triton.cdiv(n, 128), triton.cdiv(n, 128))](
                ta, tb, tc, n, n, n, n, 1, 1, n, n, 1, E5=e5, num_warps=4, num_stages=3, **cfg)
            launch()
            ms = triton.testing.do_bench(launch)
            flops = 2.0 * n ** 3
            scale = ref.abs().max().item()
            kerr = ((kc - ref).abs().max() / scale).item()
            terr = ((tc - ref).abs().max() / scale).item()
            kt = flops / (us * 1e-6) / 1e12 if us else float("nan")
            tt = flops / (ms * 1e-3) / 1e12
            print(f"| {n}³ {'e5m2' if e5 else 'e4m3'} | {kt:.1f} | {tt:.1f} | {kt / tt:.2f} | {kerr:.2e} | {terr:.2e} |")
