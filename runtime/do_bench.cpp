#include "kiln/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "kiln/buffer.hpp"
#include "runtime/bench_stats.hpp"
#include "runtime/cuda_timing.hpp"

namespace kiln {

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

/// Linear interpolation between the nearest ranks, as numpy.quantile does.
double quantile(const std::vector<double> &sorted, double q) {
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

} // namespace

namespace runtime {

BenchResult bench_stats(std::vector<double> times, const BenchOptions &o) {
  BenchResult r;
  r.reps = static_cast<int>(times.size());
  r.mean_ms = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
  std::sort(times.begin(), times.end());
  r.min_ms = times.front();
  r.max_ms = times.back();
  r.median_ms = quantile(times, 0.5);
  for (double q : o.quantiles)
    r.quantiles_ms.push_back(quantile(times, q));
  return r;
}

} // namespace runtime

BenchResult do_bench(const std::function<void()> &fn, Device device, const BenchOptions &o) {
  if (device.backend == Backend::cuda)
    return runtime::do_bench_cuda(fn, device, o);
  // Estimate one run from five (the first may include a compile).
  fn();
  synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i)
    fn();
  synchronize(device);
  const double estimate = std::max(elapsed_ms(start) / 5, 1e-6);
  const int warmup = std::max(1, static_cast<int>(o.warmup_ms / estimate));
  const int reps = std::clamp(static_cast<int>(o.rep_ms / estimate), 1, std::max(1, o.max_reps));
  for (int i = 0; i < warmup; ++i)
    fn();
  synchronize(device);

  std::vector<double> times(static_cast<size_t>(reps));
  for (double &t : times) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    synchronize(device);
    t = elapsed_ms(t0);
  }
  return runtime::bench_stats(std::move(times), o);
}

} // namespace kiln
