# Why: a column reduction of a tile whose warps split the rows combines the
# warps' partial sums through shared memory (one round trip, two barriers
# per reduction), and its result, carried across the loop in the slice
# layout, needs no conversion, not even for the final store: written in the
# slice layout (16-byte runs, lanes continuing each other), one copy of
# each element stores.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %shared/kernels/reductions.py column_sum 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' M=i32:D N=i32:D stride=i32:D BM=64 BN=32 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %shared/kernels/reductions.py column_sum 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' M=i32:D N=i32:D stride=i32:D BM=64 BN=32 | %FileCheck %s --check-prefix=PTX
# IR: for
# IR: sum {{.*}} axis=0 : <32xf32> #slice<dim=0 #blocked<spt=[1,4] tpw=[4,8] wpc=[4,1] order=[1,0]>>
# IR-NOT: convert_layout
# IR: yield
# IR-NOT: convert_layout
# IR: store
# PTX: ld.global.v4.b32
# PTX: shfl.sync.bfly
# PTX: bar.sync
# PTX: st.shared
# PTX: bar.sync
# PTX: ld.shared
