// The autotuning data a kernel file declares with `@triton.autotune` and
// `@triton.heuristics`, as kiln read it from the file (without running
// Python). Immutable; safe to read from any number of threads.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln {

class BoundArgs;

/// One `triton.Config({...}, num_warps=..., num_stages=...)`.
struct Config {
  /// Meta-parameter values by name, in the order written. A value kiln
  /// cannot pass as an argument (a string) is left out of `meta` and named
  /// in `unsupported`.
  std::vector<std::pair<std::string, Arg>> meta{};
  std::vector<std::string> unsupported{};
  // Default member initializers: designated initializers may leave any out.
  std::optional<int> num_warps{}, num_stages{}, num_ctas{}, maxnreg{};
  bool has_pre_hook = false; ///< a Python pre_hook, which kiln does not run (see AutotuneCallbacks)
};

/// `@triton.autotune(configs=[...], key=[...], ...)`, or what
/// Kernel::autotune(spec) gives a kernel from C++.
struct AutotuneSpec {
  std::vector<Config> configs{};
  std::vector<std::string> key{};
  std::vector<std::string> reset_to_zero{};
  std::vector<std::string> restore_value{};
  std::optional<int> warmup_ms{}, rep_ms{};
  /// Arguments that are Python callables (prune_configs_by, pre_hook, ...).
  std::vector<std::string> callables{};
  /// Why the configs could not be read (built by host code kiln does not
  /// run); "" when `configs` holds them.
  std::string error{};
};

/// What Triton's autotuner takes as Python callables, as C++ callbacks
/// (Kernel::set_autotune_callbacks). A file's own `pre_hook=`,
/// `post_hook=`, `prune_configs_by=` (Python lambdas kiln cannot run) are
/// ignored, with a note under KILN_PRINT_AUTOTUNING, unless the matching
/// callback is set here. Callbacks run on the launching thread.
struct AutotuneCallbacks {
  /// Before each timing run and each launch of the autotuned kernel, with
  /// its bound arguments, the config's meta-parameters among them (Triton's
  /// pre_hook and Config.pre_hook: e.g. zero an output the kernel
  /// accumulates into). Runs after kiln's own reset_to_zero/restore_value.
  std::function<void(const BoundArgs &)> pre_hook;
  /// After each, with the launch's error (null when it succeeded): Triton's
  /// post_hook(args, exception).
  std::function<void(const BoundArgs &, std::exception_ptr)> post_hook;
  /// prune_configs_by's early_config_prune: given every config and the
  /// launch's arguments (a config's meta-parameters unset), the indices of
  /// the configs worth compiling and timing. Empty is an error.
  std::function<std::vector<std::size_t>(std::span<const Config>, const BoundArgs &)>
      early_config_prune;
  /// prune_configs_by's perf_model: a config's estimated time (any unit,
  /// lower is better); with it, only the `top_k` configs estimated fastest
  /// (after early_config_prune) are compiled and timed.
  std::function<double(const Config &, const BoundArgs &)> perf_model;
  std::size_t top_k = 10; ///< Triton's default
};

} // namespace kiln
