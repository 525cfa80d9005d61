// The smallest host program: load a kernel file, launch add_kernel on the
// default device (the CPU unless KILN_BACKEND says otherwise), check x + y.
//
//   build/examples/vector_add [path/to/vector_add.py]
#include <cstdio>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : KILN_SHARED_DIR "/kernels/vector_add.py";
  try {
    kiln::Module module = kiln::Module::from_file(path);
    kiln::Kernel add = module.kernel("add_kernel");

    const int n = 10007;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.5f * i;
      y[i] = 2.0f * i;
    }
    kiln::LaunchResult r =
        add[{kiln::cdiv(n, 1024)}](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 1024));

    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += out[i] != x[i] + y[i];
    std::printf("%s%s: %s in %.1f ms\n", r.kernel->name.c_str(), r.kernel->specialization.c_str(),
                kiln::binary_source_name(r.source), r.kernel->total_ms());
    std::printf("%s: %d of %d elements wrong\n", wrong ? "FAIL" : "ok", wrong, n);
    return wrong ? 1 : 0;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
