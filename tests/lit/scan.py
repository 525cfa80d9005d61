# Why: a scan runs in a layout where each thread holds one run along the
# axis: a sequential scan in the thread, a Kogge-Stone scan over the lanes
# with shfl.up, and the warps' totals through shared memory.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %shared/kernels/reductions.py prefix_sum 'x_ptr=*i32:D' 'out_ptr=*i32:D' n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/reductions.py prefix_sum 'x_ptr=*i32:D' 'out_ptr=*i32:D' n=i32 BLOCK=1024 | %FileCheck %s --check-prefix=PTX
# IR: cumsum {{.*}} #blocked<spt=[8] tpw=[32] wpc=[4] order=[0]>
# PTX: shfl.sync.up.b32
# PTX: bar.sync
