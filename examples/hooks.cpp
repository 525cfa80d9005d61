// Process-wide hooks (kiln/hooks.hpp, Triton's knobs.runtime.*): see every
// compile, veto one, bracket launches; and a kernel's own pre-run hook.
//
//   build/examples/hooks [path/to/vector_add.py]
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : KILN_SHARED_DIR "/kernels/vector_add.py";
  try {
    std::atomic<int> compiles{0}, launches{0};
    kiln::Hooks &hooks = kiln::hooks();
    // Set hooks before launching from several threads: the table is not synchronized.
    hooks.jit_post_compile_hook = [&](const kiln::CompileEvent &e) {
      ++compiles;
      std::printf("compiled %s\n", std::string(e.repr).c_str());
    };
    // Returning true skips the compile and the launch: here, any empty_kernel.
    hooks.jit_cache_hook = [](const kiln::CompileEvent &e) { return e.kernel == "empty_kernel"; };
    hooks.launch_enter_hook = [&](const kiln::LaunchEvent &) { ++launches; };

    kiln::Module module = kiln::Module::from_file(path);
    kiln::Kernel add = module.kernel("add_kernel");
    int last_n = 0;
    add.add_pre_run_hook(
        [&](const kiln::BoundArgs &a) { last_n = static_cast<int>(a["n"].as_int()); });

    const int n = 1000;
    std::vector<float> x(n, 1.0f), y(n, 2.0f), out(n);
    for (int i = 0; i < 3; ++i) // one compile, three launches
      add[{kiln::cdiv(n, 256)}](x.data(), y.data(), out.data(), n, kiln::arg("BLOCK", 256));
    kiln::LaunchResult skipped =
        module.kernel("empty_kernel")[{1}](x.data(), n, kiln::arg("BLOCK", 16));

    bool ok = compiles == 1 && launches == 3 && last_n == n && skipped.kernel == nullptr &&
              out[n - 1] == 3.0f;
    std::printf("%d compile(s), %d launch(es), pre-run hook saw n=%d, empty_kernel %s\n",
                compiles.load(), launches.load(), last_n,
                skipped.kernel ? "ran" : "skipped by jit_cache_hook");
    std::printf("%s\n", ok ? "ok" : "FAIL");
    hooks = kiln::Hooks{};
    return ok ? 0 : 1;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
