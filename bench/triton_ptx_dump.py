#!/usr/bin/env python3
"""Writes the PTX Triton 3.6 produces for the kernels whose cold compile kiln
is measured on (softmax BLOCK=4096 with 8 warps, matmul 128x128x32 with 4
warps and 3 stages, fp16 -> fp32), so that the assembler's time on Triton's
PTX and on kiln's can be compared on one machine:
  python3 bench/triton_ptx_dump.py SHARED_DIR OUT_DIR
  CUDA_CACHE_DISABLE=1 python3 bench/ptx_assemble_probe.py OUT_DIR/*.ptx
OUT_DIR receives triton_softmax_4096.ptx and triton_matmul_128x128x32.ptx.
"""
import importlib.util
import os
import sys

import torch


def load(shared, name):
    spec = importlib.util.spec_from_file_location(name, f"{shared}/kernels/{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    sm = load(shared, "softmax").softmax_kernel
    x = torch.empty(4096, 4096, device="cuda")
    k = sm.warmup(x, x, 4096, 4096, 4096, BLOCK=4096, num_warps=8, grid=(4096,))
    open(f"{out}/triton_softmax_4096.ptx", "w").write(k.asm["ptx"])

    mm = load(shared, "matmul").matmul_kernel
    a = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
    c = torch.empty(4096, 4096, device="cuda", dtype=torch.float32)
    k = mm.warmup(a, a, c, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1, BM=128, BN=128, BK=32,
                  num_warps=4, num_stages=3, grid=(32, 32))
    open(f"{out}/triton_matmul_128x128x32.ptx", "w").write(k.asm["ptx"])
    print(f"triton PTX in {out}")


if __name__ == "__main__":
    main()
