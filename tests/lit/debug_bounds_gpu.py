# Why: in debug mode the GPU checks each load and store against the size of
# the tensor its pointer parameter came from, as the CPU does (issue 17.8):
# the sizes arrive as by-value kernel parameters after the arguments, then a
# pointer to a device record that the first violating thread claims with
# atom.exch and fills (argument, line, offset, size) for the driver to read
# after the launch; the access itself is predicated off. Without debug there
# are no extra parameters and no atomics.
# RUN: %kiln compile --debug --target cuda:sm_90 --emit ptx %s k 'x_ptr=*i32:D' n=i32 BLOCK=256 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s k 'x_ptr=*i32:D' n=i32 BLOCK=256 | %FileCheck %s --check-prefix=PLAIN
# CHECK: .entry k(
# CHECK-NEXT: .param .u64 k_param_0,
# CHECK-NEXT: .param .u32 k_param_1,
# CHECK-NEXT: .param .u64 k_param_2,
# CHECK-NEXT: .param .u64 k_param_3,
# CHECK-NEXT: .param .u64 k_param_4
# CHECK-NEXT: )
# CHECK: ld.param.u64 [[EXTENT:%rd[0-9]+]], [k_param_2];
# CHECK: atom.global.exch.b32 {{%r[0-9]+}}, {{\[}}[[REC:%rd[0-9]+]]{{\]}}, 1;
# CHECK: st.global.u32 {{\[}}[[REC]]+4],
# CHECK: st.global.u32 {{\[}}[[REC]]+8],
# CHECK: st.global.u64 {{\[}}[[REC]]+24], [[EXTENT]];
# The store (line 40) is checked too, and flagged as a store.
# CHECK: atom.global.exch.b32
# CHECK: mov.b32 [[LINE:%r[0-9]+]], 40;
# CHECK-NEXT: st.global.u32 {{\[}}[[REC]]+8], [[LINE]];
# CHECK: st.global.v2.b32
# PLAIN: .entry k(
# PLAIN-NEXT: .param .u64 k_param_0,
# PLAIN-NEXT: .param .u32 k_param_1
# PLAIN-NEXT: )
# PLAIN-NOT: atom
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(x_ptr + offs, x + 1)
