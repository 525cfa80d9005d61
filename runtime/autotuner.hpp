// The autotuner of one jit function (the seed's Autotuner): on a launch with
// a tuning key it has not seen, it compiles every config at once, times each
// with do_bench, and remembers the fastest for that key; later launches
// with the key go straight to it.
//
// The tuning key is the values of the decorator's `key` parameters and the
// element types of every tensor argument, as Triton's. Choices persist in
// the disk cache (runtime/tuning_cache.hpp), per kernel source, configs,
// key and device, so another process takes them without benchmarking.
// Thread-safe: a hit takes a shared lock; two threads meeting a new key at
// once both tune, and the first result is kept.
#pragma once

#include <functional>
#include <map>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "compiler/frontend/decorators.hpp"
#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"

namespace kiln::runtime {

class Autotuner {
public:
  /// Launches the function with `args` (a tuning run, or a warmup compile).
  using Launch = std::function<LaunchResult(std::span<const Arg> args, bool warmup)>;

  /// `source_key`: the function's cache key (its source and the globals it
  /// reads), computed when first needed.
  Autotuner(const frontend::AutotuneInfo &info, const std::vector<KernelParam> &params,
            std::string kernel_name, std::function<std::string()> source_key);

  /// Whether launches tune (false: they take the first config), and why not.
  bool enabled() const { return why_not_.empty(); }
  const std::string &why_not() const { return why_not_; }

  /// The config for a launch whose parameters are `bound` (null where
  /// unbound), tuning first if its key is new.
  size_t choose(std::span<const Arg> args, const Arg *const *bound, const Launch &launch);

private:
  std::vector<uint64_t> tuning_key(const Arg *const *bound) const;
  size_t tune(std::span<const Arg> args, const Arg *const *bound, const Launch &launch,
              const std::string &key_text, std::vector<double> &ms);
  /// What names a tuning in the disk cache: source, configs, key, device.
  std::string tuning_identity(const std::vector<uint64_t> &key) const;

  const frontend::AutotuneInfo &info_;
  const std::vector<KernelParam> &params_;
  std::string name_;
  std::function<std::string()> source_key_;
  std::vector<std::string> config_texts_;
  std::string why_not_;
  std::vector<unsigned> key_params_;
  std::shared_mutex mutex_;
  std::map<std::vector<uint64_t>, size_t> best_;
};

} // namespace kiln::runtime
