# Why: in debug mode the CPU checks each load and store against the size of
# the tensor its pointer parameter came from (issue 17.8): a failure records
# kernel, line and argument for the driver, and the access is not made.
# RUN: %kiln compile --debug --emit llir %s k 'x_ptr=*i32' n=i32 BLOCK=64 | %FileCheck %s
# RUN: %kiln compile --emit llir %s k 'x_ptr=*i32' n=i32 BLOCK=64 | %FileCheck %s --check-prefix=PLAIN
# CHECK: out-of-bounds load in kernel 'k' at line 16 through argument 'x_ptr'
# CHECK: out-of-bounds store in kernel 'k' at line 17 through argument 'x_ptr'
# PLAIN-NOT: out-of-bounds
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(x_ptr + offs, x + 1)
