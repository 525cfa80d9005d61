# On the GPU machine (issue 15): the first launch of an 8-config autotuned
# matmul with Triton's autotuner and with kiln, on the same file, configs and
# inputs, in one call; then a second kiln process, which must take the
# choice from the tuning cache without timing anything.
#   python3 bench/autotune/autotune_report.py KILN [M=N=K]
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

kiln = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
here = os.path.dirname(os.path.abspath(__file__))
file = os.path.join(here, "matmul_autotuned.py")
work = tempfile.mkdtemp(prefix="kiln_autotune_")
os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "triton_cache")  # cold, as kiln's
sys.path.insert(0, here)
import matmul_autotuned as mm  # noqa: E402

torch.manual_seed(0)
a = torch.randn(size, size, device="cuda", dtype=torch.float16)
b = torch.randn(size, size, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
t0 = time.perf_counter()
c = mm.matmul(a, b)
torch.cuda.synchronize()
triton_first_s = time.perf_counter() - t0
triton_best = str(mm.matmul_kernel.best_config)
ref = a.float() @ b.float()
triton_err = ((c.float() - ref).abs().max() / ref.abs().max()).item()

np.save(os.path.join(work, "a.npy"), a.cpu().numpy())
np.save(os.path.join(work, "b.npy"), b.cpu().numpy())
words = [file, "matmul_kernel", "--grid", "cdiv(M,BM),cdiv(N,BN)",
         f"a_ptr=@{work}/a.npy", f"b_ptr=@{work}/b.npy", f"c_ptr=zeros:{size}x{size}:f16",
         f"M={size}", f"N={size}", f"K={size}", f"stride_am={size}", "stride_ak=1", f"stride_bk={size}",
         "stride_bn=1", f"stride_cm={size}", "stride_cn=1", "--backend", "cuda"]
env = dict(os.environ, KILN_CACHE_DIR=os.path.join(work, "kiln_cache"))
env.pop("KILN_NO_CACHE", None)
t0 = time.perf_counter()
tune = subprocess.run([kiln, "tune"] + words, env=env, capture_output=True, text=True)
kiln_tune_s = time.perf_counter() - t0
print(tune.stderr, tune.stdout)
t0 = time.perf_counter()
again = subprocess.run([kiln, "run"] + words + ["--out", f"c_ptr={work}/c.npy"],
                       env=dict(env, KILN_PRINT_AUTOTUNING="1"), capture_output=True, text=True)
kiln_again_s = time.perf_counter() - t0
print(again.stderr, again.stdout)
kc = np.load(f"{work}/c.npy").astype(np.float32) if again.returncode == 0 else None
kiln_err = float(np.abs(kc - ref.cpu().numpy()).max() / ref.abs().max().item()) if kc is not None else float("nan")
m = re.search(r"tuned (\d+) configs in ([\d.]+) ms; best: (.*) \(", tune.stderr)
print(f"autotune matmul {size}^3 fp16, 8 configs, cold caches:")
print(f"  triton: first launch {triton_first_s:.2f} s (compile + tune), best {triton_best}, max rel err {triton_err:.2e}")
print(f"  kiln:   kiln tune process {kiln_tune_s:.2f} s (start-up, input load, 8 compiles in parallel, timing"
      f"{'' if not m else f' {float(m.group(2)) / 1000:.2f} s'}), best {m.group(3) if m else '?'}")
print(f"  kiln:   second process {kiln_again_s:.2f} s, "
      f"{'took the tuning cache' if 'from the tuning cache' in again.stderr else 'DID NOT use the tuning cache'}, "
      f"{'no timing' if 'tuned ' not in again.stderr else 'TIMED AGAIN'}, max rel err {kiln_err:.2e}")
sys.exit(0 if tune.returncode == 0 and again.returncode == 0 and "from the tuning cache" in again.stderr else 1)
