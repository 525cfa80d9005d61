# Why: real files reach host helpers from kernels and decorators.
# flash-linear-attention passes its tuner-cache choice to triton.autotune as
# `**kwargs` (a dict host code builds from the Triton version); FlagGems
# sizes a block with triton.next_power_of_2 of a constexpr, which Triton runs
# at compile time. Both compile; next_power_of_2 of a runtime value is an
# error that says so.
# RUN: %kiln compile --target cpu --emit ir %s copy_rows 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' n_rows=i32 N=100 BLOCK=64 | %FileCheck %s
# RUN: %kiln compile --target cpu --emit ir %s copy_rows_cached 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' n_rows=i32 N=100 | %FileCheck %s --check-prefix=CACHED
# RUN: %kiln compile --target cpu --emit ir %s copy_rows_fixed 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' n_rows=i32 N=100 | %FileCheck %s --check-prefix=CACHED
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s copy_rows 'x_ptr=*fp16:D' 'y_ptr=*fp16:D' n_rows=i32 N=100 BLOCK=64 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu --emit ir %s pad_runtime 'x_ptr=*fp32:D' n=i32 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# CHECK: arange start=0 : <128xi32>
# CACHED: arange start=0 : <128xi32>
# PTX: .entry copy_rows
# BAD: triton.next_power_of_2 needs a compile-time int
import os

import torch  # noqa: F401
import triton
import triton.language as tl

tuner_kwargs = {"cache_results": True} if os.environ.get("MY_CACHE", "1") == "1" else {}
fixed_kwargs = {"cache_results": False}


@triton.jit
def copy_rows(x_ptr, y_ptr, n_rows, N: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, triton.next_power_of_2(N))
    row = tl.program_id(0)
    tl.static_assert(triton.next_power_of_2(N) == 128)
    tl.static_assert(triton.next_power_of_2(BLOCK) == BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N)
    tl.store(y_ptr + row * N + cols, x, mask=cols < N)


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in [1, 2, 4]], key=["N"], **tuner_kwargs)
@triton.jit
def copy_rows_cached(x_ptr, y_ptr, n_rows, N: tl.constexpr):
    cols = tl.arange(0, triton.next_power_of_2(N))
    x = tl.load(x_ptr + tl.program_id(0) * N + cols, mask=cols < N)
    tl.store(y_ptr + tl.program_id(0) * N + cols, x, mask=cols < N)


@triton.autotune(configs=[triton.Config({}, num_warps=2)], key=["N"], warmup=5, **fixed_kwargs)
@triton.jit
def copy_rows_fixed(x_ptr, y_ptr, n_rows, N: tl.constexpr):
    cols = tl.arange(0, triton.next_power_of_2(N))
    tl.store(y_ptr + tl.program_id(0) * N + cols, tl.load(x_ptr + tl.program_id(0) * N + cols, mask=cols < N),
             mask=cols < N)


@triton.jit
def pad_runtime(x_ptr, n):
    tl.store(x_ptr, triton.next_power_of_2(n))
