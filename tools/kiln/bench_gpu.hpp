// The cuda-only figures of `kiln bench` (what the kiln_bench_gpu program
// measured, in the one harness): kernel throughput of the shared kernels,
// compiles in a process that has compiled before, and a raw cuLaunchKernel
// loop to set kiln's launch beside.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/buffer.hpp"
#include "kiln/kernel.hpp"

namespace kiln::cli {

/// Median seconds of one launch over `rounds` rounds of `per_round`
/// launches, each round ended by a synchronize of cuda:0; one untimed
/// launch first (it compiles). per_round 1 is Triton's do-bench style (each
/// launch synchronized), as bench/triton_anchor.py times its anchors.
template <class F> double time_launches(F &&launch, int rounds = 7, int per_round = 10) {
  using Clock = std::chrono::steady_clock;
  const Device gpu{Backend::cuda, 0};
  launch();
  synchronize(gpu);
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const auto s = Clock::now();
    for (int i = 0; i < per_round; ++i)
      launch();
    synchronize(gpu);
    t.push_back(std::chrono::duration<double>(Clock::now() - s).count() / per_round);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Host µs per cuLaunchKernel of `empty`'s binary (compiled for grid 1 with
/// the pointer `p` and n), called straight on the driver: the floor under
/// kiln's launch. Median of rounds.
double raw_launch_us(const LaunchResult &compiled, void *p, int32_t n);

/// The throughput section on cuda. Compiles in a process that has compiled
/// before (ms): add_kernel from source again, softmax at BLOCK 4096 and then
/// at 2048, each with its compiler stages under "stages_ms". Bandwidth (GB/s,
/// each launch synchronized, median of 20, as Triton's anchors are timed):
/// vector add 2^28 fp32, softmax 16384x4096 fp32, layernorm forward
/// 8192x4096 fp16, column sum 8192x8192 fp32. matmul 4096^3 fp16 at
/// 128x128x32 and 128x256x64 (TFLOP/s, median of 7 rounds of 10). A result
/// that is wrong is an error, not a fast figure. Numbers come rounded.
nlohmann::ordered_json bench_throughput(const std::string &shared);

} // namespace kiln::cli
