# Why: tl.dot_scaled has no native MX dot below Blackwell; kiln decodes the
# operands (fp4 two a byte, fp8 bytes), applies the e8m0 scales per 32
# elements of K and runs a bf16 dot with fp32 accumulation, as Triton does
# there; on sm_90 that dot is on the tensor cores. Wrong formats or scale
# shapes are errors at the call.
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s mx 'a_ptr=*u8:D' 'sa_ptr=*u8:D' 'b_ptr=*u8:D' 'sb_ptr=*u8:D' 'c_ptr=*fp32:D' M=64 N=64 K=128 FMT=e4m3 S=4 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s mx 'a_ptr=*u8:D' 'sa_ptr=*u8:D' 'b_ptr=*u8:D' 'sb_ptr=*u8:D' 'c_ptr=*fp32:D' M=64 N=64 K=128 FMT=e4m3 S=4 | %FileCheck %s --check-prefix=PTX
# RUN: (%kiln compile --target cpu %s mx 'a_ptr=*u8:D' 'sa_ptr=*u8:D' 'b_ptr=*u8:D' 'sb_ptr=*u8:D' 'c_ptr=*fp32:D' M=64 N=64 K=128 FMT=e3m3 S=4 2>&1 || true) | %FileCheck %s --check-prefix=FORMAT
# RUN: (%kiln compile --target cpu %s mx 'a_ptr=*u8:D' 'sa_ptr=*u8:D' 'b_ptr=*u8:D' 'sb_ptr=*u8:D' 'c_ptr=*fp32:D' M=64 N=64 K=128 FMT=e4m3 S=2 2>&1 || true) | %FileCheck %s --check-prefix=SCALE
# IR: dot {{.*}} : <64x64xf32>
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
# FORMAT: rhs_format 'e3m3' is not e2m1, e4m3, e5m2, bf16 or fp16
# SCALE: lhs_scale must be [64, 4] (one scale per 32 elements along K), not <64x2xu8>
import triton
import triton.language as tl


@triton.jit
def mx(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FMT: tl.constexpr,
       S: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rs = tl.arange(0, S)
    a = tl.load(a_ptr + rm[:, None] * (K // 2) + tl.arange(0, K // 2)[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * S + rs[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + rn[None, :])
    sb = tl.load(sb_ptr + rn[:, None] * S + rs[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, sa, "e2m1", b, sb, FMT))
