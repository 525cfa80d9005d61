"""A package of fused elementwise kernels, laid out as real projects lay
theirs out: jit helpers in one module, constants in another, kernels that
import both with relative and absolute imports."""
from .bias_act import bias_act  # noqa: F401
