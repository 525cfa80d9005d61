// A jit function of a module: the thing a host program launches.
//
//   kiln::Module m = kiln::Module::from_file("vector_add.py");
//   kiln::Kernel add = m.kernel("add_kernel");
//   add[{kiln::cdiv(n, 1024)}](x, y, out, n, kiln::arg("BLOCK", 1024));
//
// Mirrors Triton's JITFunction: positional arguments bind in order, named
// ones (kiln::arg) by parameter name or as launch options (num_warps, ...).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/async.hpp"
#include "kiln/autotune.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/device.hpp"
#include "kiln/grid.hpp"

namespace kiln {

namespace runtime {
class JitFunction;
}
struct LaunchEvent;

/// Where the binary of a launch came from.
enum class BinarySource : uint8_t { compiled, memory, disk, remote };
const char *binary_source_name(BinarySource s);

struct LaunchResult {
  /// Null when a jit_cache_hook skipped the compile, or when a warmup in an
  /// AsyncCompileMode left it compiling (then `future` is valid).
  const CompiledKernel *kernel = nullptr;
  BinarySource source = BinarySource::memory;
  FutureKernel future;
  /// Keeps `kernel` valid for as long as this result lives, even when the
  /// Module and Kernel it came from were temporaries
  /// (`kiln::Module::from_string(src).kernel("k")[{1}](x)`) or a bounded
  /// memory cache (KILN_MEMORY_CACHE_MAX) has evicted it since.
  std::shared_ptr<const void> owner = nullptr;
};

/// A parameter of a jit function, as declared.
struct KernelParam {
  std::string name;
  unsigned index = 0;
  std::string annotation; ///< as written: "tl.constexpr", "tl.int64", "" if none
  bool is_constexpr = false;
  bool is_const = false;
  bool do_not_specialize = false;
  bool do_not_specialize_on_alignment = false;
  bool has_default = false;
};

/// A handle to a jit function; copies share it. Launching, warmup and every
/// accessor are safe from any number of threads at once.
class Kernel {
public:
  class Launcher;

  const std::string &name() const;
  const std::vector<KernelParam> &params() const;
  /// Hex SHA-256 over the source, callees, first line and constexpr globals.
  const std::string &cache_key() const;
  /// The `@triton.autotune` data (or what autotune(spec) set), or nullopt
  /// when the kernel has none. A launch that leaves a config's
  /// meta-parameters unset tunes on a new key (every config compiled at
  /// once, each timed with do_bench, the fastest kept for the key and
  /// stored in the tuning cache; KILN_PRINT_AUTOTUNING=1 prints them), or
  /// takes the first config where kiln cannot tune (reset_to_zero/
  /// restore_value buffers of unknown size). Explicit arguments always win.
  std::optional<AutotuneSpec> autotune() const;
  /// Autotunes this kernel over `spec`'s configs, key, reset_to_zero,
  /// restore_value, warmup_ms and rep_ms, as `@triton.autotune` would (in
  /// place of the decorator's, if it has one):
  ///   k.autotune({.configs = {{.meta = {{"BLOCK", 64}}, .num_warps = 2},
  ///                           {.meta = {{"BLOCK", 128}}, .num_warps = 4}},
  ///               .key = {"n"}});
  /// Throws ArgumentError for no configs or a name that is not a parameter.
  /// Not synchronized with launches: call it before launching.
  void autotune(const AutotuneSpec &spec) const;
  /// Triton's Python callables of `@triton.autotune` (pre_hook, post_hook,
  /// prune_configs_by) as C++ callbacks. Not synchronized with launches.
  void set_autotune_callbacks(AutotuneCallbacks callbacks) const;
  /// The names `@triton.heuristics` computes at each launch, in order.
  std::vector<std::string> heuristics() const;

  /// `kernel[grid](args...)`: binds, specializes, compiles or hits a cache, launches.
  Launcher operator[](Grid grid) const;
  /// A grid computed from the bound arguments (any callable taking BoundArgs).
  template <class F>
    requires std::is_invocable_r_v<Grid, F, const BoundArgs &>
  Launcher operator[](F grid) const;

  LaunchResult run(std::span<const Arg> args, Grid grid, Stream stream = nullptr) const;
  LaunchResult run(std::span<const Arg> args, const GridFn &grid, Stream stream = nullptr) const;
  /// Compiles (or finds) the binary for these arguments without launching.
  /// Pointer arguments may be Arg::mock(dtype). An autotuned kernel whose
  /// meta-parameters are left to tuning compiles the choice stored for the
  /// arguments' tuning key (the tuning cache: `kiln tune`, or an earlier
  /// process), or every config when none is stored, as Triton's warmup
  /// does; this returns the first, warmup_all every one.
  LaunchResult warmup(std::span<const Arg> args) const;
  std::vector<LaunchResult> warmup_all(std::span<const Arg> args) const;
  template <class... A> LaunchResult warmup_with(A &&...args) const {
    const std::array<Arg, sizeof...(A)> packed{Arg(std::forward<A>(args))...};
    return warmup(packed);
  }

  /// The compile request behind `r` as JSON (the seed's
  /// serialize_specialization_data); also a valid `kiln warmup` line.
  std::string serialize_specialization_data(const LaunchResult &r) const;
  /// Compiles what serialize_specialization_data wrote. Throws ArgumentError
  /// for data written for another kernel name or malformed JSON.
  LaunchResult preload(std::string_view json) const;
  /// "name[num_warps=4, num_ctas=1, num_stages=3, enable_fp_fusion=true](x_ptr: *fp32:D, ...)".
  static std::string repr(const CompiledKernel &k);

  /// Called with the bound arguments first thing in every launch of this
  /// kernel, as the seed's pre_run_hooks: before the compile, for warmups and
  /// empty grids too (mock pointers then). Not synchronized with concurrent
  /// launches: add hooks first.
  void add_pre_run_hook(std::function<void(const BoundArgs &)> hook) const;

  /// Triton's `launch_metadata=` as a C++ callback (the decorator's Python
  /// callable cannot run in kiln): the launch hooks read what it returns
  /// through LaunchEvent::launch_metadata(), e.g. a name with the sizes for a
  /// profiler. Called only when a launch hook asks. Not synchronized with
  /// launches: set it first.
  void set_launch_metadata(std::function<std::string(const LaunchEvent &)> fn) const;

  const std::shared_ptr<runtime::JitFunction> &impl() const { return fn_; }
  explicit Kernel(std::shared_ptr<runtime::JitFunction> fn) : fn_(std::move(fn)) {}

private:
  std::shared_ptr<runtime::JitFunction> fn_;
};

class Kernel::Launcher {
public:
  // Holds a copy of the handle (shared ownership), so a Launcher outlives
  // the Kernel it came from: `auto L = m.kernel("k")[{1}]; L(x);`.
  Launcher(const Kernel &k, Grid g) : kernel_(k), grid_(g) {}
  Launcher(const Kernel &k, GridFn g) : kernel_(k), grid_fn_(std::move(g)) {}

  Launcher &on(Stream s) {
    stream_ = s;
    return *this;
  }

  template <class... A> LaunchResult operator()(A &&...args) const {
    const std::array<Arg, sizeof...(A)> packed{Arg(std::forward<A>(args))...};
    if (grid_fn_)
      return kernel_.run(packed, grid_fn_, stream_);
    return kernel_.run(packed, grid_, stream_);
  }

private:
  Kernel kernel_;
  Grid grid_;
  GridFn grid_fn_;
  Stream stream_ = nullptr;
};

inline Kernel::Launcher Kernel::operator[](Grid grid) const { return Launcher(*this, grid); }
template <class F>
  requires std::is_invocable_r_v<Grid, F, const BoundArgs &>
Kernel::Launcher Kernel::operator[](F grid) const {
  return Launcher(*this, GridFn(std::move(grid)));
}


/// The bound arguments of a launch, for grid functions and hooks.
class BoundArgs {
public:
  BoundArgs(const std::vector<KernelParam> &params, std::span<const Arg> values,
            const Kernel *handle = nullptr)
      : params_(params), values_(values), handle_(handle) {}
  /// The value bound to parameter `name`; throws ArgumentError if there is none.
  const Arg &operator[](std::string_view name) const;
  std::span<const Arg> values() const { return values_; }
  /// The kernel launched, for pre-run hooks (valid during the call; copy it
  /// to keep it); null for grid functions and autotune callbacks.
  const Kernel *handle() const { return handle_; }

private:
  const std::vector<KernelParam> &params_;
  std::span<const Arg> values_;
  const Kernel *handle_;
};

} // namespace kiln
