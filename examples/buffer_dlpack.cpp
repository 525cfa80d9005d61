// Memory kiln does not own: a kiln::Buffer on a device (here the CPU; on a
// GPU the same code with {kiln::Backend::cuda, 0}), and a DLPack tensor as a
// framework hands it over (torch.utils.dlpack, CuPy, JAX...).
//
//   build/examples/buffer_dlpack [path/to/vector_add.py]
#include <cstdio>
#include <vector>

#include <dlpack/dlpack.h>
#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : KILN_SHARED_DIR "/kernels/vector_add.py";
  try {
    kiln::Module module = kiln::Module::from_file(path);
    kiln::Kernel add = module.kernel("add_kernel");
    const kiln::Device device{kiln::Backend::cpu, 0};
    kiln::set_device(device);

    const int n = 3000;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.25f * i;
      y[i] = 1.0f;
    }
    // Buffers: allocate on the device, copy in, launch on tensor views, copy out.
    const std::size_t bytes = n * sizeof(float);
    kiln::Buffer bx = kiln::Buffer::allocate(device, bytes);
    kiln::Buffer by = kiln::Buffer::allocate(device, bytes);
    kiln::Buffer bout = kiln::Buffer::allocate(device, bytes);
    bx.copy_from_host(x.data(), bytes);
    by.copy_from_host(y.data(), bytes);
    add[{kiln::cdiv(n, 1024)}](bx.tensor(kiln::DType::f32, {n}), by.tensor(kiln::DType::f32, {n}),
                               bout.tensor(kiln::DType::f32, {n}), n, kiln::arg("BLOCK", 1024));
    kiln::synchronize(device);
    bout.copy_to_host(out.data(), bytes);
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += out[i] != x[i] + y[i];

    // DLPack: a DLTensor* is a pointer argument; kiln reads its device,
    // dtype and shape (so the CPU backend's debug checks know its size).
    int64_t shape[1] = {n};
    std::vector<float> dl_out(n, -1.0f);
    auto as_dl = [&](float *data) {
      DLTensor t{};
      t.data = data;
      t.device = {kDLCPU, 0};
      t.ndim = 1;
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shape;
      return t;
    };
    DLTensor tx = as_dl(x.data()), ty = as_dl(y.data()), tout = as_dl(dl_out.data());
    add[{kiln::cdiv(n, 1024)}](&tx, &ty, &tout, n, kiln::arg("BLOCK", 1024));
    for (int i = 0; i < n; ++i)
      wrong += dl_out[i] != x[i] + y[i];

    std::printf("%s: %d of %d elements wrong (Buffer, then DLPack)\n", wrong ? "FAIL" : "ok", wrong,
                2 * n);
    return wrong ? 1 : 0;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
