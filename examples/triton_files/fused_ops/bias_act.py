from typing import Callable, Optional

import torch
import triton
import triton.language as tl

from . import activations
from .activations import gelu, leaky_relu, relu

_SUPPORTED = {"relu": relu, "gelu": gelu, "leaky_relu": leaky_relu}
assert activations.leaky_relu is leaky_relu


def _configs():
    return [triton.Config({"BLOCK_N": bn}, num_warps=w) for bn in (128, 256) for w in (2, 4)]


@triton.autotune(configs=_configs(), key=["n_cols"])
@triton.jit
def bias_act_kernel(x_ptr, bias_ptr, out_ptr, n_cols, ACT: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    for start in tl.range(0, n_cols, BLOCK_N, num_stages=2):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        b = tl.load(bias_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, ACT(x + b), mask=mask)


def bias_act(x: torch.Tensor, bias: torch.Tensor, *, activation: str = "gelu",
             out: Optional[torch.Tensor] = None) -> torch.Tensor:
    if activation not in _SUPPORTED:
        raise ValueError(f"unknown activation {activation!r}; choose one of {sorted(_SUPPORTED)}")
    act: Callable = _SUPPORTED[activation]
    out = torch.empty_like(x) if out is None else out
    bias_act_kernel[(x.shape[0],)](x, bias, out, x.shape[1], ACT=act)
    return out
