# Why: real kernels wrap their offsets (`(pid * BLOCK + arange) % N`, the
# Triton tutorials' matmul) and then either rely on N's divisibility or say
# what they know with tl.multiple_of / tl.max_contiguous. Both must keep the
# 16-byte accesses: with N specialized D the runs survive `% N`; with a
# plain N only the hints restore them; without either, no vector access.
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s wrap_copy 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' N=i32:D BLOCK=512 HINT=False | %FileCheck %s --check-prefix=DIV
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s wrap_copy 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' N=i32 BLOCK=512 HINT=False | %FileCheck %s --check-prefix=PLAIN
# RUN: %kiln compile --target cuda:sm_90 --emit ptx %s wrap_copy 'x_ptr=*fp32:D' 'y_ptr=*fp32:D' N=i32 BLOCK=512 HINT=True | %FileCheck %s --check-prefix=DIV
# RUN: (%kiln compile --target cpu --emit ir %s bad_hint 'x_ptr=*fp32:D' N=i32 2>&1 || true) | %FileCheck %s --check-prefix=BAD
# DIV: ld.global.v4.b32
# DIV: st.global.v4.b32
# PLAIN-NOT: ld.global.v4
# PLAIN-NOT: st.global.v4
# RUN: (%kiln compile --target cpu --emit ir %s zero_hint 'x_ptr=*fp32:D' N=i32 2>&1 || true) | %FileCheck %s --check-prefix=ZERO
# BAD: tl.multiple_of needs one value per dim of its <16x16xi32> input, not 1
# ZERO: tl.max_contiguous's values must be positive, not 0
import triton
import triton.language as tl


@triton.jit
def wrap_copy(x_ptr, y_ptr, N, BLOCK: tl.constexpr, HINT: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) % N
    if HINT:
        offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


@triton.jit
def bad_hint(x_ptr, N):
    offs = tl.arange(0, 16)[:, None] * N + tl.arange(0, 16)[None, :]
    offs = tl.multiple_of(offs, 16)
    tl.store(x_ptr + offs, 1.0)


@triton.jit
def zero_hint(x_ptr, N):
    offs = tl.max_contiguous(tl.arange(0, 16) % N, 0)
    tl.store(x_ptr + offs, 1.0)
