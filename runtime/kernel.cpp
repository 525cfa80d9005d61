// kiln::Kernel: the public face of a JitFunction.
#include "kiln/kernel.hpp"

#include <cstring>
#include <deque>

#include <nlohmann/json.hpp>

#include "kiln/error.hpp"
#include "runtime/autotune_spec.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/module_state.hpp"
#include "runtime/spec_args.hpp"

namespace kiln {

const std::string &Kernel::name() const { return fn_->name(); }
const std::vector<KernelParam> &Kernel::params() const { return fn_->params(); }
const std::string &Kernel::cache_key() const { return fn_->cache_key(); }

std::optional<AutotuneSpec> Kernel::autotune() const {
  const frontend::AutotuneInfo *tune = fn_->autotune_info();
  if (!tune)
    return std::nullopt;
  return runtime::public_spec(*tune);
}

void Kernel::autotune(const AutotuneSpec &spec) const {
  fn_->set_autotune(spec);
}

void Kernel::set_autotune_callbacks(AutotuneCallbacks callbacks) const {
  fn_->set_autotune_callbacks(std::move(callbacks));
}

std::vector<std::string> Kernel::heuristics() const {
  std::vector<std::string> names;
  for (const frontend::Heuristic &h : fn_->info().heuristics)
    names.push_back(h.name);
  return names;
}

void Kernel::set_launch_metadata(std::function<std::string(const LaunchEvent &)> fn) const {
  fn_->set_launch_metadata(std::move(fn));
}

LaunchResult Kernel::run(std::span<const Arg> args, Grid grid, Stream stream) const {
  runtime::JitFunction::LaunchSpec spec;
  spec.grid = grid;
  spec.stream = stream;
  LaunchResult r = fn_->run(args, spec);
  if (!r.owner)
    r.owner = fn_;
  return r;
}

LaunchResult Kernel::run(std::span<const Arg> args, const GridFn &grid, Stream stream) const {
  runtime::JitFunction::LaunchSpec spec;
  spec.grid_fn = &grid;
  spec.stream = stream;
  LaunchResult r = fn_->run(args, spec);
  if (!r.owner)
    r.owner = fn_;
  return r;
}

LaunchResult Kernel::warmup(std::span<const Arg> args) const {
  LaunchResult r = fn_->warmup(args).front();
  if (!r.owner)
    r.owner = fn_;
  return r;
}

std::vector<LaunchResult> Kernel::warmup_all(std::span<const Arg> args) const {
  std::vector<LaunchResult> rs = fn_->warmup(args);
  for (LaunchResult &r : rs)
    if (!r.owner)
      r.owner = fn_;
  return rs;
}

std::string Kernel::serialize_specialization_data(const LaunchResult &r) const {
  if (!r.kernel)
    throw ArgumentError(name() + ": serialize_specialization_data needs the result of a launch or warmup that compiled");
  // The compiled kernel keeps its specialization; find the entry that owns
  // it, on whichever device it was compiled for (a CUDA kernel's is not in
  // the CPU's cache).
  for (runtime::DeviceCache *dc : fn_->device_caches())
    for (const auto &k : dc->kernels.loaded())
      if (&k->compiled == r.kernel)
        return runtime::specialization_data(*fn_, k->specs, k->compiled.options, k->compiled.key).dump();
  throw ArgumentError(name() + ": that compiled kernel does not belong to this kernel, or the "
                               "memory cache evicted it (KILN_MEMORY_CACHE_MAX); launch or warm "
                               "it up again first");
}

LaunchResult Kernel::preload(std::string_view json) const {
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception &e) {
    throw ArgumentError(name() + ": preload data is not valid JSON: " + e.what());
  }
  if (!data.is_object() || !data.contains("args"))
    throw ArgumentError(name() + ": preload data must be an object with \"kernel\" and \"args\"");
  runtime::SpecStorage storage; // what the Args point into
  std::vector<Arg> args;
  try {
    const std::string kernel = data["kernel"].is_string() ? data["kernel"].get<std::string>() : std::string();
    if (kernel != name())
      throw ArgumentError("preload data was written for kernel '" + kernel + "', not for '" + name() + "'");
    args = runtime::args_from_specs(*fn_, data["args"], storage);
    runtime::append_option_args(data.value("options", nlohmann::json()), storage, args);
  } catch (const nlohmann::json::exception &e) {
    throw ArgumentError(name() + ": preload data has the wrong shape: " + e.what());
  }
  return warmup(args);
}

std::string Kernel::repr(const CompiledKernel &k) { return k.name + "[" + k.options.str() + "]" + k.specialization; }

void Kernel::add_pre_run_hook(std::function<void(const BoundArgs &)> hook) const {
  fn_->add_pre_run_hook(std::move(hook));
}

const char *binary_source_name(BinarySource s) {
  switch (s) {
  case BinarySource::compiled: return "compiled";
  case BinarySource::memory: return "memory";
  case BinarySource::disk: return "disk";
  case BinarySource::remote: return "remote";
  }
  return "?";
}

const Arg &BoundArgs::operator[](std::string_view name) const {
  for (size_t i = 0; i < params_.size() && i < values_.size(); ++i)
    if (params_[i].name == name)
      return values_[i];
  throw ArgumentError("the grid function asked for argument '" + std::string(name) + "', which the kernel does not have");
}

Arg::Arg(const Kernel &fn) : kind_(Kind::Function) { u_.fn = fn.impl().get(); }

} // namespace kiln
