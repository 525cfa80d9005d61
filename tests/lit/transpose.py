# Why: a transpose of loaded data is one layout conversion through shared
# memory (the tile is loaded and stored coalesced, each in its own layout);
# reading through tl.trans itself costs nothing.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s transpose 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=32 BN=64 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s transpose 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=32 BN=64 | %FileCheck %s --check-prefix=PTX
# IR: load {{.*}} : <32x64xf32> #blocked<spt=[1,4] tpw=[2,16] wpc=[4,1] order=[1,0]>
# IR: trans {{.*}} #blocked<spt=[4,1] tpw=[16,2] wpc=[1,4] order=[0,1]>
# IR: convert_layout
# IR-NOT: convert_layout
# IR: store
# PTX-COUNT-2: bar.sync
# PTX-NOT: bar.sync
# PTX: st.global.v4.b32
import triton
import triton.language as tl


@triton.jit
def transpose(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))
