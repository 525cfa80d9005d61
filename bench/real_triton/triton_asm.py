#!/usr/bin/env python3
"""What Triton 3.x compiles each real row kernel of gpu_parity.py (and the
benchmark kernels of ../shared/kernels) to, for a side-by-side reading with
`kiln compile --emit ptx`: writes NAME.ptx, NAME.ttgir, NAME.cubin and
NAME.json (num_warps, registers, spills, shared memory) under OUT. (The
device tool returns few files: tar OUT into one.)

usage (on the GPU machine): triton_asm.py --root CORPUS --shared SHARED --out OUT
"""
import argparse, importlib.util, json, os, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_parity  # noqa: E402


def save(out, name, kernel):
    with open(os.path.join(out, name + ".ptx"), "w") as f:
        f.write(kernel.asm["ptx"])
    with open(os.path.join(out, name + ".ttgir"), "w") as f:
        f.write(kernel.asm["ttgir"])
    with open(os.path.join(out, name + ".cubin"), "wb") as f:
        f.write(kernel.asm["cubin"])
    meta = dict(num_warps=kernel.metadata.num_warps, shared=kernel.metadata.shared, n_regs=kernel.n_regs,
                n_spills=kernel.n_spills)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(meta, f)
    print(name, meta)


def real_kernels(root, out):
    import torch
    rng = np.random.default_rng(0)
    for case in gpu_parity.CASES:
        file, kernel, grid, args, opts = case
        arrays, _ = gpu_parity.make_inputs(case, rng, out)
        ns = gpu_parity.load_module(os.path.join(root, file))
        call = {}
        for name, v in args.items():
            if name in arrays:
                t = torch.from_numpy(arrays[name][2].copy()).cuda()
                call[name] = t.view(torch.bfloat16) if arrays[name][1] == "bf16" else t
            else:
                call[name] = v
        compiled = ns[kernel][grid](**call, **opts)
        save(out, kernel, compiled)
    for f in os.listdir(out):
        if f.endswith(".npy"):
            os.remove(os.path.join(out, f))


def shared_kernels(shared, out):
    import torch

    def load(name):
        spec = importlib.util.spec_from_file_location(name, os.path.join(shared, "kernels", name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    ln, red, sm = load("layernorm"), load("reductions"), load("softmax")
    x = torch.ones(8192, 4096, device="cuda", dtype=torch.float16)
    w = torch.ones(4096, device="cuda", dtype=torch.float16)
    m = torch.empty(8192, device="cuda")
    save(out, "shared_layernorm_fwd",
         ln.layernorm_fwd[(8192,)](x, torch.empty_like(x), w, w, m, m, 4096, 4096, 1e-5, BLOCK=4096, num_warps=8))
    a = torch.ones(8192, 8192, device="cuda")
    save(out, "shared_column_sum", red.column_sum[(256,)](a, torch.empty(8192, device="cuda"), 8192, 8192, 8192,
                                                         BM=64, BN=32))
    a = torch.randn(16384, 4096, device="cuda")
    save(out, "shared_softmax", sm.softmax_kernel[(16384,)](torch.empty_like(a), a, 4096, 4096, 4096, BLOCK=4096,
                                                           num_warps=8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    real_kernels(a.root, a.out)
    shared_kernels(a.shared, a.out)


if __name__ == "__main__":
    main()
