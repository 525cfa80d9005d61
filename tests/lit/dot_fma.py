# Why: where tensor cores do not apply (here sm_75; tests/lit/dot_mma.py has
# the others) tl.dot is correct on any shape with FMAs: both operands go to
# shared memory once, each thread accumulates its own slots over k in a
# loop, and nothing spills to local memory. The
# loop-carried pointers are held in their loads' layout, and the result is
# stored in its own (the mask, N not a multiple of 16, allows no vector
# store in any layout): no conversion at all.
# RUN: %kiln compile --target cuda:sm_75 --emit ir %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32 N=i32 K=i32 stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=32 BN=32 BK=32 | %FileCheck %s --check-prefix=IR
# IR: for
# IR-NOT: convert_layout
# IR: yield
# IR-NOT: convert_layout
# IR: store
# RUN: %kiln compile --target cuda:sm_75 --emit ptx %shared/kernels/matmul.py matmul_kernel 'a_ptr=*fp16:D' 'b_ptr=*fp16:D' 'c_ptr=*fp16:D' M=i32 N=i32 K=i32 stride_am=i32:D stride_ak=1 stride_bk=i32:D stride_bn=1 stride_cm=i32:D stride_cn=1 BM=32 BN=32 BK=32 | %FileCheck %s
# CHECK: st.shared.f32
# CHECK: bar.sync
# CHECK: ld.shared
# CHECK: fma.rn.f32
# CHECK-NOT: .local
