// The launch path (DESIGN.md "Launch"): hooks -> bind -> specialize -> key
// -> memory table -> on a miss, a compile job (disk -> remote -> compile)
// -> globals check -> grid -> pack -> driver. Everything but the compile job
// runs on every launch and must not allocate, lock or build strings on a
// memory hit. Binding, specialization, argument packing, the compile request
// and the job live in their own files (binder, specializer, arg_packer,
// compile_request, compile_job).
#include "runtime/jit_function.hpp"

#include <cstring>
#include <thread>

#include <tbb/parallel_for.h>

#include "async/scope.hpp"
#include "kiln/async.hpp"
#include "kiln/error.hpp"
#include "runtime/arg_packer.hpp"
#include "runtime/autotune_spec.hpp"
#include "runtime/autotuner.hpp"
#include "runtime/compile_job.hpp"
#include "runtime/context.hpp"
#include "runtime/grace_period.hpp"
#include "runtime/module_state.hpp"
#include "runtime/spec_args.hpp"

namespace kiln::runtime {

using frontend::ConstValue;

JitFunction::JitFunction(ModuleState &module, const frontend::JitFunctionInfo &info)
    : module_(&module), info_(info) {
  if (info.params.size() > kMaxParams)
    throw ArgumentError("kernel '" + info.name + "' has " + std::to_string(info.params.size()) +
                        " parameters; kiln supports at most " + std::to_string(kMaxParams));
  for (const frontend::ParamInfo &p : info.params) {
    KernelParam k;
    k.name = p.name;
    k.index = p.index;
    k.annotation = p.annotation;
    k.is_constexpr = p.is_constexpr;
    k.is_const = p.is_const;
    k.do_not_specialize = p.do_not_specialize;
    k.do_not_specialize_on_alignment = p.do_not_specialize_on_alignment;
    k.has_default = p.default_value.has_value();
    params_.push_back(std::move(k));
    defaults_.push_back(p.default_value ? arg_from_const(*p.default_value) : std::nullopt);
  }
  default_debug_ = Context::get().knobs().debug;
  if (info.autotune)
    autotune_ = &*info.autotune;
  make_autotuner();
}

void JitFunction::make_autotuner() {
  autotuner_.reset();
  if (autotune_ && !autotune_->configs.empty())
    autotuner_ = std::make_unique<Autotuner>(
        *autotune_, params_, info_.name, [this] { return cache_key(); }, callbacks_);
  tune_hooks_ = autotune_ && (callbacks_.pre_hook || callbacks_.post_hook);
}

void JitFunction::set_autotune(const AutotuneSpec &spec) {
  frontend::AutotuneInfo info = frontend_info(spec, info_.name, params_);
  info.loc = info_.autotune ? info_.autotune->loc : frontend::Loc{};
  own_autotune_ = std::move(info);
  autotune_ = &*own_autotune_;
  make_autotuner();
}

void JitFunction::set_autotune_callbacks(AutotuneCallbacks callbacks) {
  if (callbacks.perf_model && callbacks.top_k == 0)
    throw ArgumentError(info_.name +
                        ": AutotuneCallbacks::top_k must be at least 1 with a perf_model");
  callbacks_ = std::move(callbacks);
  tune_hooks_ = autotune_ && (callbacks_.pre_hook || callbacks_.post_hook);
}

std::vector<LaunchResult> JitFunction::warmup(std::span<const Arg> args) {
  LaunchSpec spec;
  spec.warmup = true;
  if (autotuner_ && autotuner_->enabled()) {
    Bound b;
    b.spec = &spec;
    bind(args, b);
    if (b.untuned) {
      const std::vector<size_t> configs = autotuner_->candidates(b.args);
      std::vector<std::optional<LaunchResult>> results(configs.size());
      std::vector<std::exception_ptr> errors(configs.size());
      const Device device = Context::get().device(); // the pool's threads keep this thread's
      auto warm = [&](size_t i) {
        const Context::ThreadDevice on(device);
        try {
          results[i] = run(autotuner_->config_args(args, configs[i]), spec);
        } catch (const Error &) {
          errors[i] = std::current_exception(); // skipped, as tuning skips it
        }
      };
      // In a scope each warmup returns at once with its future; otherwise
      // compile every config at once, as tuning does.
      if (async::Scope::active())
        for (size_t i = 0; i < configs.size(); ++i)
          warm(i);
      else
        tbb::parallel_for(size_t{0}, configs.size(), warm);
      std::vector<LaunchResult> out;
      for (std::optional<LaunchResult> &r : results)
        if (r)
          out.push_back(std::move(*r));
      if (out.empty())
        std::rethrow_exception(errors.front());
      return out;
    }
  }
  return {run(args, spec)};
}

JitFunction::~JitFunction() = default;

void JitFunction::arg_error(const std::string &msg) const {
  throw ArgumentError(info_.name + ": " + msg);
}

const std::string &JitFunction::cache_key() const {
  std::call_once(key_once_, [&] {
    const GlobalsSnapshot g = module_->snapshot();
    cache_key_ = function_cache_key(info_, g.own, &g.others);
    for (size_t i = 0; i < key_words_.size(); ++i)
      key_words_[i] = std::stoull(cache_key_.substr(16 * i, 16), nullptr, 16);
  });
  return cache_key_;
}

const std::array<uint64_t, 4> &JitFunction::key_words() const {
  cache_key();
  return key_words_;
}

DeviceCache &JitFunction::device_cache(Device d) {
  const int slot = d.backend == Backend::cpu ? 0 : 1 + d.index;
  if (slot < 0 || slot >= kMaxDevices)
    throw ArgumentError("device " + d.str() + " is out of range");
  if (DeviceCache *dc = devices_[slot].load(std::memory_order_acquire))
    return *dc;
  std::lock_guard lock(devices_mutex_);
  if (DeviceCache *dc = devices_[slot].load(std::memory_order_acquire))
    return *dc;
  auto dc = std::make_unique<DeviceCache>(Context::get().knobs().memory_cache_max);
  dc->device = d;
  dc->driver = &Context::get().driver(d.backend);
  dc->target = dc->driver->target(d.index);
  devices_[slot].store(dc.get(), std::memory_order_release);
  owned_devices_.push_back(std::move(dc));
  return *owned_devices_.back();
}

std::vector<DeviceCache *> JitFunction::device_caches() const {
  std::vector<DeviceCache *> out;
  for (const auto &slot : devices_)
    if (DeviceCache *dc = slot.load(std::memory_order_acquire))
      out.push_back(dc);
  return out;
}

namespace {

/// Publishes a loaded kernel into its entry; the caller holds the entry's lock.
void publish(CacheEntry &entry, const std::shared_ptr<LoadedKernel> &lk) {
  entry.owned = lk;
  entry.ready.store(lk.get(), std::memory_order_release);
}

/// The post-compile hook, called without the entry's lock: a hook may launch
/// or warm kernels, this one included. As in Triton, it sees every binary a
/// job produced, compiled or read from a persistent cache.
void post_compile(const CompileJob &job, const LoadedKernel *k, const JitFunction &fn) {
  const Hooks &hooks = Context::get().hooks();
  if (hooks.jit_post_compile_hook) {
    const Kernel handle = fn.handle();
    hooks.jit_post_compile_hook(CompileEvent{job.request.function->name, job.key, job.repr,
                                             job.data, &k->compiled, job.warmup, &handle});
  }
}

} // namespace

std::shared_ptr<CompileJob> JitFunction::make_job(const Bound &b, DeviceCache &dc,
                                                  bool warmup) const {
  auto job = std::make_shared<CompileJob>();
  job->request = make_request(b, dc.target);
  job->globals_version = ModuleState::globals_version();
  job->module = module_->shared_from_this();
  job->globals = globals_snapshot(b);
  job->driver = dc.driver;
  job->device = dc.device.index;
  job->warmup = warmup;
  Context &ctx = Context::get();
  job->levels = ctx.cache_levels();
  job->read_levels = !ctx.knobs().always_compile;
  job->keep_stages = ctx.knobs().keep_stages;
  const std::string spec_str = compiler::specialization_str(info_, job->request.params);
  // The globals may have changed since cache_key() was first computed.
  job->key = compile_key(key_inputs(b, job->globals, spec_str, dc.target));
  const Hooks &hooks = ctx.hooks();
  if (hooks.jit_cache_hook || hooks.jit_post_compile_hook) {
    job->repr = info_.name + "[" + b.options.str() + "]" + spec_str;
    job->data = specialization_data(*this, job->request.params, b.options, job->key).dump();
  }
  return job;
}

std::shared_ptr<LoadedKernel> JitFunction::compile_and_load(const Bound &b, const SpecKey &key,
                                                            uint64_t hash, DeviceCache &dc,
                                                            bool warmup, BinarySource &source,
                                                            FutureKernel &pending) {
  // Pinned: a bounded table does not evict it while this launch works on it.
  const KernelCache::Pin entry = dc.kernels.find_or_insert(key, hash);
  async::Scope *mode = async::Scope::active();
  FutureKernel future;
  bool foreign = false; // the compile in flight was started by another launch
  // Hooks run without the entry's lock (a jit_cache_hook may warm this very
  // key), so the job is prepared first and the entry checked again after;
  // meanwhile other threads wait for this one's outcome.
  const std::thread::id me = std::this_thread::get_id();
  std::shared_ptr<CompileJob> job;
  std::unique_lock lock(entry->compile_mutex);
  for (;;) {
    // Another thread may have compiled this key while we waited.
    if (entry->ready.load(std::memory_order_acquire)) {
      source = BinarySource::memory;
      return entry->owned;
    }
    if (entry->future.valid()) {
      source = BinarySource::memory; // someone else's compile, in flight
      future = entry->future;
      foreign = true;
      break;
    }
    if (entry->preparing != std::thread::id() && entry->preparing != me) {
      entry->prepared.wait(lock);
      continue;
    }
    if (job) {
      if (!mode) { // synchronous: here, under the entry's lock
        std::shared_ptr<LoadedKernel> lk = job->run();
        source = job->source;
        publish(*entry, lk);
        lock.unlock();
        post_compile(*job, lk.get(), *this);
        return lk;
      }
      source = BinarySource::compiled;
      future = entry->future = submit(*entry, *mode, job);
      break;
    }
    const bool outermost = entry->preparing == std::thread::id();
    entry->preparing = me;
    struct Done { // on every way out, hand the key back to the waiters
      CacheEntry *e;
      std::unique_lock<std::mutex> &lock;
      bool outermost;
      ~Done() {
        if (!lock.owns_lock())
          lock.lock();
        if (outermost) {
          e->preparing = std::thread::id();
          e->prepared.notify_all();
        }
      }
    } done{&*entry, lock, outermost};
    lock.unlock();
    job = make_job(b, dc, warmup);
    const Hooks &hooks = Context::get().hooks();
    if (hooks.jit_cache_hook) {
      const Kernel handle = this->handle();
      if (hooks.jit_cache_hook(
              CompileEvent{info_.name, job->key, job->repr, job->data, nullptr, warmup, &handle}))
        return nullptr;
    }
  }
  lock.unlock();
  // A warmup inside a scope never blocks. The scope also waits for (and
  // reports) a compile another scope started for this key.
  if (warmup && mode) {
    if (foreign)
      mode->adopt(future);
    pending = future;
    return nullptr;
  }
  if (!future.result()) // errors ignored by the scope; a launch cannot go on without its kernel
    std::rethrow_exception(future.error());
  lock.lock();
  return entry->owned;
}

FutureKernel JitFunction::submit(CacheEntry &entry, async::Scope &mode,
                                 const std::shared_ptr<CompileJob> &job) {
  // The placeholder goes into the entry at once (the caller stores it), so a
  // second launch of this key waits on this job instead of starting another.
  // The job may outlive this launch: keep the module (and so this function
  // and its cache entry) alive until it is finalized.
  auto self = module_->shared_from_this();
  CacheEntry *e = &entry;
  std::vector<async::Scope::StageFn> stages;
  for (int i = 0; i < CompileJob::kStages; ++i)
    stages.push_back([job, i] { job->stage(i); });
  // The scope de-duplicates by the key and the entry: two Modules of one
  // file share compile keys but not cache entries.
  return mode.submit(
      async::JobKey{e, job->key}, std::move(stages),
      [job] { return std::static_pointer_cast<void>(job->result()); },
      [self, fn = this, e, job](std::shared_ptr<void> result,
                                std::exception_ptr error) -> const CompiledKernel * {
        // Held here: once the future is cleared a bounded table may evict
        // the entry (the job keeps `result`, so the kernel the future
        // returns stays valid).
        const auto k = std::static_pointer_cast<LoadedKernel>(std::move(result));
        {
          std::lock_guard l(e->compile_mutex);
          e->future = FutureKernel(); // on failure the next launch retries
          if (error)
            return nullptr;
          publish(*e, k);
        }
        post_compile(*job, k.get(), *fn);
        return &k->compiled;
      });
}

void JitFunction::check_globals(LoadedKernel &k) const {
  const uint64_t v = ModuleState::globals_version();
  if (v == k.globals_version.load(std::memory_order_acquire))
    return;
  for (const UsedGlobal &used : k.used_globals) {
    const std::shared_ptr<ModuleState> state = used.module.lock();
    if (!state)
      continue;
    const std::optional<ConstValue> now = state->global(used.name);
    if (!now || !(*now == used.value))
      arg_error(
          "global variable " + used.name + (state.get() == module_ ? "" : " of " + state->path()) +
          " has changed since the kernel was compiled, from " + used.value.repr() + " to " +
          (now ? now->repr() : std::string("<deleted>")) +
          "; kernels read globals at compile time, so load the module again to use the new value");
  }
  k.globals_version.store(v, std::memory_order_release);
}

// ---- launch ----

Kernel JitFunction::handle() const {
  // Aliasing the module's ownership, as Module::kernel() does: no allocation.
  return Kernel(
      std::shared_ptr<JitFunction>(module_->shared_from_this(), const_cast<JitFunction *>(this)));
}

void JitFunction::call_pre_run_hooks(const Bound &b) const {
  Arg values[kMaxParams];
  for (unsigned i = 0; i < params_.size(); ++i)
    values[i] = *b.args[i];
  const Kernel handle = this->handle();
  const BoundArgs bound(params_, std::span<const Arg>(values, params_.size()), &handle);
  for (const auto &h : pre_run_hooks_)
    h(bound);
}

Grid JitFunction::resolve_grid(const Bound &b, const LaunchSpec &spec) const {
  if (!spec.grid_fn)
    return spec.grid;
  Arg values[kMaxParams];
  for (unsigned i = 0; i < params_.size(); ++i)
    values[i] = *b.args[i];
  return (*spec.grid_fn)(BoundArgs(params_, std::span<const Arg>(values, params_.size())));
}

void JitFunction::call_driver(DeviceCache &dc, const LoadedKernel &k, const Bound &b, Grid grid,
                              void **ptrs, const LaunchSpec &spec, BinarySource source) const {
  const Hooks &hooks = Context::get().hooks();
  if (!hooks.launch_enter_hook && !hooks.launch_exit_hook) {
    dc.driver->launch(*k.binary, grid, ptrs, spec.stream);
    return;
  }
  Arg values[kMaxParams];
  for (unsigned i = 0; i < params_.size(); ++i)
    values[i] = *b.args[i];
  const Kernel handle = this->handle();
  const LaunchEvent ev{
      info_.name, &k.compiled, grid,        std::span<const Arg>(values, params_.size()),
      source,     dc.device,   spec.stream, &launch_metadata_,
      &handle};
  if (hooks.launch_enter_hook)
    hooks.launch_enter_hook(ev);
  dc.driver->launch(*k.binary, grid, ptrs, spec.stream);
  if (hooks.launch_exit_hook)
    hooks.launch_exit_hook(ev);
}

void JitFunction::check_pointers(DeviceCache &dc, const LoadedKernel &k, void *const *ptrs) const {
  for (size_t s = 0; s < k.slots.size(); ++s) {
    if (k.slots[s].kind != PackKind::Pointer)
      continue;
    const void *p = nullptr;
    std::memcpy(&p, ptrs[s], sizeof p);
    if (const char *why = dc.driver->pointer_problem(p, dc.device.index)) [[unlikely]]
      throw ArgumentError(info_.name + ": argument '" + params_[k.slots[s].param].name + "' " +
                          why);
  }
}

namespace {

// The first labelled pointer (a Tensor's, DLPack's) of `a` on another device
// than `launch`, or null. Tuples are searched too: their tensors launch as well.
const Arg *on_other_device(const Arg &a, Device launch) {
  if (a.kind() == Arg::Kind::Pointer)
    return a.has_device() && a.device() != launch ? &a : nullptr;
  if (a.kind() == Arg::Kind::Tuple)
    for (const Arg &e : a.as_tuple())
      if (const Arg *bad = on_other_device(e, launch))
        return bad;
  return nullptr;
}

} // namespace

// Triton's launcher refuses a tensor on another device than the launch's;
// without this a tensor labelled cuda:0 would be dereferenced on the CPU.
void JitFunction::check_devices(Device launch, const Bound &b) const {
  for (unsigned i = 0; i < params_.size(); ++i)
    if (const Arg *bad = on_other_device(*b.args[i], launch)) [[unlikely]]
      throw ArgumentError(info_.name + ": argument '" + params_[i].name + "' is a tensor on " +
                          bad->device().str() + " but the launch is on " + launch.str() +
                          " (kiln::set_device, or move the tensor)");
}

LaunchResult JitFunction::run(std::span<const Arg> args, const LaunchSpec &spec) {
  Bound b;
  b.spec = &spec;
  bind(args, b);
  // As the seed's run(): the hooks come first, before any compile, for
  // warmups and empty grids too.
  if (!pre_run_hooks_.empty())
    call_pre_run_hooks(b);
  SpecKey key;
  specialize(b, key);
  const uint64_t hash = key.hash();

  // memory -> (disk -> remote -> compile, in the compile job)
  DeviceCache &dc = device_cache(Context::get().device());
  // The entry is read without a lock; the read section keeps a concurrent
  // eviction from freeing it before its kernel is held (a copy of the
  // shared owner: a count increment, no allocation).
  std::shared_ptr<LoadedKernel> held;
  {
    const GracePeriod::Reader reading;
    if (const CacheEntry *entry = dc.kernels.find(key, hash);
        entry && entry->ready.load(std::memory_order_acquire))
      held = entry->owned;
  }
  BinarySource source = BinarySource::memory;
  if (!held) {
    FutureKernel pending;
    held = compile_and_load(b, key, hash, dc, spec.warmup, source, pending);
    if (!held) // compiling in the background (warmup in a scope), or a jit_cache_hook skipped it
      return LaunchResult{nullptr, source, std::move(pending)};
  }
  LoadedKernel *k = held.get();
  check_globals(*k);
  // The result owns the kernel: it outlives an eviction, and the Module.
  const LaunchResult result{&k->compiled, source, FutureKernel(), std::move(held)};
  if (spec.warmup)
    return result;

  const Grid grid = resolve_grid(b, spec);
  if (!grid.within_limits()) [[unlikely]]
    throw ArgumentError(info_.name + ": " + grid_limits_message(grid));
  if (grid.size() == 0)
    return result;
  check_devices(dc.device, b);
  uint64_t storage[kMaxParams];
  void *ptrs[kMaxParams + 1];
  int64_t extents[kMaxParams]; // debug: each pointer's tensor size, after the arguments
  pack_args(k->slots, b.args, storage, ptrs, extents, info_.name, params_);
  ptrs[k->slots.size()] = extents;
  if (dc.device.backend == Backend::cuda)
    check_pointers(dc, *k, ptrs);
  if (spec.dispatch_only) {
    // Keep the packed arguments observable so the benchmark measures them.
    asm volatile("" : : "r"(ptrs) : "memory");
    return result;
  }
  if (tune_hooks_) [[unlikely]]
    call_driver_hooked(dc, *k, b, grid, ptrs, spec, source);
  else
    call_driver(dc, *k, b, grid, ptrs, spec, source);
  return result;
}

void JitFunction::call_driver_hooked(DeviceCache &dc, const LoadedKernel &k, const Bound &b,
                                     Grid grid, void **ptrs, const LaunchSpec &spec,
                                     BinarySource source) const {
  Arg values[kMaxParams];
  for (unsigned i = 0; i < params_.size(); ++i)
    values[i] = *b.args[i];
  const BoundArgs bound(params_, std::span<const Arg>(values, params_.size()));
  if (callbacks_.pre_hook)
    callbacks_.pre_hook(bound);
  try {
    call_driver(dc, k, b, grid, ptrs, spec, source);
  } catch (...) {
    if (callbacks_.post_hook)
      callbacks_.post_hook(bound, std::current_exception());
    throw;
  }
  if (callbacks_.post_hook)
    callbacks_.post_hook(bound, nullptr);
}

} // namespace kiln::runtime
