# Why: a thread's run of elements is one vector access only where the
# pointer's alignment allows it. Rows at an odd stride (a runtime stride
# without D) are read and written one element per thread, so that every
# warp access is 128 contiguous bytes; runs of 4 scalar accesses would leave
# gaps that make L2 write each partially covered sector four times. With a
# 16-byte aligned stride the same kernel moves 4 floats per access.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s row_scale 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' stride=i32 n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=ODD
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s row_scale 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' stride=i32 n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=ODDPTX
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s row_scale 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' stride=i32:D n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=ALIGNED
# ODD: load {{.*}} #blocked<spt=[1] tpw=[32] wpc=[4] order=[0]>
# ODDPTX-NOT: global.v4
# ODDPTX: ld.global.b32
# ODDPTX-NOT: global.v4
# ODDPTX: st.global.b32
# ALIGNED: load {{.*}} #blocked<spt=[4] tpw=[32] wpc=[4] order=[0]>
import triton
import triton.language as tl


@triton.jit
def row_scale(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * stride + cols, x / tl.sum(x, axis=0), mask=cols < n)
