# Blocks of more than 3 dimensions, as real kernels build them: lmdeploy's
# AWQ dequant joins eight 2-D blocks into a 5-D one and reshapes it back;
# bitonic sorts view a block as a hypercube of 2s (`[2] * log2(n)`) and
# reduce along, broadcast along and select on each of its axes.
import triton
import triton.language as tl


@triton.jit
def join_unpack(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + rows * BN + cols)
    w04 = tl.join(x, x + 4000.0)
    w15 = tl.join(x + 1000.0, x + 5000.0)
    w26 = tl.join(x + 2000.0, x + 6000.0)
    w37 = tl.join(x + 3000.0, x + 7000.0)
    w0246 = tl.join(w04, w26)
    w1357 = tl.join(w15, w37)
    w = tl.join(w0246, w1357)
    tl.static_assert(len(w.shape) == 5)
    out_cols = tl.arange(0, BN * 8)[None, :]
    tl.store(out_ptr + rows * (BN * 8) + out_cols, w.reshape(BM, BN * 8))


@triton.jit
def _axis_indicator(n_dims: tl.constexpr, j: tl.constexpr):
    # 0 or 1 along axis n_dims - 1 - j, 1-sized along the others.
    ar = tl.arange(0, 2)
    return tl.reshape(ar, [1] * (n_dims - j - 1) + [2] + [1] * j)


@triton.jit
def hypercube(x_ptr, sum_ptr, out_ptr, LOG2: tl.constexpr):
    offs = tl.arange(0, 2**LOG2)
    x = tl.load(x_ptr + offs)
    h = tl.reshape(x, [2] * LOG2)
    acc = h * 0.0
    for j in tl.static_range(LOG2):
        axis: tl.constexpr = LOG2 - 1 - j
        s = tl.sum(h, axis=axis, keep_dims=True)
        m = tl.max(h, axis=axis, keep_dims=True)
        right = _axis_indicator(LOG2, j)
        # Each element gets its pair's sum, plus the pair's max where it is
        # the right one of the pair (along this axis).
        acc = acc + s * (j + 1) + tl.where(right == 1, m, 0.0)
    tl.store(out_ptr + offs, tl.reshape(acc, x.shape))
    tl.store(sum_ptr, tl.sum(tl.reshape(h, (2**LOG2, )), axis=0))
