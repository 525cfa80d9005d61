// The autotuner of one jit function (the seed's Autotuner): on a launch with
// a tuning key it has not seen, it compiles every config at once (those the
// C++ pruning callbacks keep), times each with do_bench, and remembers the
// fastest for that key; later launches with the key go straight to it.
//
// The tuning key is the values of the decorator's `key` parameters and the
// element types of every tensor argument, as Triton's. Choices persist in
// the tuning cache (runtime/tuning_cache.hpp: disk, then the remote cache),
// per kernel source, configs, key and device, so another process takes them
// without benchmarking, and a warmup compiles the stored choice only.
// Thread-safe: a hit is a lock-free, allocation-free look-up
// (runtime/choice_table.hpp); two threads meeting a new key at once both
// tune, and the first result is kept.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/frontend/decorators.hpp"
#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"
#include "runtime/choice_table.hpp"

namespace kiln::runtime {

class TuningCache;

class Autotuner {
public:
  /// Launches the function with `args` (a tuning run, or a warmup compile).
  using Launch = std::function<LaunchResult(std::span<const Arg> args, bool warmup)>;

  /// `source_key`: the function's cache key (its source and the globals it
  /// reads), computed when first needed. `callbacks` belong to the function
  /// and outlive this.
  Autotuner(const frontend::AutotuneInfo &info, const std::vector<KernelParam> &params,
            std::string kernel_name, std::function<std::string()> source_key,
            const AutotuneCallbacks &callbacks);

  /// Whether launches tune (false: they take the first config), and why not.
  bool enabled() const { return why_not_.empty(); }
  const std::string &why_not() const { return why_not_; }

  /// The config for a launch whose parameters are `bound` (null where
  /// unbound), tuning first if its key is new.
  size_t choose(std::span<const Arg> args, const Arg *const *bound, const Launch &launch);
  /// The choice known for the key of `bound`, from this process or the
  /// tuning cache, without tuning (a warmup's question).
  std::optional<size_t> stored(const Arg *const *bound);
  /// The configs worth compiling for `bound`: all, or those the pruning
  /// callbacks keep, in order. Throws ArgumentError when they keep none.
  std::vector<size_t> candidates(const Arg *const *bound) const;
  /// A launch's arguments with config `c`'s values for what they leave unset.
  std::vector<Arg> config_args(std::span<const Arg> args, size_t c) const;

private:
  void tuning_key(const Arg *const *bound, TuningKey &key) const;
  std::string key_text(const Arg *const *bound) const;
  /// The tuning cache of this process's knobs (disk, then remote levels).
  static TuningCache tuning_cache();
  /// Compiles and times the configs `timed`; `ms` gets every config's time.
  size_t tune(std::span<const Arg> args, const Arg *const *bound, const Launch &launch,
              const std::string &key_text, const std::vector<size_t> &timed,
              std::vector<double> &ms);
  /// What names a tuning in the disk cache: source, configs, key, device.
  std::string tuning_identity(const TuningKey &key) const;
  /// Under KILN_PRINT_AUTOTUNING: the file's Python callables that no C++
  /// callback stands in for, which this tuning ignores.
  void note_ignored_callables() const;

  const frontend::AutotuneInfo &info_;
  const std::vector<KernelParam> &params_;
  std::string name_;
  std::function<std::string()> source_key_;
  const AutotuneCallbacks &callbacks_;
  std::vector<std::string> config_texts_;
  std::vector<Config> public_configs_; ///< what the pruning callbacks see
  std::string why_not_;
  std::vector<unsigned> key_params_;
  ChoiceTable best_;
};

} // namespace kiln::runtime
