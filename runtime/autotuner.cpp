#include "runtime/autotuner.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <iostream>
#include <limits>
#include <mutex>
#include <sstream>

#include <tbb/parallel_for.h>

#include "kiln/bench.hpp"
#include "kiln/error.hpp"
#include "runtime/autotune_spec.hpp"
#include "runtime/context.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/tuning_buffers.hpp"
#include "runtime/tuning_cache.hpp"

namespace kiln::runtime {

namespace {

uint64_t arg_word(const Arg &a) {
  switch (a.kind()) {
  case Arg::Kind::Int: return static_cast<uint64_t>(a.as_int());
  case Arg::Kind::UInt: return a.as_uint();
  case Arg::Kind::Float: return std::bit_cast<uint64_t>(a.as_float());
  case Arg::Kind::Bool: return a.as_bool();
  case Arg::Kind::Pointer:
  case Arg::Kind::DType: return static_cast<uint64_t>(a.dtype());
  case Arg::Kind::Str: return string_word(a.as_str());
  case Arg::Kind::Function: return reinterpret_cast<uintptr_t>(a.as_function());
  case Arg::Kind::Tuple: {
    uint64_t h = a.as_tuple().size();
    for (const Arg &e : a.as_tuple())
      h = h * 0x100000001b3ull ^ arg_word(e);
    return h;
  }
  case Arg::Kind::None: return 0;
  }
  return 0;
}

std::string arg_text(const Arg &a) {
  switch (a.kind()) {
  case Arg::Kind::Int: return std::to_string(a.as_int());
  case Arg::Kind::UInt: return std::to_string(a.as_uint());
  case Arg::Kind::Float: return std::to_string(a.as_float());
  case Arg::Kind::Bool: return a.as_bool() ? "True" : "False";
  case Arg::Kind::Str: return std::string("'") + a.as_str() + "'";
  default: return "?";
  }
}

std::string config_text(const frontend::AutotuneConfig &c) {
  std::ostringstream s;
  const char *sep = "";
  for (const auto &[name, value] : c.kwargs) {
    s << sep << name << "=" << value.repr();
    sep = ", ";
  }
  if (c.num_warps)
    s << sep << "num_warps=" << *c.num_warps, sep = ", ";
  if (c.num_stages)
    s << sep << "num_stages=" << *c.num_stages;
  return s.str();
}

/// The launch's arguments by parameter, None where unbound, for callbacks.
struct BoundValues {
  Arg values[kMaxParams];
  BoundValues(const Arg *const *bound, size_t n) {
    for (size_t i = 0; i < n; ++i)
      values[i] = bound[i] ? *bound[i] : Arg();
  }
};

} // namespace

Autotuner::Autotuner(const frontend::AutotuneInfo &info, const std::vector<KernelParam> &params,
                     std::string kernel_name, std::function<std::string()> source_key,
                     const AutotuneCallbacks &callbacks)
    : info_(info), params_(params), name_(std::move(kernel_name)),
      source_key_(std::move(source_key)), callbacks_(callbacks) {
  for (const frontend::AutotuneConfig &c : info.configs) {
    config_texts_.push_back(config_text(c));
    public_configs_.push_back(public_config(c));
  }
  // Each once: a TuningKey has room for one word per parameter.
  for (const std::string &k : info.key)
    for (const KernelParam &p : params)
      if (p.name == k &&
          std::find(key_params_.begin(), key_params_.end(), p.index) == key_params_.end())
        key_params_.push_back(p.index);
  if (info.configs.size() < 2)
    why_not_ = "it has one config";
}

void Autotuner::tuning_key(const Arg *const *bound, TuningKey &key) const {
  key.size = 0;
  for (unsigned i : key_params_) // at most one per parameter, as the pointers below
    key.words[key.size++] = bound[i] ? arg_word(*bound[i]) : ~uint64_t{0};
  for (size_t i = 0; i < params_.size(); ++i)
    if (bound[i] && bound[i]->kind() == Arg::Kind::Pointer)
      key.words[key.size++] = static_cast<uint64_t>(bound[i]->dtype()) | uint64_t{1} << 32;
}

std::string Autotuner::key_text(const Arg *const *bound) const {
  std::string text;
  for (unsigned i : key_params_)
    text +=
        (text.empty() ? "" : ", ") + params_[i].name + "=" + (bound[i] ? arg_text(*bound[i]) : "?");
  return text;
}

TuningCache Autotuner::tuning_cache() {
  const Knobs &knobs = Context::get().knobs();
  if (knobs.no_cache)
    return TuningCache("");
  return TuningCache(knobs.cache_dir, Context::get().cache_levels(), &Context::get().writer());
}

std::optional<size_t> Autotuner::stored(const Arg *const *bound) {
  if (!enabled())
    return std::nullopt;
  TuningKey key;
  tuning_key(bound, key);
  if (const std::optional<size_t> known = best_.find(key))
    return known;
  const std::optional<TuningCache::Hit> hit =
      tuning_cache().get(TuningCache::id(tuning_identity(key)), config_texts_);
  if (!hit)
    return std::nullopt;
  if (Context::get().knobs().print_autotuning)
    std::cerr << "kiln autotune: " << name_ << " [" << key_text(bound) << "] from the "
              << (hit->remote ? "remote " : "") << "tuning cache: " << config_texts_[hit->config]
              << "\n";
  return best_.insert(key, hit->config);
}

size_t Autotuner::choose(std::span<const Arg> args, const Arg *const *bound, const Launch &launch) {
  if (!enabled())
    return 0;
  TuningKey key;
  tuning_key(bound, key);
  if (const std::optional<size_t> known = best_.find(key)) [[likely]]
    return *known;
  const std::string text = key_text(bound);
  const Knobs &knobs = Context::get().knobs();
  const TuningCache cache = tuning_cache();
  const std::string id = TuningCache::id(tuning_identity(key));
  std::optional<size_t> best;
  if (const std::optional<TuningCache::Hit> hit = cache.get(id, config_texts_)) {
    best = hit->config;
    if (knobs.print_autotuning)
      std::cerr << "kiln autotune: " << name_ << " [" << text << "] from the "
                << (hit->remote ? "remote " : "") << "tuning cache: " << config_texts_[*best]
                << "\n";
  }
  if (!best) {
    TuningRecord record;
    // The pruning callbacks' errors are the caller's: not caught below.
    const std::vector<size_t> timed = candidates(bound);
    try {
      best = tune(args, bound, launch, text, timed, record.ms);
      record.config = *best;
      record.config_text = config_texts_[*best];
      record.key_text = text;
      cache.put(id, name_, record);
    } catch (const ArgumentError &e) {
      // A reset_to_zero/restore_value buffer of unknown size: timing runs
      // would corrupt it, so this key keeps the first config (still correct).
      if (knobs.print_autotuning)
        std::cerr << "kiln autotune: " << name_ << " [" << text << "] not tuned: " << e.what()
                  << "; using the first config\n";
      best = 0;
    }
  }
  return best_.insert(key, *best);
}

std::string Autotuner::tuning_identity(const TuningKey &key) const {
  std::ostringstream s;
  s << "kiln tuning 1\n" << name_ << "\n" << source_key_() << "\n";
  for (const std::string &c : config_texts_)
    s << c << "\n";
  s << "key:";
  for (unsigned i = 0; i < key.size; ++i)
    s << " " << std::hex << key.words[i];
  const Device d = current_device();
  s << "\ndevice: " << Context::get().driver(d.backend).target(d.index).str() << "\n";
  return s.str();
}

std::vector<size_t> Autotuner::candidates(const Arg *const *bound) const {
  const size_t n = info_.configs.size();
  std::vector<size_t> keep(n);
  for (size_t c = 0; c < n; ++c)
    keep[c] = c;
  if (!callbacks_.early_config_prune && !callbacks_.perf_model)
    return keep;
  const BoundValues v(bound, params_.size());
  const BoundArgs args(params_, std::span<const Arg>(v.values, params_.size()));
  if (callbacks_.early_config_prune) {
    keep = callbacks_.early_config_prune(public_configs_, args);
    std::vector<bool> seen(n);
    for (size_t c : keep) {
      if (c >= n)
        throw ArgumentError(name_ + ": early_config_prune kept config " + std::to_string(c) +
                            ", but there are only " + std::to_string(n));
      if (seen[c])
        throw ArgumentError(name_ + ": early_config_prune kept config " + std::to_string(c) +
                            " twice");
      seen[c] = true;
    }
    if (keep.empty())
      throw ArgumentError(name_ + ": early_config_prune kept no config for these arguments");
  }
  if (callbacks_.perf_model && keep.size() > callbacks_.top_k && callbacks_.top_k > 0) {
    std::vector<std::pair<double, size_t>> est;
    for (size_t c : keep)
      est.emplace_back(callbacks_.perf_model(public_configs_[c], args), c);
    std::stable_sort(est.begin(), est.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    keep.clear();
    for (size_t i = 0; i < callbacks_.top_k; ++i)
      keep.push_back(est[i].second);
  }
  return keep;
}

std::vector<Arg> Autotuner::config_args(std::span<const Arg> args, size_t c) const {
  const frontend::AutotuneConfig &cfg = info_.configs[c];
  std::vector<Arg> a(args.begin(), args.end());
  for (const auto &[name, value] : cfg.kwargs) {
    if (named_arg(args, name.c_str()))
      continue;
    std::optional<Arg> v = arg_from_const(value);
    if (!v)
      throw ArgumentError(name_ + ": the autotune config's value of '" + name +
                          "' cannot be passed");
    a.push_back(arg(name.c_str(), *v));
  }
  if (cfg.num_warps && !named_arg(args, "num_warps"))
    a.push_back(arg("num_warps", *cfg.num_warps));
  if (cfg.num_stages && !named_arg(args, "num_stages"))
    a.push_back(arg("num_stages", *cfg.num_stages));
  return a;
}

void Autotuner::note_ignored_callables() const {
  if (!Context::get().knobs().print_autotuning)
    return;
  std::vector<std::string> ignored;
  for (const std::string &c : info_.callables) {
    const bool covered =
        (c == "pre_hook" && callbacks_.pre_hook) || (c == "post_hook" && callbacks_.post_hook) ||
        (c == "prune_configs_by" && (callbacks_.early_config_prune || callbacks_.perf_model)) ||
        (c == "perf_model" && callbacks_.perf_model);
    if (!covered)
      ignored.push_back(c);
  }
  if (!callbacks_.pre_hook && std::any_of(info_.configs.begin(), info_.configs.end(),
                                          [](const auto &c) { return c.has_pre_hook; }))
    ignored.push_back("triton.Config(pre_hook=...)");
  if (ignored.empty())
    return;
  std::string list;
  for (const std::string &c : ignored)
    list += (list.empty() ? "" : ", ") + c;
  std::cerr << "kiln autotune: " << name_ << ": note: the decorator's Python callables (" << list
            << ") are ignored; kiln takes them as C++ callbacks (Kernel::set_autotune_callbacks)\n";
}

size_t Autotuner::tune(std::span<const Arg> args, const Arg *const *bound, const Launch &launch,
                       const std::string &key_text, const std::vector<size_t> &timed,
                       std::vector<double> &ms) {
  note_ignored_callables();
  // Checked first: a buffer kiln cannot reset is an error before any compile.
  const TuningBuffers buffers(info_.reset_to_zero, info_.restore_value, params_, bound,
                              current_device(), name_);
  const size_t n = info_.configs.size();
  std::vector<std::vector<Arg>> config_args_of(n);
  for (size_t c : timed)
    config_args_of[c] = config_args(args, c);

  // Compile every candidate at once; a config that does not compile (too
  // many registers, too much shared memory) is skipped, as Triton skips it.
  std::vector<std::string> failed(n);
  for (size_t c = 0; c < n; ++c)
    if (std::find(timed.begin(), timed.end(), c) == timed.end())
      failed[c] = "pruned";
  const Device device = current_device(); // the pool's threads keep this thread's
  tbb::parallel_for(size_t{0}, timed.size(), [&](size_t i) {
    const runtime::Context::ThreadDevice on(device);
    const size_t c = timed[i];
    try {
      launch(config_args_of[c], /*warmup=*/true);
    } catch (const Error &e) {
      failed[c] = e.what();
    }
  });

  BenchOptions bench;
  bench.warmup_ms = info_.warmup ? static_cast<double>(*info_.warmup) : 25;
  bench.rep_ms = info_.rep ? static_cast<double>(*info_.rep) : 100;
  ms.assign(n, std::numeric_limits<double>::infinity());
  const auto start = std::chrono::steady_clock::now();
  for (size_t c : timed) {
    if (!failed[c].empty())
      continue;
    try {
      ms[c] = do_bench(
                  [&] {
                    buffers.before_run();
                    launch(config_args_of[c], false);
                    buffers.after_run();
                  },
                  current_device(), bench)
                  .median_ms;
    } catch (const Error &e) {
      failed[c] = e.what();
    }
  }
  size_t best = timed.front();
  for (size_t c : timed)
    if (ms[c] < ms[best])
      best = c;
  if (!failed[best].empty())
    throw RuntimeError(name_ +
                       ": no autotune config compiles; the first one failed with: " + failed[best]);
  buffers.before_run(); // the launch that follows starts from zeros, as after Triton's tuning

  if (Context::get().knobs().print_autotuning) {
    const double total =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::ostringstream out;
    out << "kiln autotune: " << name_ << " [" << key_text << "] tuned " << timed.size()
        << " configs";
    if (timed.size() < n)
      out << " (of " << n << "; the others pruned)";
    out << " in " << total << " ms; best: " << config_text(info_.configs[best]) << " (" << ms[best]
        << " ms)\n";
    for (size_t c = 0; c < n; ++c)
      out << "  " << config_text(info_.configs[c]) << ": "
          << (failed[c].empty()       ? std::to_string(ms[c]) + " ms"
              : failed[c] == "pruned" ? "pruned"
                                      : "failed: " + failed[c].substr(0, failed[c].find('\n')))
          << "\n";
    std::cerr << out.str();
  }
  return best;
}

} // namespace kiln::runtime
