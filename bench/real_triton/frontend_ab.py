#!/usr/bin/env python3
"""Compile time of real kernel files in a fresh process, binary A against
binary B: `kiln compile FILE KERNEL SPECS --target cuda:sm_90` (read, parse,
import, analyse, then every stage to the cubin), A and B alternating run by
run, medians of --runs; with the number of .py files each opened (strace,
when present): what a change to the front end saves on a real file. One case
per repository of cases.jsonl, or those matching --filter.

    bench/real_triton/frontend_ab.py OLD/kiln build/bin/kiln --root CORPUS [--runs 7] [--filter S]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import run_cases

HERE = os.path.dirname(os.path.abspath(__file__))


def ir_command(kiln, case, root):
    cmd = run_cases.command(kiln, case, ["--target", "cuda:sm_90", "--emit", "ir"])
    cmd[2] = os.path.join(root, case["file"])
    return cmd


def seconds(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0 if p.returncode == 0 else float("nan")  # a case that fails: nan


def files_opened(cmd):
    if not shutil.which("strace"):
        return None
    with tempfile.NamedTemporaryFile(suffix=".strace") as log:
        subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", log.name] + cmd, capture_output=True)
        lines = open(log.name, errors="replace").read().splitlines()
    return len({l.split('"')[1] for l in lines if '.py"' in l and "ENOENT" not in l})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--root", required=True)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--filter", default="")
    o = p.parse_args()
    cases, seen = [], set()
    for line in open(os.path.join(HERE, "cases.jsonl")):
        c = json.loads(line)
        repo = c["file"].split("/")[0]
        if o.filter:
            if o.filter in c["file"] + ":" + c["kernel"]:
                cases.append(c)
        elif repo not in seen:
            seen.add(repo)
            cases.append(c)
    print(f"{'case':60} {'A ms':>8} {'B ms':>8} {'A files':>8} {'B files':>8}")
    for c in cases:
        ca, cb = ir_command(o.a, c, o.root), ir_command(o.b, c, o.root)
        ta, tb = [], []
        for _ in range(o.runs):
            ta.append(seconds(ca))
            tb.append(seconds(cb))
        fa, fb = files_opened(ca), files_opened(cb)
        name = (c["file"].split("/")[0] + ":" + os.path.basename(c["file"]) + ":" + c["kernel"])[:60]
        print(f"{name:60} {statistics.median(ta) * 1e3:8.1f} {statistics.median(tb) * 1e3:8.1f} "
              f"{fa if fa is not None else '-':>8} {fb if fb is not None else '-':>8}")


if __name__ == "__main__":
    main()
