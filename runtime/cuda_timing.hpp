// do_bench's GPU path: each repetition timed with CUDA events around the
// function alone, after a write of 256 MB that evicts the H200's 50 MB L2,
// as triton.testing.do_bench does, so configs are compared cold-cache and
// without the launch and synchronize latency the host clock would add.
#pragma once

#include <functional>

#include "kiln/bench.hpp"
#include "kiln/device.hpp"

namespace kiln::runtime {

/// `device` is a cuda device. Throws RuntimeError for driver failures.
BenchResult do_bench_cuda(const std::function<void()> &fn, Device device, const BenchOptions &o);

} // namespace kiln::runtime
