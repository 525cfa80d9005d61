# Why: a row reduction broadcast back over its row (softmax over a 2-D tile)
# must stay in registers and warp shuffles: the reduction's slice layout
# expands back to the tile's own layout, so no conversion and no shared
# memory round trip.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s row_softmax 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=16 BN=64 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s row_softmax 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=16 BN=64 | %FileCheck %s --check-prefix=PTX
# IR: load {{.*}} #blocked<spt=[1,4] tpw=[2,16] wpc=[4,1] order=[1,0]>
# IR: max {{.*}} axis=1 : <16xf32> #slice<dim=1 #blocked<spt=[1,4] tpw=[2,16] wpc=[4,1] order=[1,0]>>
# IR-NOT: convert_layout
# PTX: shfl.sync.bfly
# PTX-NOT: bar.sync
# PTX-NOT: .shared
# PTX-NOT: .local
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    offs = rows[:, None] * BN + cols[None, :]
    x = tl.load(x_ptr + offs)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + offs, e / tl.sum(e, axis=1)[:, None])
