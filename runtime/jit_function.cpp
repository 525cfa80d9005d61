// The launch path: bind -> specialize -> key -> cache lookup -> (compile) ->
// globals check -> grid -> pack -> driver. Everything before "(compile)" and
// after it runs on every launch and must not allocate, lock or build strings
// on a cache hit.
#include "runtime/jit_function.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>

#include "compiler/compile.hpp"
#include "compiler/support/sha256.hpp"
#include "kiln/error.hpp"
#include "runtime/autotuner.hpp"
#include "runtime/cache_key.hpp"
#include "runtime/context.hpp"
#include "runtime/module_state.hpp"
#include "runtime/spec_args.hpp"
#include "kiln/async.hpp"
#include "async/job.hpp"

namespace kiln::runtime {

using compiler::ParamSpec;
using frontend::ConstValue;

namespace {

enum Tag : uint64_t { kPtr = 1, kInt = 2, kFloat = 3, kBool = 4, kConst = 5, kTuple = 6 };

bool fits_i32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }



} // namespace

uint64_t string_word(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t n = 0;
  for (; s[n]; ++n)
    h = (h ^ static_cast<unsigned char>(s[n])) * 0x100000001b3ull;
  return h ^ n;
}

bool named_arg(std::span<const Arg> args, const char *name) {
  for (const Arg &a : args)
    if (a.name() && std::strcmp(a.name(), name) == 0)
      return true;
  return false;
}

std::optional<Arg> arg_from_const(const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::None: return Arg(nullptr);
  case ConstValue::Kind::Int: return Arg(c.i);
  case ConstValue::Kind::Float: return Arg(c.f);
  case ConstValue::Kind::Bool: return Arg(c.b);
  case ConstValue::Kind::DType: return Arg(c.dtype);
  // A config's string must outlive the launch: the module's tree keeps it.
  case ConstValue::Kind::Str: return Arg(c.s.c_str());
  default: return std::nullopt; // functions have no C++ argument form here
  }
}

namespace {

const char *arg_kind_name(Arg::Kind k) {
  switch (k) {
  case Arg::Kind::None: return "None";
  case Arg::Kind::Int:
  case Arg::Kind::UInt: return "an integer";
  case Arg::Kind::Float: return "a float";
  case Arg::Kind::Bool: return "a bool";
  case Arg::Kind::Pointer: return "a tensor";
  case Arg::Kind::Function: return "a jit function";
  case Arg::Kind::Str: return "a string";
  case Arg::Kind::DType: return "a dtype";
  case Arg::Kind::Tuple: return "a tuple";
  }
  return "?";
}

PackKind pack_kind(const ParamSpec &s) {
  if (s.is_pointer)
    return PackKind::Pointer;
  switch (s.dtype) {
  case DType::i1: return PackKind::Bool;
  case DType::i8:
    return PackKind::I8;
  case DType::u8:
    return PackKind::U8;
  case DType::i16:
    return PackKind::I16;
  case DType::u16:
    return PackKind::U16;
  case DType::i32:
    return PackKind::I32;
  case DType::u32:
    return PackKind::U32;
  case DType::i64:
  case DType::u64: return PackKind::I64;
  case DType::f64: return PackKind::F64;
  default: return PackKind::F32;
  }
}

/// The launch slots of parameter `param`: one for a runtime value, one per
/// runtime leaf of a tuple (numbered over all its leaves, depth first).
void add_slots(std::vector<PackSlot> &slots, uint16_t param, const ParamSpec &s) {
  if (!s.is_tuple) {
    if (!s.is_constexpr)
      slots.push_back({param, pack_kind(s), PackSlot::kWhole});
    return;
  }
  uint16_t leaf = 0;
  std::function<void(const ParamSpec &)> walk = [&](const ParamSpec &e) {
    if (e.is_tuple) {
      for (const ParamSpec &x : e.elems)
        walk(x);
      return;
    }
    if (!e.is_constexpr)
      slots.push_back({param, pack_kind(e), leaf});
    ++leaf;
  };
  walk(s);
}

/// Leaf `n` (depth first, over every leaf) of a tuple argument.
const Arg &tuple_leaf(const Arg &a, uint16_t n) {
  const Arg *found = nullptr;
  uint16_t i = 0;
  auto walk = [&](auto &self, const Arg &x) -> void {
    if (found)
      return;
    if (x.kind() != Arg::Kind::Tuple) {
      if (i++ == n)
        found = &x;
      return;
    }
    for (const Arg &e : x.as_tuple())
      self(self, e);
  };
  walk(walk, a);
  return *found; // the slot was made from this argument's specialization
}

/// An integer argument's value; a bool passed for an int-annotated parameter is 0 or 1.
int64_t int_value(const Arg &a) { return a.kind() == Arg::Kind::Bool ? a.as_bool() : a.as_int(); }

/// The value of an argument packed into an integer of `dt`'s width, which
/// must hold it: an annotated `n: tl.int32` given 2**32 would otherwise
/// wrap silently to 0.
template <class T>
T packed_int(const Arg &a, DType dt, const std::string &kernel, const KernelParam &p) {
  const int64_t v = int_value(a);
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) [[unlikely]]
    throw ArgumentError(kernel + ": argument '" + p.name + "' = " + std::to_string(v) +
                        " is out of range for " + std::string(dtype_name(dt)) + " (" +
                        std::to_string(std::numeric_limits<T>::min()) + " to " +
                        std::to_string(std::numeric_limits<T>::max()) + ")");
  return static_cast<T>(v);
}

template <class T> void put(void *dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}

uint64_t options_word(const Options &o) {
  return uint64_t(o.num_warps) | uint64_t(o.num_stages) << 8 | uint64_t(o.num_ctas) << 16 |
         uint64_t(o.enable_fp_fusion) << 24 | uint64_t(o.debug) << 25;
}

} // namespace

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
  if (info.autotune && !info.autotune->configs.empty())
    autotuner_ = std::make_unique<Autotuner>(*info.autotune, params_, info.name);
}

JitFunction::~JitFunction() = default;

void JitFunction::arg_error(const std::string &msg) const { throw ArgumentError(info_.name + ": " + msg); }

const std::string &JitFunction::cache_key() const {
  std::call_once(key_once_, [&] {
    cache_key_ = function_cache_key(info_, module_->globals());
    key_word_ = std::stoull(cache_key_.substr(0, 16), nullptr, 16);
  });
  return cache_key_;
}

uint64_t JitFunction::key_word() const {
  cache_key();
  return key_word_;
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
  auto dc = std::make_unique<DeviceCache>();
  dc->device = d;
  dc->driver = &Context::get().driver(d.backend);
  dc->target = dc->driver->target(d.index);
  devices_[slot].store(dc.get(), std::memory_order_release);
  owned_devices_.push_back(std::move(dc));
  return *owned_devices_.back();
}

// ---- binding ----

namespace {

int option_int(const Arg &a, const char *name, const std::string &fn) {
  if (a.kind() != Arg::Kind::Int)
    throw ArgumentError(fn + ": option " + name + " must be an integer, not " + arg_kind_name(a.kind()));
  return static_cast<int>(a.as_int());
}

bool option_bool(const Arg &a, const char *name, const std::string &fn) {
  if (a.kind() == Arg::Kind::Bool)
    return a.as_bool();
  if (a.kind() == Arg::Kind::Int)
    return a.as_int() != 0;
  throw ArgumentError(fn + ": option " + name + " must be a bool");
}

bool apply_option(const Arg &a, Options &o, const std::string &fn) {
  const char *n = a.name();
  if (!std::strcmp(n, "num_warps")) {
    o.num_warps = option_int(a, n, fn);
    if (o.num_warps < 1 || o.num_warps > 32 || (o.num_warps & (o.num_warps - 1)))
      throw ArgumentError(fn + ": num_warps must be a power of two from 1 to 32, not " + std::to_string(o.num_warps));
  } else if (!std::strcmp(n, "num_stages")) {
    o.num_stages = option_int(a, n, fn);
    if (o.num_stages < 1)
      throw ArgumentError(fn + ": num_stages must be at least 1");
  } else if (!std::strcmp(n, "num_ctas")) {
    o.num_ctas = option_int(a, n, fn);
    if (o.num_ctas != 1)
      throw ArgumentError(fn + ": num_ctas other than 1 is not supported");
  } else if (!std::strcmp(n, "enable_fp_fusion")) {
    o.enable_fp_fusion = option_bool(a, n, fn);
  } else if (!std::strcmp(n, "debug")) {
    o.debug = option_bool(a, n, fn);
  } else {
    return false;
  }
  return true;
}

} // namespace

void JitFunction::bind(std::span<const Arg> args, Bound &b) const {
  const unsigned np = static_cast<unsigned>(params_.size());
  for (unsigned i = 0; i < np; ++i)
    b.args[i] = nullptr;
  unsigned pos = 0;
  for (const Arg &a : args) {
    if (!a.name()) {
      if (pos >= np)
        arg_error("takes " + std::to_string(np) + " arguments but more were given");
      b.args[pos++] = &a;
      continue;
    }
    unsigned i = 0;
    while (i < np && std::strcmp(params_[i].name.c_str(), a.name()) != 0)
      ++i;
    if (i < np) {
      if (b.args[i])
        arg_error("got multiple values for argument '" + params_[i].name + "'");
      b.args[i] = &a;
      continue;
    }
    if (!apply_option(a, b.options, info_.name))
      throw ArgumentError(std::string("Keyword argument ") + a.name() + " was specified but unrecognised (" +
                          info_.name + " has no parameter or option of that name)");
  }
  // @jit(debug=True) and KILN_DEBUG turn debug on unless the launch says
  // otherwise (as in Triton, the launch's own option wins).
  if ((info_.debug || default_debug_) && !named_arg(args, "debug"))
    b.options.debug = true;
  if (info_.autotune || !info_.heuristics.empty())
    apply_decorators(args, b);
  for (unsigned i = 0; i < np; ++i) {
    if (b.args[i])
      continue;
    if (!defaults_[i])
      arg_error("missing a required argument: '" + params_[i].name + "'" +
                (info_.heuristics_error.empty()
                     ? std::string()
                     : "; its @triton.heuristics could not be read, so pass what they compute explicitly: " +
                           info_.heuristics_error));
    b.args[i] = &*defaults_[i];
  }
}

// ---- specialization ----

ParamSpec JitFunction::param_spec(unsigned i, const Arg &a) const { return spec_of(info_.params[i], a); }

ParamSpec JitFunction::spec_of(const frontend::ParamInfo &p, const Arg &a) const {
  ParamSpec s;
  if (a.kind() == Arg::Kind::Tuple) {
    // Triton specializes a tuple's elements one by one, each as it would a
    // parameter of the tuple's kind (constexpr or not).
    s.is_tuple = true;
    for (const Arg &e : a.as_tuple())
      s.elems.push_back(spec_of(p, e));
    return s;
  }
  if (p.is_constexpr) {
    s.is_constexpr = true;
    switch (a.kind()) {
    case Arg::Kind::None: s.value = ConstValue::none(); break;
    case Arg::Kind::Int: s.value = ConstValue::of_int(a.as_int()); break;
    case Arg::Kind::UInt: arg_error("constexpr '" + p.name + "' does not fit in int64");
    case Arg::Kind::Float: s.value = ConstValue::of_float(a.as_float()); break;
    case Arg::Kind::Bool: s.value = ConstValue::of_bool(a.as_bool()); break;
    case Arg::Kind::Function: s.value = ConstValue::of_function(&a.as_function()->info()); break;
    case Arg::Kind::Str: s.value = ConstValue::of_str(a.as_str()); break;
    case Arg::Kind::DType: s.value = ConstValue::of_dtype(a.dtype()); break;
    case Arg::Kind::Tuple: break; // handled above
    case Arg::Kind::Pointer:
      arg_error("parameter '" + p.name + "' is tl.constexpr; pass a value, not a tensor");
    }
    return s;
  }
  const bool align = !p.do_not_specialize && !p.do_not_specialize_on_alignment;
  switch (a.kind()) {
  case Arg::Kind::Pointer:
    if (p.annotated_type)
      arg_error("parameter '" + p.name + "' is annotated as a scalar but got a tensor");
    s.is_pointer = true;
    s.dtype = a.dtype();
    s.is_const = p.is_const;
    s.divisible16 = align && (reinterpret_cast<uintptr_t>(a.as_pointer()) % 16 == 0);
    return s;
  case Arg::Kind::Int: {
    const int64_t v = a.as_int();
    if (p.annotated_type) {
      s.dtype = *p.annotated_type;
    } else if (v == 1 && !p.do_not_specialize) {
      s.is_constexpr = true;
      s.value = ConstValue::of_int(1);
      return s;
    } else {
      s.dtype = fits_i32(v) ? DType::i32 : DType::i64;
    }
    s.divisible16 = align && is_int(s.dtype) && v % 16 == 0;
    return s;
  }
  case Arg::Kind::UInt:
    s.dtype = p.annotated_type ? *p.annotated_type : DType::u64;
    s.divisible16 = align && is_int(s.dtype) && a.as_uint() % 16 == 0;
    return s;
  case Arg::Kind::Float:
    s.dtype = p.annotated_type ? *p.annotated_type : DType::f32;
    if (!kiln::is_float(s.dtype))
      arg_error("parameter '" + p.name + "' is annotated as " + std::string(dtype_name(s.dtype)) +
                " but got a float");
    return s;
  case Arg::Kind::Bool: // `n: tl.int32` given True is an i32, as in Triton
    s.dtype = p.annotated_type ? *p.annotated_type : DType::i1;
    return s;
  case Arg::Kind::None:
    s.is_constexpr = true;
    s.value = ConstValue::none();
    return s;
  case Arg::Kind::Function:
    s.is_constexpr = true;
    s.value = ConstValue::of_function(&a.as_function()->info());
    return s;
  case Arg::Kind::Str: // strings and dtypes are always constexprs in Triton
    s.is_constexpr = true;
    s.value = ConstValue::of_str(a.as_str());
    return s;
  case Arg::Kind::DType:
    s.is_constexpr = true;
    s.value = ConstValue::of_dtype(a.dtype());
    return s;
  case Arg::Kind::Tuple: break; // handled above
  }
  return s;
}

void JitFunction::specialize(const Bound &b, SpecKey &key) const {
  const unsigned np = static_cast<unsigned>(params_.size());
  for (unsigned i = 0; i < np; ++i)
    push_key(info_.params[i], *b.args[i], key);
  key.push(options_word(b.options));
}

void JitFunction::push_key(const frontend::ParamInfo &p, const Arg &a, SpecKey &key) const {
  // Tensors, the most common argument, without building a ParamSpec: the
  // same word spec_of's pointer case gives (the launch hot path).
  if (a.kind() == Arg::Kind::Pointer && !p.is_constexpr && !p.annotated_type) {
    const bool align = !p.do_not_specialize && !p.do_not_specialize_on_alignment;
    const bool d16 = align && reinterpret_cast<uintptr_t>(a.as_pointer()) % 16 == 0;
    key.push(kPtr | uint64_t(a.dtype()) << 8 | uint64_t(d16) << 16 | uint64_t(p.is_const) << 17);
    return;
  }
  if (a.kind() == Arg::Kind::Tuple) {
    key.push(kTuple | uint64_t(a.as_tuple().size()) << 8);
    for (const Arg &e : a.as_tuple())
      push_key(p, e, key);
    return;
  }
  const ParamSpec s = spec_of(p, a);
  if (!s.is_constexpr) {
    const Tag tag = s.is_pointer ? kPtr : kiln::is_float(s.dtype) ? kFloat : s.dtype == DType::i1 ? kBool : kInt;
    key.push(tag | uint64_t(s.dtype) << 8 | uint64_t(s.divisible16) << 16 | uint64_t(s.is_const) << 17);
    return;
  }
  key.push(kConst | uint64_t(s.value.kind) << 8);
  switch (s.value.kind) {
  case ConstValue::Kind::Int: key.push(static_cast<uint64_t>(s.value.i)); break;
  case ConstValue::Kind::Float: key.push(std::bit_cast<uint64_t>(s.value.f)); break;
  case ConstValue::Kind::Bool: key.push(s.value.b); break;
  case ConstValue::Kind::Function: key.push(a.as_function()->key_word()); break;
  case ConstValue::Kind::Str: key.push(string_word(a.as_str())); break;
  case ConstValue::Kind::DType: key.push(static_cast<uint64_t>(s.value.dtype)); break;
  default: key.push(0); break;
  }
}

// ---- compile on a miss ----

/// Everything one compile needs, owned, so that it can run on a pool thread
/// after the launch that asked for it has returned.
struct CompileJob {
  compiler::CompileRequest request;
  compiler::GlobalValues globals;
  uint64_t globals_version = 0;
  std::string key, repr, data;
  Driver *driver = nullptr;
  int device = 0;
  bool warmup = false;
  bool keep_stages = false; ///< the loaded kernel keeps its stage texts

  // The stages, in order: tile IR, LLVM IR + O3, code generation, loading
  // on the device. The async pool runs each as a node of its task graph.
  std::optional<compiler::Compilation> compilation;
  std::shared_ptr<LoadedKernel> loaded;

  void stage(int i) {
    if (i == 0) {
      compiler::CompileRequest req = request;
      req.globals = &globals;
      compilation.emplace(std::move(req));
    }
    if (i < compiler::Compilation::kStages) {
      compilation->run_stage(i);
      return;
    }
    compiler::CompileOutput out = compilation->take();
    compilation.reset();
    auto lk = std::make_shared<LoadedKernel>();
    lk->compiled = std::move(out.kernel);
    lk->compiled.key = key;
    lk->binary = driver->load(lk->compiled, device);
    lk->specs = request.params;
    for (unsigned p = 0; p < lk->specs.size(); ++p)
      add_slots(lk->slots, static_cast<uint16_t>(p), lk->specs[p]);
    if (lk->slots.size() > kMaxParams)
      throw ArgumentError(request.function->name + " takes " + std::to_string(lk->slots.size()) +
                          " launch arguments with its tuples unpacked; kiln supports at most " +
                          std::to_string(kMaxParams));
    if (!keep_stages) {
      // The memory cache keeps what launches need (issue 17.5): the stage
      // texts are tens of KB per specialization; the assembler's log is kept.
      std::erase_if(lk->compiled.stages, [](const auto &s) { return s.first != "cubin_log"; });
    }
    lk->used_globals.assign(out.used_globals.begin(), out.used_globals.end());
    lk->globals_version.store(globals_version, std::memory_order_relaxed);
    loaded = std::move(lk);
  }
  static constexpr int kStages = compiler::Compilation::kStages + 1;

  std::shared_ptr<LoadedKernel> run() {
    for (int i = 0; i < kStages; ++i)
      stage(i);
    return std::move(loaded);
  }
};

namespace {

/// Publishes a compiled kernel into its entry; the caller holds the entry's lock.
LoadedKernel *publish(CacheEntry &entry, std::shared_ptr<LoadedKernel> lk) {
  LoadedKernel *raw = lk.get();
  entry.owned = std::move(lk);
  entry.ready.store(raw, std::memory_order_release);
  return raw;
}

/// The post-compile hook, called without the entry's lock: a hook may
/// launch or warm kernels, this one included.
void post_compile(const CompileJob &job, const LoadedKernel *k) {
  const Hooks &hooks = Context::get().hooks();
  if (hooks.jit_post_compile_hook)
    hooks.jit_post_compile_hook(CompileEvent{job.request.function->name, job.key, job.repr,
                                             job.data, &k->compiled, job.warmup});
}

} // namespace

LoadedKernel *JitFunction::compile_and_load(const Bound &b, const SpecKey &key, uint64_t hash, DeviceCache &dc,
                                            bool warmup, BinarySource &source, FutureKernel &pending) {
  CacheEntry *entry = dc.kernels.find_or_insert(key, hash);
  AsyncCompileMode *mode = AsyncCompileMode::active();
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
    if (LoadedKernel *done = entry->ready.load(std::memory_order_acquire)) {
      source = BinarySource::memory;
      return done;
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
      source = BinarySource::compiled;
      if (!mode) { // synchronous: compile here, under the entry's lock
        LoadedKernel *k = publish(*entry, job->run());
        lock.unlock();
        post_compile(*job, k);
        return k;
      }
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
    } done{entry, lock, outermost};
    lock.unlock();
    job = prepare_job(b, dc, warmup);
    const Hooks &hooks = Context::get().hooks();
    if (hooks.jit_cache_hook && hooks.jit_cache_hook(CompileEvent{info_.name, job->key, job->repr,
                                                                  job->data, nullptr, warmup}))
      return nullptr;
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
  return entry->ready.load(std::memory_order_acquire);
}

std::shared_ptr<CompileJob> JitFunction::prepare_job(const Bound &b, DeviceCache &dc,
                                                     bool warmup) const {
  auto job = std::make_shared<CompileJob>();
  job->request = make_request(b, dc.target);
  compiler::CompileRequest &req = job->request;
  job->globals_version = module_->globals_version();
  job->globals = module_->globals();
  job->driver = dc.driver;
  job->device = dc.device.index;
  job->warmup = warmup;
  job->keep_stages = Context::get().knobs().keep_stages;

  const std::string spec_str = compiler::specialization_str(info_, req.params);
  // The globals may have changed since cache_key() was first computed.
  job->key = compile_key(function_cache_key(info_, job->globals), spec_str, b.options, dc.target);
  const Hooks &hooks = Context::get().hooks();
  if (hooks.jit_cache_hook || hooks.jit_post_compile_hook) {
    job->repr = info_.name + "[" + b.options.str() + "]" + spec_str;
    job->data = specialization_data(*this, req.params, b.options, job->key).dump();
  }
  return job;
}

FutureKernel JitFunction::submit(CacheEntry &entry, AsyncCompileMode &mode,
                                 const std::shared_ptr<CompileJob> &job) {
  // The placeholder goes into the entry at once (the caller stores it), so
  // a second launch of this key waits on this compile instead of starting
  // another. The job may outlive this launch: keep the module (and so this
  // function and its cache entry) alive until it is finalized.
  auto self = module_->shared_from_this();
  CacheEntry *e = &entry;
  // The scope de-duplicates by this key: it names the entry too, since
  // two Modules of one file share compile keys but not cache entries.
  const std::string submit_key = job->key + "@" + std::to_string(reinterpret_cast<uintptr_t>(e));
  return mode.submit(
      submit_key,
      [job] {
        std::vector<AsyncCompileMode::StageFn> stages;
        for (int i = 0; i < CompileJob::kStages; ++i)
          stages.push_back([job, i] { job->stage(i); });
        return stages;
      }(),
      [job] { return std::static_pointer_cast<void>(std::move(job->loaded)); },
      [self, e, job](std::shared_ptr<void> result,
                     std::exception_ptr error) -> const CompiledKernel * {
        LoadedKernel *k = nullptr;
        {
          std::lock_guard l(e->compile_mutex);
          e->future = FutureKernel(); // on failure the next launch retries
          if (error)
            return nullptr;
          k = publish(*e, std::static_pointer_cast<LoadedKernel>(std::move(result)));
        }
        post_compile(*job, k);
        return &k->compiled;
      });
}

compiler::CompileRequest JitFunction::make_request(const Bound &b, const compiler::Target &target) const {
  compiler::CompileRequest req;
  req.module = module_->info();
  req.function = &info_;
  for (unsigned i = 0; i < params_.size(); ++i)
    req.params.push_back(param_spec(i, *b.args[i]));
  for (unsigned i = 0; i < params_.size(); ++i)
    if (!req.params[i].is_constexpr && !req.params[i].is_pointer &&
        (req.params[i].dtype == DType::f16 || req.params[i].dtype == DType::bf16))
      arg_error("scalar parameter '" + params_[i].name + "' of type " + std::string(dtype_name(req.params[i].dtype)) +
                " is not supported; use fp32");
  req.options = b.options;
  req.target = target;
  req.dump_dir = Context::get().knobs().dump_dir;
  return req;
}

CompiledKernel JitFunction::compile_only(std::span<const Arg> args, const compiler::Target &target) {
  Bound b;
  bind(args, b);
  compiler::CompileRequest req = make_request(b, target);
  const compiler::GlobalValues globals = module_->globals();
  req.globals = &globals;
  CompiledKernel k = compiler::compile(req).kernel;
  k.key = compile_key(function_cache_key(info_, globals), k.specialization, b.options, target);
  return k;
}

void JitFunction::check_globals(LoadedKernel &k) const {
  const uint64_t v = module_->globals_version();
  if (v == k.globals_version.load(std::memory_order_acquire))
    return;
  for (const auto &[name, used] : k.used_globals) {
    const std::optional<ConstValue> now = module_->global(name);
    if (!now || !(*now == used))
      arg_error("global variable " + name + " has changed since the kernel was compiled, from " + used.repr() +
                " to " + (now ? now->repr() : std::string("<deleted>")) +
                "; kernels read globals at compile time, so load the module again to use the new value");
  }
  k.globals_version.store(v, std::memory_order_release);
}

// ---- launch ----

void JitFunction::call_pre_run_hooks(const Bound &b) const {
  Arg values[kMaxParams];
  for (unsigned i = 0; i < params_.size(); ++i)
    values[i] = *b.args[i];
  const BoundArgs bound(params_, std::span<const Arg>(values, params_.size()));
  for (const auto &h : pre_run_hooks_)
    h(bound);
}

LaunchResult JitFunction::run(std::span<const Arg> args, const LaunchSpec &spec) {
  Bound b;
  b.spec = &spec;
  bind(args, b);
  SpecKey key;
  specialize(b, key);
  const uint64_t hash = key.hash();

  DeviceCache &dc = device_cache(Context::get().device());
  CacheEntry *entry = dc.kernels.find(key, hash);
  LoadedKernel *k = entry ? entry->ready.load(std::memory_order_acquire) : nullptr;
  BinarySource source = BinarySource::memory;
  if (!k) {
    FutureKernel pending;
    k = compile_and_load(b, key, hash, dc, spec.warmup, source, pending);
    if (!k) // compiling in the background (warmup in a scope), or a jit_cache_hook skipped it
      return LaunchResult{nullptr, source, std::move(pending)};
  }
  check_globals(*k);
  LaunchResult result{&k->compiled, source, FutureKernel()};
  if (spec.warmup)
    return result;

  Grid grid = spec.grid;
  if (spec.grid_fn) {
    Arg values[kMaxParams];
    for (unsigned i = 0; i < params_.size(); ++i)
      values[i] = *b.args[i];
    grid = (*spec.grid_fn)(BoundArgs(params_, std::span<const Arg>(values, params_.size())));
  }
  if (!grid.within_limits()) [[unlikely]]
    throw ArgumentError(info_.name + ": " + grid_limits_message(grid));
  if (grid.size() == 0)
    return result;
  if (!pre_run_hooks_.empty())
    call_pre_run_hooks(b);

  uint64_t storage[kMaxParams];
  void *ptrs[kMaxParams + 1];
  int64_t extents[kMaxParams]; // debug: each pointer's tensor size, after the arguments
  for (size_t s = 0; s < k->slots.size(); ++s) {
    const PackSlot slot = k->slots[s];
    const Arg &a = slot.leaf == PackSlot::kWhole ? *b.args[slot.param] : tuple_leaf(*b.args[slot.param], slot.leaf);
    void *dst = &storage[s];
    const bool f = a.kind() == Arg::Kind::Float;
    switch (slot.kind) {
    case PackKind::Pointer: {
      if (a.is_mock()) [[unlikely]]
        throw ArgumentError(info_.name + ": argument '" + params_[slot.param].name +
                            "' is a mock tensor (Arg::mock), which only warms up a kernel; launch "
                            "with a real tensor");
      const void *p = a.as_pointer();
      std::memcpy(dst, &p, sizeof p);
      break;
    }
    case PackKind::I8:
      put(dst, packed_int<int8_t>(a, DType::i8, info_.name, params_[slot.param]));
      break;
    case PackKind::U8:
      put(dst, packed_int<uint8_t>(a, DType::u8, info_.name, params_[slot.param]));
      break;
    case PackKind::I16:
      put(dst, packed_int<int16_t>(a, DType::i16, info_.name, params_[slot.param]));
      break;
    case PackKind::U16:
      put(dst, packed_int<uint16_t>(a, DType::u16, info_.name, params_[slot.param]));
      break;
    case PackKind::I32:
      put(dst, packed_int<int32_t>(a, DType::i32, info_.name, params_[slot.param]));
      break;
    case PackKind::U32:
      put(dst, packed_int<uint32_t>(a, DType::u32, info_.name, params_[slot.param]));
      break;
    case PackKind::I64: {
      const int64_t v = int_value(a);
      std::memcpy(dst, &v, 8);
      break;
    }
    case PackKind::F32: {
      const float v = f ? static_cast<float>(a.as_float()) : static_cast<float>(a.as_int());
      std::memcpy(dst, &v, 4);
      break;
    }
    case PackKind::F64: {
      const double v = f ? a.as_float() : static_cast<double>(a.as_int());
      std::memcpy(dst, &v, 8);
      break;
    }
    case PackKind::Bool: {
      const uint8_t v = a.kind() == Arg::Kind::Bool ? a.as_bool() : a.as_int() != 0;
      std::memcpy(dst, &v, 1);
      break;
    }
    }
    ptrs[s] = dst;
    extents[s] = slot.kind == PackKind::Pointer ? a.extent() : -1;
  }
  ptrs[k->slots.size()] = extents;
  if (spec.dispatch_only) {
    // Keep the packed arguments observable so the benchmark measures them.
    asm volatile("" : : "r"(ptrs) : "memory");
    return result;
  }
  const Hooks &hooks = Context::get().hooks();
  if (hooks.launch_enter_hook || hooks.launch_exit_hook) {
    Arg values[kMaxParams];
    for (unsigned i = 0; i < params_.size(); ++i)
      values[i] = *b.args[i];
    const LaunchEvent ev{info_.name, &k->compiled, grid, std::span<const Arg>(values, params_.size()), source};
    if (hooks.launch_enter_hook)
      hooks.launch_enter_hook(ev);
    dc.driver->launch(*k->binary, grid, ptrs, spec.stream);
    if (hooks.launch_exit_hook)
      hooks.launch_exit_hook(ev);
    return result;
  }
  dc.driver->launch(*k->binary, grid, ptrs, spec.stream);
  return result;
}

} // namespace kiln::runtime
