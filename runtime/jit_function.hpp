// The seed's JITFunction: one @triton.jit function of a module, its
// parameters, cache key, per-device caches, and the launch path.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <forward_list>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "compiler/frontend/module_info.hpp"
#include "kiln/kernel.hpp"
#include "runtime/cache_key.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/module_state.hpp"
#include "runtime/spec_key.hpp"

namespace kiln::async {
class Scope;
}

namespace kiln::runtime {

class ModuleState;
class Driver;
class Autotuner;
class CompileJob;

/// A constexpr value as a launch argument; nullopt for functions.
std::optional<Arg> arg_from_const(const frontend::ConstValue &c);
/// A string constexpr's key word: FNV-1a over its bytes and length, so a
/// launch key stays a fixed-size array of words (as a jit function's does).
uint64_t string_word(const char *s);
/// Whether `args` has one passed by name as `name` (a parameter or option).
bool named_arg(std::span<const Arg> args, const char *name);

/// Per-device state of a function: its kernel table and target.
struct DeviceCache {
  /// `max_kernels`: KILN_MEMORY_CACHE_MAX (0: no bound).
  explicit DeviceCache(std::size_t max_kernels) : kernels(max_kernels) {}
  Device device;
  Driver *driver = nullptr;
  compiler::Target target;
  KernelCache kernels;
};

/// Thread-safe: any number of threads may launch, warm up and query at once.
class JitFunction {
public:
  /// Owned by `module`, which outlives it.
  JitFunction(ModuleState &module, const frontend::JitFunctionInfo &info);
  ~JitFunction();

  const std::string &name() const { return info_.name; }
  const std::vector<KernelParam> &params() const { return params_; }
  const frontend::JitFunctionInfo &info() const { return info_; }
  ModuleState &module() const { return *module_; }
  /// A public handle to this function (sharing its module); what hook
  /// events carry.
  Kernel handle() const;

  /// Hex SHA-256 over source, callees, first line, constexpr globals. Computed once.
  const std::string &cache_key() const;
  /// cache_key() as four words: what a launch key holds when this function
  /// is passed as a constexpr argument (all of it, so keys cannot alias).
  const std::array<uint64_t, 4> &key_words() const;

  struct LaunchSpec {
    Grid grid;
    const GridFn *grid_fn = nullptr;
    Stream stream = nullptr;
    bool warmup = false;
    /// Everything but the driver call (the dispatch benchmark).
    bool dispatch_only = false;
  };
  LaunchResult run(std::span<const Arg> args, const LaunchSpec &spec);

  /// Binds and specializes `args` as a launch would, and compiles for
  /// `target` without loading or caching (`kiln compile --target`, which
  /// works for a GPU target on a machine without one).
  CompiledKernel compile_only(std::span<const Arg> args, const compiler::Target &target);

  /// The device cache of `d`, created on first use.
  DeviceCache &device_cache(Device d);
  /// The device caches created so far (cpu and every cuda device used).
  std::vector<DeviceCache *> device_caches() const;

  /// Not synchronized with launches: set before launching from other threads.
  void set_launch_metadata(std::function<std::string(const LaunchEvent &)> fn) {
    launch_metadata_ = std::move(fn);
  }

  /// Not synchronized with launches: add before launching from other threads.
  void add_pre_run_hook(std::function<void(const BoundArgs &)> hook) { pre_run_hooks_.push_back(std::move(hook)); }

  /// The autotuning configs: the decorator's, or those set from C++; null
  /// when there are none.
  const frontend::AutotuneInfo *autotune_info() const { return autotune_; }
  /// Replaces the decorator's configs (Kernel::autotune(spec)). Not
  /// synchronized with launches.
  void set_autotune(const AutotuneSpec &spec);
  /// Kernel::set_autotune_callbacks. Not synchronized with launches.
  void set_autotune_callbacks(AutotuneCallbacks callbacks);

  /// Compiles what launches with `args` need, without launching: for an
  /// autotuned kernel that these arguments leave to tuning, the stored
  /// choice for their key, or, with none stored, every config (those the
  /// pruning callbacks keep), as Triton's warmup does. In a scope the
  /// results hold futures. Throws when nothing compiles.
  std::vector<LaunchResult> warmup(std::span<const Arg> args);

private:
  /// The bound arguments of one launch: each parameter's argument (given,
  /// from a config or heuristic, or its default) and the options.
  struct Bound {
    const Arg *args[kMaxParams];
    Options options;
    /// The launch being bound; null for a compile without a launch (its
    /// autotuned meta-parameters then come from the first config).
    const LaunchSpec *spec = nullptr;
    /// Values computed for this launch by @triton.autotune configs and
    /// @triton.heuristics (only kernels that have them pay for the array).
    struct Derived {
      std::array<Arg, kMaxParams> args;
      /// The text of string values, alive for the launch (a list: empty, it
      /// allocates nothing, and its elements never move).
      std::forward_list<std::string> strings;
    };
    std::optional<Derived> derived;
    /// A warmup of an autotuned kernel with no stored choice for its key:
    /// bound with the first config, but every config is wanted.
    bool untuned = false;
  };
  void bind(std::span<const Arg> args, Bound &b) const;
  /// Fills parameters from the first autotune config and the heuristics
  /// (jit_decorators.cpp).
  void apply_decorators(std::span<const Arg> args, Bound &b) const;
  void specialize(const Bound &b, SpecKey &key) const;
  /// cuda: refuses a pointer argument the device cannot reach (a host array).
  void check_pointers(DeviceCache &dc, const LoadedKernel &k, void *const *ptrs) const;
  void check_devices(Device launch, const Bound &b) const;
  /// The kernel for `key`, compiled (or waited for) on a miss of the memory
  /// table; null when a warmup in a scope left it compiling or a
  /// jit_cache_hook skipped it. Shared: a bounded table may evict it.
  std::shared_ptr<LoadedKernel> compile_and_load(const Bound &b, const SpecKey &key, uint64_t hash,
                                                 DeviceCache &dc, bool warmup, BinarySource &source,
                                                 FutureKernel &pending);
  void call_pre_run_hooks(const Bound &b) const;
  /// call_driver between the autotune callbacks' pre_hook and post_hook.
  void call_driver_hooked(DeviceCache &dc, const LoadedKernel &k, const Bound &b, Grid grid,
                          void **ptrs, const LaunchSpec &spec, BinarySource source) const;
  void make_autotuner();
  Grid resolve_grid(const Bound &b, const LaunchSpec &spec) const;
  void call_driver(DeviceCache &dc, const LoadedKernel &k, const Bound &b, Grid grid, void **ptrs,
                   const LaunchSpec &spec, BinarySource source) const;
  /// The job behind a miss of the memory table: its request, globals, key.
  std::shared_ptr<CompileJob> make_job(const Bound &b, DeviceCache &dc, bool warmup) const;
  /// Sends `job` to the scope's pool; its finalizer publishes into `entry`.
  FutureKernel submit(CacheEntry &entry, async::Scope &mode,
                      const std::shared_ptr<CompileJob> &job);
  /// The compile request for bound arguments, minus the globals (the caller
  /// snapshots them). Throws ArgumentError for what no compile accepts.
  compiler::CompileRequest make_request(const Bound &b, const compiler::Target &target) const;
  compiler::ParamSpec param_spec(unsigned i, const Arg &a) const;
  /// How `a` specializes for a parameter declared as `p` (recursing into tuples).
  compiler::ParamSpec spec_of(const frontend::ParamInfo &p, const Arg &a) const;
  void push_key(const frontend::ParamInfo &p, const Arg &a, SpecKey &key) const;
  void check_globals(LoadedKernel &k) const;
  /// The globals a compile of `b` reads: this module's family and the
  /// modules of jit functions passed as arguments.
  GlobalsSnapshot globals_snapshot(const Bound &b) const;
  CompileKeyInputs key_inputs(const Bound &b, const GlobalsSnapshot &g, const std::string &specialization,
                              const compiler::Target &target) const;
  [[noreturn]] void arg_error(const std::string &msg) const;

  ModuleState *module_;
  const frontend::JitFunctionInfo &info_;
  std::vector<KernelParam> params_;
  std::vector<std::optional<Arg>> defaults_;
  std::vector<std::function<void(const BoundArgs &)>> pre_run_hooks_;
  std::function<std::string(const LaunchEvent &)> launch_metadata_;
  std::unique_ptr<Autotuner> autotuner_; ///< when the kernel has @triton.autotune configs
  std::optional<frontend::AutotuneInfo> own_autotune_; ///< configs set from C++
  const frontend::AutotuneInfo *autotune_ = nullptr;   ///< the decorator's or own_autotune_
  AutotuneCallbacks callbacks_;
  bool tune_hooks_ = false;              ///< an autotuned kernel with a pre_hook or post_hook
  bool default_debug_ = false;           ///< KILN_DEBUG

  mutable std::once_flag key_once_;
  mutable std::string cache_key_;
  mutable std::array<uint64_t, 4> key_words_{};

  static constexpr int kMaxDevices = 17; // cpu + 16 cuda devices
  std::array<std::atomic<DeviceCache *>, kMaxDevices> devices_{};
  std::mutex devices_mutex_;
  std::vector<std::unique_ptr<DeviceCache>> owned_devices_;
};

} // namespace kiln::runtime
