import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, factor, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * factor, mask=mask)
