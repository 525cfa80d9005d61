#!/usr/bin/env python3
"""Triton 3.x on the same kernel files kiln runs (../shared/kernels), in the
same device call: the anchors of bench/gpu_report.py. Prints one JSON object.
usage: triton_anchor.py SHARED_DIR"""
import importlib.util, json, os, sys, tempfile, time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_cache_")  # cold compiles
t_import = time.perf_counter()
import torch
import triton

shared = sys.argv[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(shared, "kernels", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_s(fn, reps=20):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


out = {}
va, sm = load("vector_add"), load("softmax")
x = torch.randn(1 << 20, device="cuda")
torch.cuda.synchronize()
t = time.perf_counter()
va.add_kernel[(1024,)](x, x, torch.empty_like(x), x.numel(), BLOCK=1024)
torch.cuda.synchronize()
out["cold_compile_first_ms"] = (time.perf_counter() - t) * 1e3
a = torch.randn(4096, 4096, device="cuda")
t = time.perf_counter()
sm.softmax_kernel[(4096,)](torch.empty_like(a), a, 4096, 4096, 4096, BLOCK=4096, num_warps=8)
torch.cuda.synchronize()
out["softmax_compile_ms"] = (time.perf_counter() - t) * 1e3
va2 = load("vector_add")  # the same kernel from source again, as a new function object
t = time.perf_counter()
va2.add_kernel[(1024,)](x, x, torch.empty_like(x), x.numel(), BLOCK=1024)
torch.cuda.synchronize()
out["cold_compile_next_ms"] = (time.perf_counter() - t) * 1e3

n = 1 << 28
x, y, o = torch.rand(n, device="cuda"), torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
s = median_s(lambda: va.add_kernel[(n // 1024,)](x, y, o, n, BLOCK=1024))
out["vector_add_gbps"] = 12 * n / s / 1e9
s = median_s(lambda: torch.add(x, y, out=o))
out["torch_add_gbps"] = 12 * n / s / 1e9
del x, y, o

rows, cols = 16384, 4096
a, o = torch.randn(rows, cols, device="cuda"), torch.empty(rows, cols, device="cuda")
s = median_s(lambda: sm.softmax_kernel[(rows,)](o, a, cols, cols, cols, BLOCK=4096, num_warps=8))
out["softmax_gbps"] = 2 * rows * cols * 4 / s / 1e9
del a, o

ln, red = load("layernorm"), load("reductions")
rows, cols = 8192, 4096
x = torch.ones(rows, cols, device="cuda", dtype=torch.float16)
y, w, b = torch.empty_like(x), torch.ones(cols, device="cuda", dtype=torch.float16), torch.ones(cols, device="cuda", dtype=torch.float16)
mean, rstd = torch.empty(rows, device="cuda"), torch.empty(rows, device="cuda")
s = median_s(lambda: ln.layernorm_fwd[(rows,)](x, y, w, b, mean, rstd, cols, cols, 1e-5, BLOCK=4096, num_warps=8))
out["layernorm_gbps"] = 2 * rows * cols * 2 / s / 1e9
del x, y
m, n = 8192, 8192
x, o = torch.ones(m, n, device="cuda"), torch.empty(n, device="cuda")
s = median_s(lambda: red.column_sum[(n // 32,)](x, o, m, n, n, BM=64, BN=32))
out["column_sum_gbps"] = (m * n * 4 + n * 4) / s / 1e9
del x, o

e = torch.empty(1024, device="cuda")
va.empty_kernel[(1,)](e, 1024, BLOCK=1024)
torch.cuda.synchronize()
reps, ts = 20000, []
for _ in range(5):
    t = time.perf_counter()
    for _ in range(reps):
        va.empty_kernel[(1,)](e, 1024, BLOCK=1024)
    ts.append((time.perf_counter() - t) / reps * 1e6)
    torch.cuda.synchronize()
ts.sort()
out["empty_launch_us"] = ts[len(ts) // 2]
out["triton"] = triton.__version__
print(json.dumps(out))
