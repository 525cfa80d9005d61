# Why: attorch sets a meta-parameter from the device through a heuristic
# (`lambda _: allow_tf32()`, which asks torch) and picks its activation by
# name with a jit function of the same name beside it. kiln cannot run the
# host function: a value the caller passes stands in for it, and without one
# the error says to pass it. A quoted constexpr spec ('gelu') is the string,
# an unquoted one names the jit function.
# RUN: %kiln compile --target cpu --emit ir %s act_kernel 'x_ptr=*fp32:D' n=i32 "ACT='gelu'" tf32=True BLOCK=128 | %FileCheck %s --check-prefix=STR
# RUN: %kiln compile --target cpu --emit ir %s act_kernel 'x_ptr=*fp32:D' n=i32 ACT=gelu tf32=True BLOCK=128 | %FileCheck %s --check-prefix=FN
# RUN: (%kiln compile --target cpu --emit ir %s act_kernel 'x_ptr=*fp32:D' n=i32 "ACT='relu'" BLOCK=128 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# STR: erf
# FN: kernel @act_kernel
# FN-NOT: erf
# BAD: kiln cannot evaluate the heuristic for 'tf32'; pass tf32= explicitly
import torch
import triton
import triton.language as tl


def allow_tf32() -> bool:
    return torch.cuda.get_device_capability()[0] >= 8


@triton.jit
def gelu(x):
    return 0.5 * x * (1 + tl.math.erf(x * 0.7071067811865476))


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.heuristics({"tf32": lambda _: allow_tf32()})
@triton.jit
def act_kernel(x_ptr, n, ACT: tl.constexpr, tf32: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if ACT == "gelu":
        x = gelu(x)
    elif ACT == "relu":
        x = relu(x)
    tl.store(x_ptr + offs, x, mask=offs < n)
