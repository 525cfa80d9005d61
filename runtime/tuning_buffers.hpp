// The buffers an autotuned kernel names in reset_to_zero and restore_value:
// between timing runs the first are zeroed (before each run) and the second
// put back as they were before tuning (after each run), so a kernel that
// accumulates (atomics, split-K) or updates in place times every config on
// the same inputs and leaves the user's data as Triton's autotuner does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/device.hpp"
#include "kiln/kernel.hpp"

namespace kiln::runtime {

class TuningBuffers {
public:
  /// `bound[i]`: the launch's argument of parameter i (null: unbound).
  /// Throws ArgumentError naming a buffer that is not a tensor of known size.
  TuningBuffers(const std::vector<std::string> &reset_to_zero,
                const std::vector<std::string> &restore_value,
                const std::vector<KernelParam> &params, const Arg *const *bound, Device device,
                const std::string &kernel);

  bool empty() const { return zero_.empty() && restore_.empty(); }
  /// Before a run: zeroes the reset_to_zero buffers.
  void before_run() const;
  /// After a run: puts the restore_value buffers back.
  void after_run() const;

private:
  struct Region {
    void *data;
    std::size_t bytes;
    std::vector<uint8_t> saved; ///< restore_value: the contents before tuning
  };
  Device device_;
  std::vector<Region> zero_, restore_;
  std::vector<uint8_t> zeros_; ///< host zeros, for devices without a memset here
};

} // namespace kiln::runtime
