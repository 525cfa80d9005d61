# Why: a binary search carries its bounds through the loop, each computed
# from the other (`lo` moves to `mid + 1`, `hi` to `mid`, `mid` from both).
# The axis analysis of the GPU layout pass solves all of a loop's carried
# values together; solving them one at a time recursed without end (a
# crash on FlagGems' isin and multinomial kernels).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s bucketize 'values_ptr=*fp32:D' 'bounds_ptr=*fp32:D' 'out_ptr=*i32:D' n=i32 n_bounds=i32 LOG_BOUNDS=10 BLOCK=256 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s bucketize_rows 'values_ptr=*fp32:D' 'bounds_ptr=*fp32:D' 'out_ptr=*i32:D' n=i32 n_bounds=i32 rows=i32 BLOCK=128 | %FileCheck %s --check-prefix=ROWS
# RUN: %kiln compile --target cpu --emit ir %s bucketize 'values_ptr=*fp32:D' 'bounds_ptr=*fp32:D' 'out_ptr=*i32:D' n=i32 n_bounds=i32 LOG_BOUNDS=10 BLOCK=256 | %FileCheck %s --check-prefix=CPU
# CHECK: .entry bucketize
# CHECK: st.global
# ROWS: .entry bucketize_rows
# CPU: kernel @bucketize
import torch  # noqa: F401  (host code of a real file)
import triton
import triton.language as tl


@triton.jit
def bucketize(values_ptr, bounds_ptr, out_ptr, n, n_bounds, LOG_BOUNDS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(values_ptr + offs, mask=offs < n, other=0.0)
    lo = tl.zeros((BLOCK,), dtype=tl.int32)
    hi = tl.zeros((BLOCK,), dtype=tl.int32) + n_bounds
    for _ in range(LOG_BOUNDS):
        mid = (lo + hi) // 2
        b = tl.load(bounds_ptr + mid, mask=mid < n_bounds, other=float("inf"))
        go_right = v > b
        lo = tl.where(go_right, mid + 1, lo)
        hi = tl.where(go_right, hi, mid)
    tl.store(out_ptr + offs, lo, mask=offs < n)


@triton.jit
def bucketize_rows(values_ptr, bounds_ptr, out_ptr, n, n_bounds, rows, BLOCK: tl.constexpr):
    # An outer loop over rows around a while-style search: the inner loop's
    # facts are solved again for each guess of the outer one.
    offs = tl.arange(0, BLOCK)
    for r in range(tl.program_id(0), rows, tl.num_programs(0)):
        v = tl.load(values_ptr + r * n + offs, mask=offs < n, other=0.0)
        lo = tl.zeros((BLOCK,), dtype=tl.int32)
        hi = tl.zeros((BLOCK,), dtype=tl.int32) + n_bounds
        step = n_bounds
        while step > 0:
            mid = (lo + hi) // 2
            b = tl.load(bounds_ptr + mid, mask=mid < n_bounds, other=float("inf"))
            lo = tl.where(v > b, mid + 1, lo)
            hi = tl.where(v > b, hi, mid)
            step = step // 2
        tl.store(out_ptr + r * n + offs, lo, mask=offs < n)
