import triton.language as tl

# Read by kernels: a constexpr global, as Triton requires.
GELU_COEF = tl.constexpr(0.7071067811865476)
# Host-only settings; never read by a kernel, so never evaluated.
DEFAULT_BLOCKS = tuple(2**i for i in range(7, 11))
