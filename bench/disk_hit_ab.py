#!/usr/bin/env python3
"""Disk-hit latency per shared kernel, binary A against binary B, on a noisy
machine: `kiln __bench-cold KERNEL --disk` (the child `kiln bench compile`
times its disk_hit_ms and disk_lookup_ms with) in fresh processes, A and B
alternating run by run so that other users' load falls on both alike;
medians of --runs each. Each binary gets its own cache folder, filled by one
compile first.

    bench/disk_hit_ab.py OLD/kiln build/bin/kiln [--runs 31] [--shared DIR] [KERNEL ...]

A binary of an older commit for A: build that commit elsewhere, or relink
build/bin/kiln with that commit's objects of the files a change touched.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def cold(binary, kernel, shared, cache, disk):
    env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_BACKEND='cpu', KILN_NO_CACHE='0')
    args = [binary, '__bench-cold', kernel, '--shared', shared] + (['--disk'] if disk else [])
    r = subprocess.run(args, env=env, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{binary} {kernel}: {r.stderr.strip()}")
    out = r.stdout.split()
    return float(out[0]), float(out[2])  # wall ms (file read to loaded), warmup() ms


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('a')
    p.add_argument('b')
    p.add_argument('kernels', nargs='*')
    p.add_argument('--runs', type=int, default=31)
    p.add_argument('--shared', default=os.environ.get('KILN_SHARED_DIR', '../shared'))
    o = p.parse_intermixed_args()
    kernels = o.kernels or subprocess.run([o.a, '__bench-cold', '--list'], check=True,
                                          capture_output=True, text=True).stdout.split()
    rows = []
    for k in kernels:
        with tempfile.TemporaryDirectory() as da, tempfile.TemporaryDirectory() as db:
            caches = {o.a: da, o.b: db}
            for x in (o.a, o.b):
                cold(x, k, o.shared, caches[x], disk=False)
            got = {o.a: [], o.b: []}
            for i in range(o.runs):
                for x in ((o.a, o.b) if i % 2 == 0 else (o.b, o.a)):
                    got[x].append(cold(x, k, o.shared, caches[x], disk=True))
        med = {x: (statistics.median(w for w, _ in v), statistics.median(l for _, l in v))
               for x, v in got.items()}
        rows.append((k, med[o.a], med[o.b]))
        print(f'{k:15s} A {med[o.a][0]:.3f} ms (lookup {med[o.a][1]:.3f})   '
              f'B {med[o.b][0]:.3f} ms (lookup {med[o.b][1]:.3f})', flush=True)
    for name, i in (('A', 1), ('B', 2)):
        print(f'{name}: disk hit {min(r[i][0] for r in rows):.3f}-{max(r[i][0] for r in rows):.3f} ms, '
              f'lookup {min(r[i][1] for r in rows):.3f}-{max(r[i][1] for r in rows):.3f} ms')


if __name__ == '__main__':
    sys.exit(main())
