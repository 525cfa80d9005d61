#!/usr/bin/env python3
"""Packs the part of a corpus (laid out as README.md says) that gpu_parity.py
reads, for the GPU machine: each case's file, the .py files of its folder's
ancestors (the imports a file reaches), and the packages whose files import
each other widely (Liger-Kernel, unsloth's kernels, triton-lang/kernels, the
tutorials, FlagGems' utils and runtime with their YAML configs). About 1.2 MB.

    bench/real_triton/device_corpus.py --root /work/corpus [--out .device/corpus.tar.xz]

On the GPU machine: mkdir -p /tmp/corpus && tar -xJf .device/corpus.tar.xz -C /tmp/corpus --strip-components=1
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import tempfile

TREES = ["linkedin__Liger-Kernel/src/liger_kernel", "unslothai__unsloth/unsloth/kernels", "triton-lang__kernels",
         "triton-lang__triton/python/tutorials", "FlagOpen__FlagGems/src/flag_gems/utils",
         "FlagOpen__FlagGems/src/flag_gems/runtime"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True)
    p.add_argument("--out", default=".device/corpus.tar.xz")
    o = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    files = set(re.findall(r'\("([A-Za-z0-9_.-]+__[^"]+\.py)"', open(os.path.join(here, "gpu_parity.py")).read()))
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "corpus")

        def copy(rel):
            s = os.path.join(o.root, rel)
            if os.path.isfile(s):
                os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
                shutil.copy2(s, os.path.join(dst, rel))

        for f in sorted(files):
            if not os.path.isfile(os.path.join(o.root, f)):
                raise SystemExit(f"device_corpus: {f} is not under {o.root}")
            copy(f)
            parts = f.split("/")
            for i in range(1, len(parts)):
                for q in glob.glob(os.path.join(o.root, *parts[:i], "*.py")):
                    copy(os.path.relpath(q, o.root))
        for tree in TREES:
            for q in glob.glob(os.path.join(o.root, tree, "**", "*"), recursive=True):
                if os.path.isfile(q) and q.endswith((".py", ".yaml")):
                    copy(os.path.relpath(q, o.root))
        os.makedirs(os.path.dirname(os.path.abspath(o.out)), exist_ok=True)
        subprocess.run(["tar", "-cJf", os.path.abspath(o.out), "corpus"], cwd=tmp, check=True)
    print(f"{o.out}: {len(files)} case files, {os.path.getsize(o.out) // 1024} KiB")


if __name__ == "__main__":
    main()
