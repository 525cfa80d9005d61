// Timing a function the way Triton's triton.testing.do_bench does: an
// estimate, warmup and repetitions sized by time budgets, statistics over
// the repetitions. Used by the autotuner and by `kiln bench`.
//
// On the CPU each repetition is timed on the host's steady clock. On a GPU,
// as Triton does, each is timed with CUDA events around the function alone,
// after a 256 MB write that flushes the L2 cache, so the times are the
// device's cold-cache kernel times without launch or synchronize latency.
// Safe to call from several threads at once (each call times only its own
// function; on a GPU, on the default stream, which they then share).
#pragma once

#include <functional>
#include <vector>

#include "kiln/device.hpp"

namespace kiln {

struct BenchOptions {
  double warmup_ms = 25; ///< time spent running `fn` before measuring (Triton's default)
  double rep_ms = 100;   ///< time spent measuring (Triton's default)
  /// Quantiles (0..1) to report, e.g. {0.5, 0.2, 0.8}.
  std::vector<double> quantiles;
  int max_reps = 1000; ///< at most this many measured repetitions
};

struct BenchResult {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> quantiles_ms; ///< in the order of BenchOptions::quantiles
  int reps = 0;
};

/// Times `fn` (which launches work on `device`). Exceptions from `fn` propagate.
BenchResult do_bench(const std::function<void()> &fn, Device device = current_device(), const BenchOptions &o = {});

} // namespace kiln
