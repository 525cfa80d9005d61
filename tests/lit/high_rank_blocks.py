# Why: real kernels build blocks of more than 3 dimensions: lmdeploy's AWQ
# dequant joins eight 2-D blocks into a 5-D one before reshaping it back,
# and bitonic sorts view a block as a hypercube of 2s (`[2] * log2(n)`).
# Triton has no bound on a block's rank; kiln's is 16, and a shape past it
# is an error that says so. NumPy-checked runs: bench/rank_cases.py.
# RUN: %kiln compile --target cpu --emit ir %s join_unpack 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=4 BN=8 | %FileCheck %s
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s join_unpack 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BM=4 BN=8 | %FileCheck %s --check-prefix=PTX
# RUN: %kiln compile --target cpu --emit ir %s hypercube_sum 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' LOG2=11 | %FileCheck %s --check-prefix=CUBE
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s hypercube_sum 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' LOG2=11 | %FileCheck %s --check-prefix=PTX-CUBE
# RUN: (%kiln compile --target cpu --emit ir %s hypercube_sum 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' LOG2=17 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# CHECK: select {{.*}} : <4x8x2xf32>
# CHECK: select {{.*}} : <4x8x2x2xf32>
# CHECK: select {{.*}} : <4x8x2x2x2xf32>
# CHECK: reshape {{.*}}<4x64xf32>
# PTX: .entry join_unpack
# CUBE: reshape {{.*}}<2x2x2x2x2x2x2x2x2x2x2xf32>
# CUBE: sum {{.*}} axis=10 : <2x2x2x2x2x2x2x2x2x2xf32>
# PTX-CUBE: .entry hypercube_sum
# BAD: tl.reshape's shape has 17 dimensions; kiln's blocks have at most 16 (Triton allows more)
import torch  # noqa: F401
import triton
import triton.language as tl


@triton.jit
def join_unpack(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + offs)
    pairs = (tl.join(x, x + 4.0), tl.join(x + 2.0, x + 6.0), tl.join(x + 1.0, x + 5.0), tl.join(x + 3.0, x + 7.0))
    w = tl.join(tl.join(pairs[0], pairs[1]), tl.join(pairs[2], pairs[3]))
    out = tl.arange(0, BM)[:, None] * (BN * 8) + tl.arange(0, BN * 8)[None, :]
    tl.store(out_ptr + out, w.reshape(BM, BN * 8))


@triton.jit
def hypercube_sum(x_ptr, out_ptr, LOG2: tl.constexpr):
    offs = tl.arange(0, 2**LOG2)
    h = tl.reshape(tl.load(x_ptr + offs), [2] * LOG2)
    h = h + tl.sum(h, axis=LOG2 - 1, keep_dims=True)
    tl.store(out_ptr + offs, tl.reshape(h, (2**LOG2, )))
