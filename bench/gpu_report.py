#!/usr/bin/env python3
"""Runs kiln's GPU benchmark and Triton's on the same kernels in one go and
prints one table, each kiln figure beside its anchor.
usage: gpu_report.py KILN_BENCH_GPU SHARED_DIR"""
import json, os, subprocess, sys

bench, shared = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
k = json.loads(subprocess.run([bench, "--shared", shared], capture_output=True, text=True, check=False).stdout)
t = json.loads(subprocess.run([sys.executable, os.path.join(here, "triton_anchor.py"), shared],
                              capture_output=True, text=True, check=True).stdout)
if "error" in k:
    print("kiln_bench_gpu failed:", k["error"])
    sys.exit(1)
rows = [
    ("vector add 2^28 fp32 (GB/s)", k["vector_add_gbps"], t["vector_add_gbps"], "higher", 0.9),
    ("  torch.add (GB/s)", None, t["torch_add_gbps"], "", None),
    ("softmax 16384x4096 fp32 (GB/s)", k["softmax_gbps"], t["softmax_gbps"], "higher", 0.8),
    ("layernorm fwd 8192x4096 fp16 (GB/s)", k["layernorm_gbps"], t["layernorm_gbps"], "higher", 0.9),
    ("column sum 8192x8192 fp32 (GB/s)", k["column_sum_gbps"], t["column_sum_gbps"], "higher", 0.9),
    ("empty_kernel launch, host (us)", k["empty_launch_us"], t["empty_launch_us"], "lower", None),
    ("  raw cuLaunchKernel, same cubin (us)", k["raw_launch_us"], None, "", None),
    ("cold compile, first kernel (ms)", k["cold_compile_first_ms"], t["cold_compile_first_ms"], "lower", None),
    ("cold compile, add_kernel again (ms)", k["cold_compile_next_ms"], t["cold_compile_next_ms"], "lower", None),
    ("cold compile, softmax 4096 (ms)", k["softmax_compile_ms"], t["softmax_compile_ms"], "lower", None),
    ("  then softmax 2048 (ms)", k["softmax2048_compile_ms"], None, "", None),
]
print(f"{'figure':40} {'kiln':>10} {'triton ' + t['triton']:>14} {'kiln/anchor':>12}")
for name, kv, tv, better, aim in rows:
    ratio = f"{kv / tv:.2f}" if kv is not None and tv else ""
    print(f"{name:40} {'' if kv is None else f'{kv:10.2f}':>10} {'' if tv is None else f'{tv:14.2f}':>14} {ratio:>12}")
print(f"{'kiln launch / raw launch':40} {k['empty_launch_us'] / k['raw_launch_us']:10.2f}   (aim <= 1.15)")
print("column sum correct:", k["column_sum_correct"])
print("vector add correct:", k["vector_add_correct"], " softmax row 0 sums to", round(k["softmax_row0_sum"], 4))
print("add_kernel compile stages (ms):", {s: round(v, 2) for s, v in k["add_stages_ms"].items()})
print("softmax compile stages (ms):", {s: round(v, 2) for s, v in k["softmax_stages_ms"].items()})
