# Why: Triton's dtype kinds are boolean < integral < floating, signed and
# unsigned alike, so a Python number (or constexpr) meeting an integer
# tensor takes the tensor's type: `u32 // 4096` is a u32 division. kiln
# ranked unsigned below signed and refused vLLM's top-k/top-p kernel
# ("different signedness"). The number must then fit that type, as Triton
# checks: a negative one with an unsigned tensor, or 300 with int8, is an
# error naming both.
# RUN: %kiln compile --target cpu --emit ir %s ceil_div 'x_ptr=*i32:D' B=4096 | %FileCheck %s
# RUN: (%kiln compile --target cpu --emit ir %s negative 'x_ptr=*i32:D' 2>&1 || true) | %FileCheck %s --check-prefix=NEG
# RUN: (%kiln compile --target cpu --emit ir %s too_big 'x_ptr=*i8:D' 2>&1 || true) | %FileCheck %s --check-prefix=BIG
# CHECK: idiv {{.*}} : <4xu32>
# CHECK: rem {{.*}} : <4xu32>
# NEG: cannot combine the u32 tensor with the negative number -1 (as in Triton)
# BIG: the number 300 is out of range for i8
import triton
import triton.language as tl


@triton.jit
def ceil_div(x_ptr, B: tl.constexpr):
    offs = tl.arange(0, 4)
    n = tl.load(x_ptr + offs).to(tl.uint32)
    q = (n + B - 1) // B
    r = n % 7
    tl.store(x_ptr + offs, (q + r).to(tl.int32))


@triton.jit
def negative(x_ptr):
    offs = tl.arange(0, 4)
    n = tl.load(x_ptr + offs).to(tl.uint32)
    tl.store(x_ptr + offs, (n + -1).to(tl.int32))


@triton.jit
def too_big(x_ptr):
    offs = tl.arange(0, 4)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 300)


# Bitwise ops and shifts promote a number as an integer of its own type
# (int32, or uint32 from 2^31 to 2^32), as Triton's do: int8 & 0x80 is an
# int32 (lightllm's int4 KV quantizer builds its nibbles so; in int8 the
# sign bits spilled into the other nibble), and u32 & 0xFFFFFFFF stays u32.
# RUN: %kiln compile --target cpu --emit ir %s nibbles 'x_ptr=*i8:D' 'o_ptr=*i32:D' | %FileCheck %s --check-prefix=BITS
# BITS: and {{.*}} : <4xi32>
# BITS: shr {{.*}} : <4xi32>
# BITS: and {{.*}} : <4xu32>
@triton.jit
def nibbles(x_ptr, o_ptr):
    offs = tl.arange(0, 4)
    q = tl.load(x_ptr + offs)
    low = ((q & 0x80) >> 4) | (q & 0xF)
    u = low.to(tl.uint32) & 0xFFFFFFFF
    tl.store(o_ptr + offs, u.to(tl.int32))
