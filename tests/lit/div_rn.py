# Why: on the GPU `/` on fp32 is div.full (2 ulp, as in Triton; written out
# as its SASS sequence around rcp.approx.ftz), while tl.div_rn must be the
# IEEE division (bench/lang_cases.py's exact_div failed on the H200 while
# both were div.full). The IR keeps them apart.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s divide 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'q_ptr=*fp32:D' 'r_ptr=*fp32:D' BLOCK=128 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s divide 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'q_ptr=*fp32:D' 'r_ptr=*fp32:D' BLOCK=128 | %FileCheck %s --check-prefix=PTX
# IR: div_rn {{.*}} : <128xf32>
# IR: div {{.*}} : <128xf32>
# PTX: div.rn.f32
# PTX: rcp.approx.ftz.f32
# PTX-NOT: div.full
import triton
import triton.language as tl


@triton.jit
def divide(x_ptr, y_ptr, q_ptr, r_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, tl.div_rn(x, y))
    tl.store(r_ptr + offs, x / y)
