# Why: a TensorDescriptor made on the host arrives as its base pointer
# (16-byte aligned, as TensorDescriptor checks), its shape and leading
# strides as i64 arguments, and the last stride as the constant 1, so the
# contiguous dim keeps unit-stride (vectorizable) addressing; NaN padding
# becomes the `other` of the masked load; the block shape is in the type.
# RUN: %kiln compile --emit ir %s shift 'x_desc=tensordesc<fp32[16, 32],nan>' 'y_desc=tensordesc<fp16[16, 32]>' BM=16 | %FileCheck %s
# RUN: %kiln compile --emit ptx --target cuda:sm_90 %s shift 'x_desc=tensordesc<fp32[16, 32],nan>' 'y_desc=tensordesc<fp16[16, 32]>' BM=16 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --emit ir %s shift 'x_desc=tensordesc<fp32[16 32]>' 'y_desc=tensordesc<fp16[16, 32]>' BM=16 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# CHECK: kernel @shift(%0: ptr<f32> {D} "x_desc.0", %1: i64 "x_desc.1", %2: i64 "x_desc.2", %3: i64 "x_desc.3", %{{[0-9]+}}: ptr<f16> {D} "y_desc.0"
# CHECK-NOT: "x_desc.4"
# CHECK: constant nan : f32
# CHECK: load
# CHECK: store
# PTX: .entry shift(
# PTX-COUNT-8: .param .u64 shift_param_
# PTX: ld.global
# PTX: st.global
# BAD: 'tensordesc<fp32[16 32]>' is not a descriptor type
import triton
import triton.language as tl


@triton.jit
def shift(x_desc, y_desc, BM: tl.constexpr):
    off = tl.program_id(0) * BM
    tile = x_desc.load([off, 0])
    y_desc.store([off, 0], (tile + 1.0).to(y_desc.dtype))
