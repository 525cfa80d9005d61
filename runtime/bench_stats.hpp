// The statistics kiln::do_bench reports over its repetitions' times, shared
// by the host-clock and the CUDA-event paths.
#pragma once

#include <vector>

#include "kiln/bench.hpp"

namespace kiln::runtime {

/// Mean, median, min, max and the asked-for quantiles (numpy's linear
/// interpolation) of `times_ms` (not empty).
BenchResult bench_stats(std::vector<double> times_ms, const BenchOptions &o);

} // namespace kiln::runtime
