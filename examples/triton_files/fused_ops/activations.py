import triton
import triton.language as tl

from fused_ops.constants import GELU_COEF


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit
def gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * GELU_COEF))


@triton.jit
def leaky_relu(x, slope: tl.constexpr = 0.01):
    return tl.where(x >= 0, x, slope * x)
