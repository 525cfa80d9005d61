# Why: real kernels call a lone PTX math instruction through
# tl.inline_asm_elementwise for speed (a tanh-approximated gelu, sin/cos of
# a rotary angle). The CPU cannot run PTX, but it knows what these compute:
# they compile there as tl.tanh, tl.sin, ... (exactly rounded). Other asm on
# the CPU stays an error that says how to compile it.
# RUN: %kiln compile --target cpu --emit ir %s gelu_tanh 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s
# RUN: %kiln compile --target cpu --emit ir %s rotate 'x_ptr=*fp32:D' 'a_ptr=*fp32:D' 'y_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s --check-prefix=ROT
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s gelu_tanh 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' n=i32 BLOCK=256 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu --emit ir %s bit_trick 'x_ptr=*fp32:D' n=i32 BLOCK=256 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# CHECK: tanh
# CHECK-NOT: inline_asm
# ROT-DAG: sin
# ROT-DAG: cos
# ROT-NOT: inline_asm
# PTX: tanh.approx.f32
# BAD: runs PTX, which only the cuda target can
import torch  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def fast_tanh(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def gelu_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + fast_tanh(inner)), mask=offs < n)


@triton.jit
def rotate(x_ptr, a_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    ang = tl.load(a_ptr + offs, mask=offs < n)
    s = tl.inline_asm_elementwise("sin.approx.ftz.f32  $0, $1;", "=f,f", [ang], dtype=tl.float32, is_pure=True,
                                  pack=1)
    c = tl.inline_asm_elementwise("cos.approx.ftz.f32 $0, $1;", "=f,f", [ang], dtype=tl.float32, is_pure=True,
                                  pack=1)
    same = tl.inline_asm_elementwise("mov.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(y_ptr + offs, same * c + x * s, mask=offs < n)


@triton.jit
def bit_trick(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.inline_asm_elementwise("lop3.b32 $0, $1, 0x7fffffff, 0, 0xc0;", "=r,r", [x.to(tl.int32, bitcast=True)],
                                  dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y.to(tl.float32, bitcast=True), mask=offs < n)
