# Why: tl.maximum / tl.minimum / tl.clamp take propagate_nan; with
# tl.PropagateNan.ALL a NaN operand gives NaN (max.NaN on sm_80+, LLVM's
# maximum/minimum on the CPU), by default the other operand (maxnum/minnum).
# bench/lang_cases.py checks both against NumPy.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/lang_kernels.py nan_minmax 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'o_ptr=*fp32:D' N=64 ALL=1 | %FileCheck %s --check-prefix=ALL
# RUN: %kiln compile --target cuda:sm_90 --emit ptx $(dirname %s)/../../bench/lang_kernels.py nan_minmax 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'o_ptr=*fp32:D' N=64 ALL=0 | %FileCheck %s --check-prefix=NONE
# RUN: %kiln compile --target cpu --emit llir $(dirname %s)/../../bench/lang_kernels.py nan_minmax 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' 'o_ptr=*fp32:D' N=64 ALL=1 | %FileCheck %s --check-prefix=CPU
# ALL: max.NaN.f32
# ALL: min.NaN.f32
# NONE-NOT: .NaN
# NONE: max.f32
# CPU: @llvm.maximum
