# Why: on sm_80+ bf16 values (held as float) are rounded by cvt.rn.bf16.f32,
# one instruction where the integer round-to-nearest-even takes seven, and
# a pair of bf16 stored side by side is rounded from float by one
# cvt.rn.bf16x2.f32 into its 32-bit word (as Triton), with no 16-bit
# registers in between. With 1024 threads a CTA, the two registers this
# and the packing of halves as vectors saved in Liger's swiglu are the
# difference between one and two CTAs an SM.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s swiglu 'a_ptr=*bf16:D' 'b_ptr=*bf16:D' 'c_ptr=*bf16:D' n=i32:D BLOCK=1024 | %FileCheck %s
# CHECK: ld.global.v4.b32
# CHECK: ex2.approx.ftz.f32
# CHECK: cvt.rn.bf16.f32
# CHECK: cvt.rn.bf16x2.f32
# CHECK: st.global.v4.b32
# CHECK-NOT: bfe.u32
# CHECK-NOT: 32767
import triton
import triton.language as tl


@triton.jit
def swiglu(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=offs < n, other=0)
    c = (a * tl.sigmoid(a)).to(b.dtype) * b
    tl.store(c_ptr + offs, c, mask=offs < n)
