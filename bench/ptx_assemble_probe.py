#!/usr/bin/env python3
"""Times turning one PTX file into GPU code, three ways, on the GPU machine:
nvJitLink (kiln's path; -verbose as kiln passes it, and without), the driver's
linker (cuLinkCreate/AddData/Complete, which also hands back a cubin), and
cuModuleLoadData (the driver JIT, straight to a module).

Run it with CUDA_CACHE_DISABLE=1, or the driver's and nvJitLink's compute
cache answers every repeat after the first:
  CUDA_CACHE_DISABLE=1 python3 bench/ptx_assemble_probe.py a.ptx [b.ptx ...]
Each way runs `--repeat` times on one long-lived thread (kiln assembles on
such threads), after one warm-up call; the median and the minimum are printed
in milliseconds of wall time, with the process CPU time beside them.
"""
import argparse
import ctypes
import re
import statistics
import sys
import time

NVJITLINK_INPUT_PTX = 2
CU_JIT_INPUT_PTX = 1


def load(names, required=True):
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    if required:
        sys.exit(f"none of {names} loads")
    return None


def arch_of(ptx):
    m = re.search(r"^\.target (sm_\d+a?)", ptx, re.M)
    return m.group(1) if m else "sm_90"


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed: {rc}")


def nvjitlink(lib, ptx, verbose, extra=()):
    opts = [f"-arch={arch_of(ptx)}".encode()] + ([b"-verbose"] if verbose else [])
    opts += [o.encode() for o in extra]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    h = ctypes.c_void_p()
    check(lib.nvJitLinkCreate(ctypes.byref(h), len(opts), arr), "nvJitLinkCreate")
    data = ptx.encode() + b"\0"
    check(lib.nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, data, len(data), b"k.ptx"), "AddData")
    check(lib.nvJitLinkComplete(h), "Complete")
    n = ctypes.c_size_t()
    lib.nvJitLinkGetLinkedCubinSize(h, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvJitLinkGetLinkedCubin(h, buf)
    lib.nvJitLinkDestroy(ctypes.byref(h))
    return n.value


def culink(cu, ptx):
    state = ctypes.c_void_p()
    check(cu.cuLinkCreate_v2(0, None, None, ctypes.byref(state)), "cuLinkCreate")
    data = ptx.encode() + b"\0"
    check(cu.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, data, len(data), b"k.ptx", 0, None, None),
          "cuLinkAddData")
    cubin = ctypes.c_void_p()
    size = ctypes.c_size_t()
    check(cu.cuLinkComplete(state, ctypes.byref(cubin), ctypes.byref(size)), "cuLinkComplete")
    n = size.value
    cu.cuLinkDestroy(state)
    return n


def module_load(cu, ptx):
    mod = ctypes.c_void_p()
    check(cu.cuModuleLoadData(ctypes.byref(mod), ptx.encode() + b"\0"), "cuModuleLoadData")
    cu.cuModuleUnload(mod)
    return 0


def timed(fn, repeat):
    fn()  # warm-up: the first call on a thread pays for page faults and set-up
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - w) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ptx", nargs="+")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--variant", action="append", default=[],
                    help="more nvJitLink options to time, space-separated, e.g. "
                         "'-Xptxas=-O1' or '-Xptxas=--Ofast-compile=max' (repeatable)")
    a = ap.parse_args()
    nvj = load(["libnvJitLink.so.13", "/usr/local/cuda/lib64/libnvJitLink.so.13"])
    # Without a driver (a build machine) only nvJitLink is timed.
    cu = load(["libcuda.so.1"], required=False)
    if cu:
        check(cu.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain")
        check(cu.cuCtxSetCurrent(ctx), "set current")
    for path in a.ptx:
        ptx = open(path).read()
        print(f"{path}: {ptx.count(chr(10))} lines, {arch_of(ptx)}")
        ways = [("nvJitLink -verbose", lambda: nvjitlink(nvj, ptx, True)),
                ("nvJitLink", lambda: nvjitlink(nvj, ptx, False))]
        if cu:
            ways += [("cuLink (driver)", lambda: culink(cu, ptx)),
                     ("cuModuleLoadData", lambda: module_load(cu, ptx))]
        ways += [(f"nvJitLink {v}", lambda v=v: nvjitlink(nvj, ptx, False, v.split()))
                 for v in a.variant]
        for name, fn in ways:
            try:
                med, lo, cpu = timed(fn, a.repeat)
                print(f"  {name:32s} median {med:7.2f} ms  min {lo:7.2f}  cpu {cpu:7.2f}")
            except RuntimeError as e:
                print(f"  {name:32s} {e}")


if __name__ == "__main__":
    main()
