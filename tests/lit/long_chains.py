# Why: element-wise block values are recomputed per element (lazy) while
# their trees stay small; an unrolled chain (`acc = acc * 3 + offs`, 300
# times) is stored in a buffer every so often instead, so that the lowering
# never recurses through thousands of levels (issue 17.2: a stack overflow).
# RUN: %kiln compile --emit llir %s chain 'x_ptr=*i32' BLOCK=64 | %FileCheck %s
# CHECK: define void @chain(
# CHECK: alloca [64 x i32]
# CHECK: ret void
import triton
import triton.language as tl


@triton.jit
def chain(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in tl.static_range(300):
        acc = acc * 3 + offs
    tl.store(x_ptr + offs, acc)
