# Why: lmdeploy's bitonic top-k (Triton's own bitonic sort) builds reshape
# shapes with Python's list operators inside jit functions: `[2] * n`
# (repetition by a constexpr) and `[1] * (n - j - 1) + [2] + [1] * j`
# (concatenation). Both are compile-time tuples, as in Triton; '+' of a
# tuple and a tensor is an error that says what kernels can do.
# RUN: %kiln compile --target cpu --emit ir %s hypercube 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' N=8 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s hypercube 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' N=8 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu --emit ir %s bad_add 'x_ptr=*fp32:D' 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# CHECK: reshape {{.*}}<2x2x2xf32>
# CHECK: reshape {{.*}}<1x2x1xi32>
# CHECK: reshape {{.*}}<8xf32>
# PTX: .entry hypercube
# BAD: operator '+' on a list or tuple: kernels can concatenate two
import torch  # noqa: F401
import triton
import triton.language as tl
from triton.language import core
from triton.language.standard import _log2


@triton.jit
def _indicator(n_dims: core.constexpr, j: core.constexpr):
    ar = core.arange(0, 2)
    ar = core.reshape(ar, [1] * (n_dims - j - 1) + [2] + [1] * j)
    return ar


@triton.jit
def hypercube(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    n_dims: tl.constexpr = _log2(N)
    h = core.reshape(x, [2] * n_dims)
    tl.static_assert(len([2] * n_dims) == 3)
    tl.static_assert(len(() * 4 + (1, 2) * 0) == 0)
    is_right = _indicator(n_dims, 1)
    h = tl.where(is_right == 1, h * 2.0, h)
    tl.store(y_ptr + offs, core.reshape(h, x.shape))


@triton.jit
def bad_add(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.store(x_ptr + tl.arange(0, 4), [1, 2] + x)
