# Cases for shared/scripts/kernel-cases (group "rank"): blocks of 4 to 11
# dimensions (bench/rank_kernels.py), checked against NumPy.
#   kernel-cases KILN --backend cpu|cuda --extra bench/rank_cases.py --only rank
import os as _os

RK = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "rank_kernels.py")


def join_unpack_ref(i, BM, BN):
    # tl.join adds its axis last: w[m, n, c, b, a] is w_(4c + 2b + a), so the
    # reshape lays out w0 .. w7 in order, as AWQ's unpacking wants.
    x = i["x_ptr"].reshape(BM, BN, 1)
    return {"out_ptr": (x + 1000.0 * np.arange(8, dtype=np.float32)).reshape(BM, BN * 8)}


for BM, BN in [(4, 8), (16, 32)]:
    cases.append(Case("rank", RK, "join_unpack", [1],
                      dict(x_ptr=rng.integers(0, 100, (BM, BN)).astype(np.float32), out_ptr=f"zeros:{BM}x{BN * 8}:f32",
                           BM=BM, BN=BN),
                      ["out_ptr"], lambda i, BM=BM, BN=BN: join_unpack_ref(i, BM, BN), exact=True))


def hypercube_ref(i, L):
    h = i["x_ptr"].astype(np.float64).reshape([2] * L)
    acc = np.zeros_like(h)
    for j in range(L):
        axis = L - 1 - j
        s = h.sum(axis=axis, keepdims=True)
        m = h.max(axis=axis, keepdims=True)
        right = np.arange(2).reshape([1] * (L - j - 1) + [2] + [1] * j)
        acc = acc + s * (j + 1) + np.where(right == 1, m, 0.0)
    return {"out_ptr": acc.reshape(-1), "sum_ptr": np.array([h.sum()])}


for L in [4, 5, 8, 11]:
    cases.append(Case("rank", RK, "hypercube", [1],
                      dict(x_ptr=rng.integers(-8, 8, 2**L).astype(np.float32), sum_ptr="zeros:1:f32",
                           out_ptr=f"zeros:{2**L}:f32", LOG2=L),
                      ["out_ptr", "sum_ptr"], lambda i, L=L: hypercube_ref(i, L), exact=True))
