// The cuda-only figures of `kiln bench` (what bench/gpu_throughput.cpp and
// gpu_dot.cpp measure, in the one harness): kernel throughput of the shared
// kernels and a raw cuLaunchKernel loop to set kiln's launch beside.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kiln/kernel.hpp"

namespace kiln::cli {

/// Host µs per cuLaunchKernel of `empty`'s binary (compiled for grid 1 with
/// the pointer `p` and n), called straight on the driver: the floor under
/// kiln's launch. Median of rounds.
double raw_launch_us(const LaunchResult &compiled, void *p, int32_t n);

/// The throughput section: vector add 2^28 fp32, softmax 16384x4096 fp32,
/// layernorm forward 8192x4096 fp16, column sum 8192x8192 fp32 (GB/s), matmul
/// 4096^3 fp16 at 128x128x32 and 128x256x64 (TFLOP/s), and the compile of
/// softmax at BLOCK 4096 in a process that has compiled before (ms). A result
/// that is wrong is an error, not a fast figure.
nlohmann::ordered_json bench_throughput(const std::string &shared);

} // namespace kiln::cli
