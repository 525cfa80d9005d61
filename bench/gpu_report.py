#!/usr/bin/env python3
"""Puts kiln's GPU figures beside Triton's on the same kernels: runs Triton
(bench/triton_anchor.py) and prints one table, each kiln figure beside its
anchor.
usage: gpu_report.py RESULTS.json SHARED_DIR
RESULTS.json: `kiln bench compile launch throughput --backend cuda --out RESULTS.json`
(or `kiln bench all ...`), made in the same device call."""
import json, os, subprocess, sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
results, shared = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
with open(results) as f:
    k = json.load(f)
if k.get("backend") != "cuda":
    sys.exit(f"gpu_report.py: {results} is not a `kiln bench --backend cuda` run")
missing = [s for s in ("compile", "launch", "throughput") if s not in k]
if k.get("errors") or missing:
    print("kiln bench failed:", k.get("errors") or f"no {', '.join(missing)} section in {results}")
    sys.exit(1)
t = json.loads(subprocess.run([sys.executable, os.path.join(here, "triton_anchor.py"), shared],
                              capture_output=True, text=True, check=True).stdout)
tp, launch = k["throughput"], k["launch"]
rows = [
    ("vector add 2^28 fp32 (GB/s)", tp["vector_add_gbps"], t["vector_add_gbps"]),
    ("  torch.add (GB/s)", None, t["torch_add_gbps"]),
    ("softmax 16384x4096 fp32 (GB/s)", tp["softmax_gbps"], t["softmax_gbps"]),
    ("layernorm fwd 8192x4096 fp16 (GB/s)", tp["layernorm_gbps"], t["layernorm_gbps"]),
    ("column sum 8192x8192 fp32 (GB/s)", tp["column_sum_gbps"], t["column_sum_gbps"]),
    ("empty_kernel launch, host (us)", launch["launch_us"], t["empty_launch_us"]),
    ("  raw cuLaunchKernel, same cubin (us)", launch["raw_launch_us"], None),
    # kiln: a fresh process, file read to binary loaded; Triton: the first
    # launch in a process that imported torch.
    ("cold compile, first kernel (ms)", k["compile"]["add_kernel"]["cold_ms"], t["cold_compile_first_ms"]),
    ("cold compile, add_kernel again (ms)", tp["add_kernel_compile_ms"], t["cold_compile_next_ms"]),
    ("cold compile, softmax 4096 (ms)", tp["softmax_4096_compile_ms"], t["softmax_compile_ms"]),
    ("  then softmax 2048 (ms)", tp["softmax_2048_compile_ms"], None),
]
print(f"{'figure':40} {'kiln':>10} {'triton ' + t['triton']:>14} {'kiln/anchor':>12}")
for name, kv, tv in rows:
    ratio = f"{kv / tv:.2f}" if kv is not None and tv else ""
    print(f"{name:40} {'' if kv is None else f'{kv:10.2f}':>10} {'' if tv is None else f'{tv:14.2f}':>14} {ratio:>12}")
print(f"{'kiln launch / raw launch':40} {launch['launch_us'] / launch['raw_launch_us']:10.2f}   (aim <= 1.15)")
print("kiln's results were checked by `kiln bench throughput` (a wrong one fails the section)")
for kernel, stages in tp["stages_ms"].items():
    print(f"{kernel} compile stages (ms):", {s: round(v, 2) for s, v in stages.items()})
