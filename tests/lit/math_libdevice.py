# Why: Triton 3.6 lowers tl.log, tl.log2, tl.sin and tl.cos on fp32 to
# libdevice (__nv_logf, __nv_log2f, __nv_sinf, __nv_cosf) linked with
# __CUDA_FTZ = 1, and only exp / exp2 to approximate instructions. kiln's
# lg2.approx put DeepSeek-V3's ue8m0 scales, exp2(ceil(log2(amax / 448))),
# one power of two above Triton's in 0.3% of blocks on an H100. The
# libdevice bodies are inlined: no lg2/sin/cos approximations remain, and
# their FMAs are the flushing (.ftz) ones Triton's PTX has.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s logs 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' BLOCK=128 | %FileCheck %s
# CHECK: .entry logs
# CHECK-NOT: lg2.approx
# CHECK-NOT: sin.approx
# CHECK-NOT: cos.approx
# CHECK: fma.rn.ftz.f32
# CHECK: cvt.rpi.f32.f32
# CHECK: ex2.approx.ftz.f32
# CHECK-NOT: lg2.approx
import triton
import triton.language as tl


@triton.jit
def logs(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s = tl.math.exp2(tl.math.ceil(tl.math.log2(x)))
    y = s + tl.log(x) + tl.sin(x) * tl.cos(x)
    tl.store(y_ptr + offs, y)
