# Why: module-level constants real files compute with torch (finfo, iinfo)
# and float("inf") fold to IR constants, and isinstance on a tensor
# descriptor folds at compile time, so the pointer path of a helper that
# accepts either leaves no trace of the other branch.
# RUN: %kiln compile --emit ir %s clamp_rows 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' M=i32:D BM=16 N=8 | %FileCheck %s
# CHECK-NOT: if
# CHECK: constant -inf : f32
# CHECK: constant -3.40282e+38 : f32
# CHECK: constant 127 : i32
# CHECK-NOT: if
# CHECK: store
import torch
import triton
import triton.language as tl

F32_MIN = tl.constexpr(torch.finfo(torch.float32).min)
NEG_INF = tl.constexpr(float("-inf"))
I8_MAX = tl.constexpr(torch.iinfo(torch.int8).max)


@triton.jit
def _as_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.jit
def clamp_rows(x_ptr, y_ptr, M, BM: tl.constexpr, N: tl.constexpr):
    x_desc = _as_desc(x_ptr, [M, N], [N, 1], [BM, N])
    y_desc = _as_desc(y_ptr, [M, N], [N, 1], [BM, N])
    x = x_desc.load([tl.program_id(0) * BM, 0])
    x = tl.where(x == NEG_INF, F32_MIN, x)
    y_desc.store([tl.program_id(0) * BM, 0], tl.minimum(x, I8_MAX))
