// The autotuning data a kernel file declares with `@triton.autotune` and
// `@triton.heuristics`, as kiln read it from the file (without running
// Python). Immutable; safe to read from any number of threads.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln {

/// One `triton.Config({...}, num_warps=..., num_stages=...)`.
struct Config {
  /// Meta-parameter values by name, in the order written. A value kiln
  /// cannot pass as an argument (a string) is left out of `meta` and named
  /// in `unsupported`.
  std::vector<std::pair<std::string, Arg>> meta;
  std::vector<std::string> unsupported;
  std::optional<int> num_warps, num_stages, num_ctas, maxnreg;
  bool has_pre_hook = false; ///< a Python pre_hook, which kiln does not run
};

/// `@triton.autotune(configs=[...], key=[...], ...)`.
struct AutotuneSpec {
  std::vector<Config> configs;
  std::vector<std::string> key;
  std::vector<std::string> reset_to_zero;
  std::vector<std::string> restore_value;
  std::optional<int> warmup_ms, rep_ms;
  /// Arguments that are Python callables (prune_configs_by, pre_hook, ...).
  std::vector<std::string> callables;
  /// Why the configs could not be read (built by host code kiln does not
  /// run); "" when `configs` holds them.
  std::string error;
};

} // namespace kiln
