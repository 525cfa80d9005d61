# Why: host code passes float("-inf") as a constexpr (vLLM's top-k/top-p
# MASK_VALUE). `kiln compile` read a word as an integer first and, when
# that threw, never tried a float: -inf, inf, nan and .5 became strings.
# RUN: %kiln compile --target cpu --emit ir %s masked 'x_ptr=*fp32:D' MASK=-inf | %FileCheck %s
# RUN: %kiln compile --target cpu --emit ir %s masked 'x_ptr=*fp32:D' MASK=.5 | %FileCheck %s --check-prefix=HALF
# CHECK: constant -inf : f32
# HALF: constant 0.5 : f32
import triton
import triton.language as tl


@triton.jit
def masked(x_ptr, MASK: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.where(x > 0, x, MASK))
