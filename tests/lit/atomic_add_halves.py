# Why: split-K matmuls (triton-lang/kernels' SPLIT_K > 1) add fp16, bf16 or
# fp32 tiles into their output with tl.atomic_add and never read the old
# values: on the GPU those become vector reductions predicated by the mask
# where the elements are contiguous, aligned and masked alike: on sm_90 up
# to 16 bytes an instruction (red.global.add.noftz.v4.f16x2 / .bf16x2,
# red.global.add.v4.f32); before sm_90 one f16x2 pair at a time (bf16x2 and
# the vector forms are sm_90's; a bf16 add there is a CAS loop). Where the
# elements do not line up (n not a multiple of 16), or where the old values
# are read, an atom per element. On the CPU a bf16 atomic add is a bfloat
# atomicrmw (its memory is 16 bits; an i16 fadd was invalid IR).
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=RAGGED
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_halves_old 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'old_ptr=*fp16:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=OLD
# RUN: %kiln compile --target cuda:sm_80 --emit ptx %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=SM80
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s add_f32 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=F32
# RUN: %kiln compile --target cpu --emit llir %s add_halves 'x_ptr=*fp32:D' 'h_ptr=*fp16:D' 'b_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s --check-prefix=CPU
# CHECK-NOT: atom.global
# CHECK: @{{%p[0-9]+}} red.global.add.noftz.v4.f16x2 [{{%rd[0-9]+}}], {{[{]}}%r
# CHECK: @{{%p[0-9]+}} red.global.add.noftz.v4.bf16x2
# CHECK-NOT: atom.global
# RAGGED-NOT: red.global
# RAGGED: atom.global.add.noftz.f16
# RAGGED: atom.global.add.noftz.bf16
# SM80-COUNT-4: @{{%p[0-9]+}} red.global.add.noftz.f16x2 [{{%rd[0-9]+}}], {{%r[0-9]+}};
# SM80-NOT: red.global
# SM80: atom.global.cas.b32
# F32: @{{%p[0-9]+}} red.global.add.v4.f32 [{{%rd[0-9]+}}], {{[{]}}%f
# F32-NOT: atom.global
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


@triton.jit
def add_f32(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)
