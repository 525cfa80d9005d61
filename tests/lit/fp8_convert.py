# Why: kiln decoded fp8 through a table of 256 floats in global memory, a
# load per element; DeepSeek-V3's weight_dequant_kernel (128x128 fp8 -> bf16
# a program) made 128 of them a thread. sm_89 and later convert e4m3 and
# e5m2 by instruction, as Triton does: cvt.rn.f16x2.e4m3x2 to f16 (exact)
# and cvt.rn.satfinite.e4m3x2.f32 back, whose saturation and rounding are
# the shared lowering's. Constants still fold (the masked load's `other`),
# older targets and the CPU keep the table.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s requant 'x_ptr=*fp8e4nv:D' 'y_ptr=*fp8e5:D' 'z_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s
# CHECK-NOT: kiln_$_fp8
# CHECK: .entry requant
# CHECK: cvt.rn.f16x2.e4m3x2
# CHECK: cvt.rn.satfinite.e5m2x2.f32
# CHECK-NOT: satfinite.e4m3x2
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %s requant 'x_ptr=*fp8e4nv:D' 'y_ptr=*fp8e5:D' 'z_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s --check-prefix=SM80
# SM80: .global .align 4 .b8 kiln_$_fp8_$_f8e4nv[1024]
# SM80-NOT: e4m3x2
# SM80-NOT: e5m2x2
# RUN: %kiln compile --target cpu --emit llir %s requant 'x_ptr=*fp8e4nv:D' 'y_ptr=*fp8e5:D' 'z_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s --check-prefix=CPU
# CPU: @kiln.fp8.f8e4nv = private unnamed_addr constant [256 x float]
import triton
import triton.language as tl


@triton.jit
def requant(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * 2.0).to(tl.float8e5), mask=offs < n)
    tl.store(z_ptr + offs, x, mask=offs < n)
