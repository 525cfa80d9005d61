// The scoped async compile mode: inside an AsyncCompileMode, warmup() hands
// each compile to a thread pool and returns at once, so a program starts
// many compiles together and blocks only where it launches.
//
//   build/examples/async_scope [path/to/vector_add.py]
#include <cstdio>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : KILN_SHARED_DIR "/kernels/vector_add.py";
  try {
    kiln::Module module = kiln::Module::from_file(path);
    kiln::Kernel add = module.kernel("add_kernel");
    kiln::Kernel axpy = module.kernel("axpy_kernel");

    const int n = 4099;
    std::vector<float> x(n), y(n), out(n);
    for (int i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 1.0f;
    }
    const auto f32 = kiln::Arg::mock(kiln::DType::f32); // a pointer to warm up with
    {
      kiln::AsyncCompileMode mode;
      // Each returns at once with a future; the compiles run side by side.
      std::vector<kiln::LaunchResult> pending;
      for (int block : {256, 512, 1024}) {
        pending.push_back(add.warmup_with(f32, f32, f32, n, kiln::arg("BLOCK", block)));
        pending.push_back(axpy.warmup_with(2.0f, f32, f32, n, kiln::arg("BLOCK", block)));
      }
      std::printf("%zu compiles submitted, %zu outstanding\n", pending.size(), mode.outstanding());
      // This launch waits for add[BLOCK=1024]'s own compile only.
      add[{kiln::cdiv(n, 1024)}](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 1024));
    } // leaving the scope finalizes the rest (and throws if one failed)

    // Every specialization is in memory now: this launch compiles nothing.
    kiln::LaunchResult r =
        axpy[{kiln::cdiv(n, 256)}](2.0f, x.data(), out.data(), n, kiln::arg("BLOCK", 256));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += out[i] != 2.0f * x[i] + (x[i] + y[i]);
    std::printf("axpy after the scope: %s\n", kiln::binary_source_name(r.source));
    std::printf("%s: %d of %d elements wrong\n", wrong ? "FAIL" : "ok", wrong, n);
    return wrong || r.source == kiln::BinarySource::compiled ? 1 : 0;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
