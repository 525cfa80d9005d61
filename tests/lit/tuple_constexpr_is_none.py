# Why: lmdeploy's prefill attention passes the boundary_check of its block
# pointer loads as a tuple constexpr (`k_bound: tl.constexpr = (1,)`, or
# None) and its helper tests it with `is not None`; Triton folds that
# identity test at compile time for any value, tuples included. Identity of
# two tuples is still refused with a message.
# RUN: %kiln compile --target cpu --emit ir %s copy_tile 'k_ptr=*fp16:D' 'o_ptr=*fp16:D' seqlen=i32 stride_s=i32 BLOCK_N=16 BLOCK_D=32 CHECK_SEQ=true | %FileCheck %s --check-prefix=MASKED
# RUN: %kiln compile --target cpu --emit ir %s copy_tile 'k_ptr=*fp16:D' 'o_ptr=*fp16:D' seqlen=i32 stride_s=i32 BLOCK_N=16 BLOCK_D=32 CHECK_SEQ=false | %FileCheck %s --check-prefix=PLAIN
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s copy_tile 'k_ptr=*fp16:D' 'o_ptr=*fp16:D' seqlen=i32 stride_s=i32 BLOCK_N=16 BLOCK_D=32 CHECK_SEQ=true | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu --emit ir %s same_bounds 'x_ptr=*fp32:D' 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# MASKED: load %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : <16x32xf16>
# PLAIN-NOT: load %{{[0-9]+}}, %{{[0-9]+}}
# PLAIN: load %{{[0-9]+}} : <16x32xf16>
# PTX: .entry copy_tile
# BAD: 'is' is only supported between compile-time values
import torch  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def _load_kv(ptrs, boundary_check: tl.constexpr):
    if boundary_check is not None:
        return tl.load(ptrs, boundary_check=boundary_check, padding_option="zero")
    else:
        return tl.load(ptrs)


@triton.jit
def copy_tile(k_ptr, o_ptr, seqlen, stride_s, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
              CHECK_SEQ: tl.constexpr):
    if CHECK_SEQ:
        k_bound: tl.constexpr = (0, )
    else:
        k_bound: tl.constexpr = None
    k_ptrs = tl.make_block_ptr(k_ptr, (seqlen, BLOCK_D), (stride_s, 1), (0, 0), (BLOCK_N, BLOCK_D), (1, 0))
    k = _load_kv(k_ptrs, boundary_check=k_bound)
    tl.static_assert(k_bound is None or len(k_bound) == 1)
    tl.static_assert((k_bound is not None) == CHECK_SEQ)
    offs = tl.arange(0, BLOCK_N)[:, None] * BLOCK_D + tl.arange(0, BLOCK_D)[None, :]
    tl.store(o_ptr + offs, k)


@triton.jit
def same_bounds(x_ptr):
    a: tl.constexpr = (0, 1)
    b: tl.constexpr = (0, 1)
    tl.store(x_ptr, 1.0 if a is b else 0.0)
