# Why: the language added for the CPU (tl.math / libdevice functions, fp8,
# and the builtins built on gather: sort, flip, associative_scan with a jit
# combine_fn, device_print) lowers on the GPU too: libdevice is linked and
# inlined (no __nv_ call is left), a gather reads its source from shared
# memory, fp8 travels as bytes, and device_print calls CUDA's vprintf.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s math_fns 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BLOCK=256 | %FileCheck %s --check-prefix=MATH
# RUN: %kiln compile --target cuda:sm_90 --emit ir %s sort_flip 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BLOCK=128 | %FileCheck %s --check-prefix=IR
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s sort_flip 'x_ptr=*fp32:D' 'out_ptr=*fp32:D' BLOCK=128 | %FileCheck %s --check-prefix=SORT
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s custom_scan 'x_ptr=*i32:D' 'out_ptr=*i32:D' BLOCK=256 | %FileCheck %s --check-prefix=SCAN
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s fp8_roundtrip 'x_ptr=*fp8e4nv:D' 'out_ptr=*fp32:D' BLOCK=256 | %FileCheck %s --check-prefix=FP8
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s show 'x_ptr=*fp32:D' BLOCK=16 | %FileCheck %s --check-prefix=PRINT
# MATH: .entry math_fns
# MATH-NOT: __nv_
# MATH-NOT: .local
# IR: gather {{.*}} #blocked
# SORT: .entry sort_flip
# SORT: bar.sync
# SORT-NOT: .local
# SCAN: .entry custom_scan
# SCAN: ld.shared
# FP8: ld.global{{.*}}.u8
# PRINT: .extern .func {{.*}}vprintf
# PRINT: .entry show
# PRINT: call.uni{{.*}}
# PRINT-NEXT: vprintf
import triton
import triton.language as tl


@triton.jit
def math_fns(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.extra.cuda.libdevice.tanh(x) + tl.math.erfinv(x * 0.5) + tl.extra.cuda.libdevice.pow(x, x)
    tl.store(out_ptr + offs, y + tl.extra.cuda.libdevice.isnan(x).to(tl.float32))


@triton.jit
def sort_flip(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.flip(tl.sort(x), 0))


@triton.jit
def add(a, b):
    return a + b


@triton.jit
def custom_scan(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.associative_scan(x, 0, add))


@triton.jit
def fp8_roundtrip(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.float32) * 2.0)


@triton.jit
def show(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, BLOCK)))
