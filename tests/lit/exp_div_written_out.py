# Why: ptxas expands ex2.approx.f32 and div.full.f32 into several SASS
# instructions per use, and that expansion was a fifth of its time on
# softmax (the cold-compile aim of issue 10). kiln writes out the same SASS
# sequences (bit-exact: checked on an H200 over every ex2 input): tl.exp is
# ex2.approx.ftz on an input halved below -126 and squared back, and `/`
# scales the divisor into rcp's range once, so a block divided by its sum
# takes one rcp.approx and two multiplies an element. Masks reach the
# predicated loads and stores as predicate registers (`@%p ld`), with no
# integer round trip through setp inside the inline PTX.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/softmax.py softmax_kernel 'out_ptr=*fp32:D' 'in_ptr=*fp32:D' in_stride=i32:D out_stride=i32:D n_cols=i32:D BLOCK=4096 --num-warps 8 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/softmax.py softmax_kernel 'out_ptr=*fp32:D' 'in_ptr=*fp32:D' in_stride=i32:D out_stride=i32:D n_cols=i32:D BLOCK=4096 --num-warps 8 | %FileCheck %s --check-prefix=NONE
# CHECK: @%p{{[0-9]+}} ld.global.v4.b32
# CHECK: setp.geu.f32 {{.*}}, 0fC2FC0000;
# CHECK: ex2.approx.ftz.f32
# CHECK: abs.f32
# CHECK: rcp.approx.ftz.f32
# CHECK-NOT: rcp.approx
# CHECK: @%p{{[0-9]+}} st.global.v4.b32
# NONE-NOT: div.full
# NONE-NOT: ex2.approx.f32
# NONE-NOT: setp.ne.b32 p,
