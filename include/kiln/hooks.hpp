// Process-wide hooks, as Triton's knobs.runtime.*: observe or veto compiles,
// and bracket launches.
//
// Set hooks before launching from several threads: the hook table itself is
// not synchronized (as in Triton, where they are plain attributes). The hooks
// are called from the launching thread (or, for compiles finalized by an
// async scope, from the thread that finalizes) and may run concurrently.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "kiln/arg.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/grid.hpp"
#include "kiln/kernel.hpp"

namespace kiln {

/// What the jit hooks see about one compile request.
struct CompileEvent {
  std::string_view kernel;   ///< the function's name
  std::string_view key;      ///< hex compile key (names the binary in caches)
  std::string_view repr;     ///< "add_kernel[num_warps=4, ...](x_ptr: *fp32:D, ...)"
  std::string_view specialization_data; ///< JSON, as Kernel::serialize_specialization_data
  const CompiledKernel *compiled = nullptr; ///< null in jit_cache_hook (before compiling)
  bool warmup = false;       ///< the request came from warmup/preload, not a launch
  /// The kernel being compiled, valid during the call (copy it to keep it).
  const Kernel *handle = nullptr;
};

/// What the launch hooks see.
struct LaunchEvent {
  std::string_view kernel;
  const CompiledKernel *compiled = nullptr;
  Grid grid;
  std::span<const Arg> args; ///< bound arguments, in parameter order
  BinarySource source = BinarySource::memory;
  Device device;           ///< where it runs
  Stream stream = nullptr; ///< the stream it was given (null: the default)
  /// The kernel's launch_metadata callback (Kernel::set_launch_metadata),
  /// or null; launch_metadata() calls it.
  const std::function<std::string(const LaunchEvent &)> *metadata_fn = nullptr;
  /// The kernel launched, valid during the call (copy it to keep it): the
  /// seed's hooks get the JITFunction itself.
  const Kernel *handle = nullptr;

  /// The specialization launched: "(x_ptr: *fp32:D, n: i32, BLOCK: constexpr=1024)".
  std::string_view specialization() const {
    return compiled ? std::string_view(compiled->specialization) : std::string_view();
  }
  /// What the kernel's launch_metadata callback says about this launch
  /// (Triton's `launch_metadata=`, whose Python callable kiln cannot run),
  /// computed only when a hook asks, as the seed's lazy metadata is; empty
  /// when the kernel has none.
  std::string launch_metadata() const {
    return metadata_fn && *metadata_fn ? (*metadata_fn)(*this) : std::string();
  }
};

struct Hooks {
  /// Called before compiling a key that is not in memory; returning true
  /// skips the compile and the launch (the LaunchResult's kernel is null).
  std::function<bool(const CompileEvent &)> jit_cache_hook;
  /// Called once per compiled key, after it is published.
  std::function<void(const CompileEvent &)> jit_post_compile_hook;
  std::function<void(const LaunchEvent &)> launch_enter_hook;
  std::function<void(const LaunchEvent &)> launch_exit_hook;
};

/// The process's hooks.
Hooks &hooks();

} // namespace kiln
