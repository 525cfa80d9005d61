# Why: split-K matmuls (triton-lang/kernels' SPLIT_K > 1) add fp16 or bf16
# tiles into their output with tl.atomic_add and never read the old values:
# on the GPU those become packed reductions, red.global.add.noftz.f16x2 (or
# .bf16x2 on sm_90), two elements an instruction, predicated by the mask,
# where the pairs are contiguous, 4-byte aligned and masked alike; where not
# (n not a multiple of 16), or where the old values are read, an atom per
# element. On the CPU a bf16 atomic add is a bfloat atomicrmw (its memory is
# 16 bits; an i16 fadd was invalid IR).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=RAGGED
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves_old 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'old_ptr=*fp16:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=OLD
# RUN: %kiln compile --target cpu --emit llir %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=CPU
# CHECK-NOT: atom.global
# CHECK: @{{%p[0-9]+}} red.global.add.noftz.f16x2 [{{%rd[0-9]+}}], {{%r[0-9]+}};
# CHECK: @{{%p[0-9]+}} red.global.add.noftz.bf16x2
# CHECK-NOT: atom.global
# RAGGED-NOT: red.global
# RAGGED: atom.global.add.noftz.f16
# RAGGED: atom.global.add.noftz.bf16
# OLD-NOT: red.global
# OLD: atom.global.add.noftz.f16
# CPU: atomicrmw fadd ptr {{.*}}, half
# CPU: atomicrmw fadd ptr {{.*}}, bfloat
import triton
import triton.language as tl


@triton.jit
def add_halves(x_ptr, h_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.atomic_add(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.atomic_add(b_ptr + offs, x.to(tl.bfloat16), mask=m)


@triton.jit
def add_halves_old(x_ptr, h_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    old = tl.atomic_add(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(old_ptr + offs, old, mask=m)
