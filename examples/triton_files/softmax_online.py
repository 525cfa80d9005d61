"""Row-wise softmax, written the way a Triton user's file is: host wrapper,
torch, an autograd class, a CLI, libdevice imported with a fallback, and the
block size chosen by a heuristic. kiln loads it unchanged and compiles only
`softmax_kernel`.

    kiln run examples/triton_files/softmax_online.py softmax_kernel --grid 4 \
        out_ptr=zeros:4x100:f32 in_ptr=@x.npy in_row_stride=100 \
        out_row_stride=100 n_cols=100 --out out_ptr=y.npy
"""
import argparse
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

try:
    from triton.language.extra.cuda import libdevice
except ImportError:  # older Triton
    from triton.language.extra import libdevice

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@dataclass
class Problem:
    rows: int = 4096
    cols: int = 1000
    dtype: torch.dtype = torch.float32


@triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    numerator = libdevice.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=mask)


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols)
        ctx.save_for_backward(y)
        return y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=Problem.rows)
    args = parser.parse_args(argv)
    p = Problem(rows=args.rows)
    x = torch.randn(p.rows, p.cols, device=DEVICE, dtype=p.dtype)
    y = Softmax.apply(x)
    err = (y - torch.softmax(x, dim=1)).abs().max().item()
    print(f"{p.rows}x{p.cols}: max error {err:.3e}")
    assert err < 1e-5, f"too large: {err!r}"


if __name__ == "__main__":
    main()
