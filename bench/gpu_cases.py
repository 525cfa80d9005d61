# Extra cases for shared/scripts/kernel-cases (group "gpu"): the kernels the
# GPU backend covers (1-D blocks), at several sizes including tails.
#   kernel-cases KILN --backend cuda --extra bench/gpu_cases.py --only gpu
for n, block in [(1, 1024), (1000, 1024), (10007, 1024), (10007, 256), ((1 << 20) + 3, 1024), (5000, 128)]:
    x, y = f32(n), f32(n)
    cases.append(Case("gpu", K("vector_add"), "add_kernel", [(n + block - 1) // block],
                      dict(x_ptr=x, y_ptr=y, out_ptr=f"zeros:{n}:f32", n=n, BLOCK=block),
                      ["out_ptr"], lambda i: {"out_ptr": i["x_ptr"] + i["y_ptr"]}, exact=True))
for n, block, a in [(1, 256, 2.0), (10007, 256, 1.5), (65536, 1024, -0.25)]:
    x, y = f32(n), f32(n)
    cases.append(Case("gpu", K("vector_add"), "axpy_kernel", [(n + block - 1) // block],
                      dict(a=a, x_ptr=x, y_ptr=y.copy(), n=n, BLOCK=block),
                      ["y_ptr"], lambda i, a=a: {"y_ptr": np.float32(a) * i["x_ptr"] + i["y_ptr"]}))
cases.append(Case("gpu", K("vector_add"), "empty_kernel", [4], dict(x_ptr=f32(64), n=64, BLOCK=64),
                  ["x_ptr"], lambda i: {"x_ptr": i["x_ptr"]}, exact=True))


def gpu_softmax_ref(i):
    a = i["in_ptr"].astype(np.float64)
    e = np.exp(a - a.max(1, keepdims=True))
    return {"out_ptr": e / e.sum(1, keepdims=True)}


for rows, cols, block in [(37, 781, 1024), (5, 1, 128), (64, 4096, 4096), (3, 1000, 2048), (128, 256, 256)]:
    cases.append(Case("gpu", K("softmax"), "softmax_kernel", [rows],
                      dict(out_ptr=f"zeros:{rows}x{cols}:f32", in_ptr=f32(rows, cols), in_stride=cols,
                           out_stride=cols, n_cols=cols, BLOCK=block),
                      ["out_ptr"], gpu_softmax_ref, tol=1e-4))
