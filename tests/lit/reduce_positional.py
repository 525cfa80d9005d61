# Why: Triton's reductions take keep_dims by position too (sum(input, axis,
# keep_dims, dtype), xor_sum(input, axis, keep_dims), max(input, axis,
# return_indices, return_indices_tie_break_left, keep_dims)), and real code
# passes it so: lmdeploy's bitonic top-k flips with
# `ix ^ tl.xor_sum(ix, n_dims - 1 - i, True)`. kiln read keep_dims only by
# keyword, dropped the positional True, and broadcast the reduced block
# against the wrong axis: a wrong sort, silently. The kept axis is the
# reduced one; a sixth argument to tl.sum is an error.
# RUN: %kiln compile --target cpu --emit ir %s flip 'x_ptr=*i32:D' 'out_ptr=*i32:D' | %FileCheck %s
# RUN: (%kiln compile --target cpu --emit ir %s extra 'x_ptr=*i32:D' 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# RUN: (%kiln compile --target cpu --emit ir %s unknown_keyword 'x_ptr=*i32:D' 2>&1 || true) | %FileCheck %s --check-prefix=KW
# CHECK: xor {{.*}} axis=2 : <2x2xi32>
# CHECK-NEXT: expand_dims {{.*}} axis=2 : <2x2x1xi32>
# CHECK: max {{.*}} axis=0 : <2x2xi32>
# CHECK-NEXT: expand_dims {{.*}} axis=0 : <1x2x2xi32>
# BAD: tl.sum takes 4 arguments but 5 were given; it is tl.sum(input, axis, keep_dims, dtype)
# KW: tl.reshape has no parameter 'foo'
import triton
import triton.language as tl


@triton.jit
def flip(x_ptr, out_ptr):
    offs = tl.arange(0, 8)
    h = tl.reshape(tl.load(x_ptr + offs), [2, 2, 2])
    y = h ^ tl.xor_sum(h, 2, True)
    y = y + tl.max(h, 0, False, True, True)
    tl.store(out_ptr + offs, tl.reshape(y, [8]))


@triton.jit
def extra(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(x_ptr, tl.sum(x, 0, False, tl.int32, 5))


@triton.jit
def unknown_keyword(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(x_ptr + tl.arange(0, 8), tl.reshape(x, 8, foo=1))
