// kiln_bench_cache: one fresh process's look-up of vector_add's add_kernel
// through the caches its environment names (KILN_CACHE_DIR, KILN_REDIS_URL,
// ...). Another kernel is loaded first, untimed, so the figure is the
// per-kernel cost, not the runtime's one-time set-up. Prints
// "<source> <ms of the warmup() call>". bench/cache_bench runs it against a
// disk cache, a loopback redis-server, and a Redis that stalls.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

int main(int argc, char **argv) {
  // "first": no kernel goes first, so the timed look-up is the process's first
  // (with a stalled Redis, the one that pays the request deadline).
  const bool first = argc > 1 && std::string(argv[1]) == "first";
  try {
    const std::string file = std::string(KILN_SHARED_DIR) + "/kernels/vector_add.py";
    const kiln::Module m = kiln::Module::from_file(file);
    if (!first)
      m.kernel("empty_kernel")
          .warmup(std::vector<kiln::Arg>{kiln::arg("x_ptr", kiln::Arg::mock(kiln::DType::f32)),
                                         kiln::arg("n", 16), kiln::arg("BLOCK", 16)});
    const kiln::Kernel add = m.kernel("add_kernel");
    const std::vector<kiln::Arg> args = {kiln::arg("x_ptr", kiln::Arg::mock(kiln::DType::f32)),
                                         kiln::arg("y_ptr", kiln::Arg::mock(kiln::DType::f32)),
                                         kiln::arg("out_ptr", kiln::Arg::mock(kiln::DType::f32)),
                                         kiln::arg("n", 100000), kiln::arg("BLOCK", 1024)};
    const auto t0 = std::chrono::steady_clock::now();
    const kiln::LaunchResult r = add.warmup(args);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s %.3f\n", kiln::binary_source_name(r.source), ms);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln_bench_cache: %s\n", e.what());
    return 1;
  }
}
