// kiln::Kernel: the public face of a JitFunction.
#include "kiln/kernel.hpp"

#include <cstring>

#include "kiln/error.hpp"
#include "runtime/jit_function.hpp"

namespace kiln {

const std::string &Kernel::name() const { return fn_->name(); }
const std::vector<KernelParam> &Kernel::params() const { return fn_->params(); }
const std::string &Kernel::cache_key() const { return fn_->cache_key(); }

LaunchResult Kernel::run(std::span<const Arg> args, Grid grid, Stream stream) const {
  runtime::JitFunction::LaunchSpec spec;
  spec.grid = grid;
  spec.stream = stream;
  return fn_->run(args, spec);
}

LaunchResult Kernel::run(std::span<const Arg> args, const GridFn &grid, Stream stream) const {
  runtime::JitFunction::LaunchSpec spec;
  spec.grid_fn = &grid;
  spec.stream = stream;
  return fn_->run(args, spec);
}

LaunchResult Kernel::warmup(std::span<const Arg> args) const {
  runtime::JitFunction::LaunchSpec spec;
  spec.warmup = true;
  return fn_->run(args, spec);
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
