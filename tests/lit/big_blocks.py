# Why: a CPU program runs on a oneTBB worker with a few MiB of stack, and the
# language accepts blocks of 2^20 elements: buffers beyond a small size live
# in the scratch memory the entry point takes (its last argument), not in
# the stack frame (issue 17, item 1). The small row sums stay on the stack.
# RUN: %kiln compile --emit llir %s add_row_sums 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' R=1024 C=1024 | %FileCheck %s
# CHECK: define void @add_row_sums(ptr {{.*}}, ptr {{.*}}, i64 {{.*}}, i64 {{.*}}, ptr {{.*}}[[SCRATCH:%[0-9]+]])
# CHECK-NOT: alloca [1048576 x float]
# CHECK: alloca [1024 x float]
# CHECK-NOT: alloca [1048576 x float]
# CHECK: getelementptr inbounds i8, ptr [[SCRATCH]]
import triton
import triton.language as tl


@triton.jit
def add_row_sums(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + pid * R * C + rows * C + cols)
    y = x + 1.0 + tl.sum(x, axis=1)[:, None]
    tl.store(out_ptr + pid * R * C + rows * C + cols, y)
