#include "tools/kiln/run_command.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kiln/arg.hpp"
#include "kiln/buffer.hpp"
#include "kiln/compiled_kernel.hpp"
#include "kiln/error.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "kiln/tensor_descriptor.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/grid_expr.hpp"
#include "tools/kiln/npy.hpp"

namespace kiln::cli {

namespace {

// Appends rather than "'" + std::string(s): GCC 12 at -O3 reports a false
// -Wrestrict for a literal prepended to a temporary string (GCC PR 105651).
std::string in_quotes(std::string_view s) {
  std::string q(1, '\'');
  q.append(s);
  q += '\'';
  return q;
}

bool is_identifier(std::string_view s) {
  auto alpha = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !s.empty() && alpha(s.front()) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || digit(c); });
}

/// int64/uint64 for an integer literal, nullopt when `s` is not shaped like
/// one; UsageError when it is but does not fit in 64 bits. (Not an
/// optional<ArgValue>: copying that variant trips GCC 12's
/// -Wmaybe-uninitialized.)
std::optional<std::variant<int64_t, uint64_t>> integer_literal(std::string_view name,
                                                               std::string_view s) {
  std::string_view body = s;
  const bool negative = body.starts_with('-');
  if (negative || body.starts_with('+'))
    body.remove_prefix(1);
  int base = 10;
  if (body.starts_with("0x") || body.starts_with("0X")) {
    base = 16;
    body.remove_prefix(2);
  }
  auto is_digit = [base](char c) {
    return (c >= '0' && c <= '9') ||
           (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
  };
  if (body.empty() || !std::all_of(body.begin(), body.end(), is_digit))
    return std::nullopt;
  uint64_t magnitude = 0;
  const auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), magnitude, base);
  const auto too_big = [&] {
    return UsageError("argument " + in_quotes(name) + ": " + std::string(s) +
                      " does not fit in a 64-bit integer");
  };
  if (ec != std::errc() || p != body.data() + body.size())
    throw too_big();
  constexpr auto kInt64Max = static_cast<uint64_t>(INT64_MAX);
  if (!negative)
    return magnitude <= kInt64Max ? std::variant<int64_t, uint64_t>(static_cast<int64_t>(magnitude))
                                  : std::variant<int64_t, uint64_t>(magnitude);
  if (magnitude > kInt64Max + 1)
    throw too_big();
  // -(2^63) is representable although +2^63 is not: negate in unsigned.
  return static_cast<int64_t>(~magnitude + 1);
}

/// A double for a float literal ("1.5", "1e-5", "-inf", "nan"), nullopt
/// for anything else.
std::optional<double> float_literal(std::string_view name, std::string_view s) {
  std::string_view body = s;
  if (body.starts_with('+')) // from_chars takes '-' but not '+'
    body.remove_prefix(1);
  double v = 0;
  const auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (p != body.data() + body.size() || body.empty())
    return std::nullopt;
  if (ec == std::errc::result_out_of_range)
    throw UsageError("argument " + in_quotes(name) + ": " + std::string(s) +
                     " is out of the range of a double");
  if (ec != std::errc())
    return std::nullopt;
  return v;
}

std::string joined(std::span<const std::string> names) {
  std::string s;
  for (const std::string &n : names)
    s.append(s.empty() ? "" : ", ").append(n);
  return s;
}

// ---- staging ----------------------------------------------------------------

/// The cpu backend launches on the host buffers themselves and returns when
/// the programs have run, so there is nothing to copy or to wait for.
class CpuStaging final : public TensorStaging {
public:
  Backend backend() const override { return Backend::cpu; }
  Tensor to_device(HostTensor &host) override { return host.view(Device{Backend::cpu, 0}); }
  void upload(const HostTensor &, const Tensor &) override {}
  void download(const Tensor &, HostTensor &) override {}
  void synchronize() override {}
};

/// The cuda backend: a device Buffer per tensor, copied in before the
/// launch and out after it.
class CudaStaging final : public TensorStaging {
public:
  Backend backend() const override { return Backend::cuda; }
  Tensor to_device(HostTensor &host) override {
    const Tensor h = host.view(Device{Backend::cpu, 0});
    Buffer &b = buffers_.emplace_back(Buffer::allocate(Device{Backend::cuda, 0}, h.nbytes()));
    b.copy_from_host(h.data, h.nbytes());
    Tensor d = h;
    d.data = b.data();
    d.device = b.device();
    return d;
  }
  void upload(const HostTensor &host, const Tensor &device) override {
    const Tensor h = const_cast<HostTensor &>(host).view(Device{Backend::cpu, 0});
    for (Buffer &b : buffers_)
      if (b.data() == device.data)
        b.copy_from_host(h.data, h.nbytes());
  }
  void download(const Tensor &device, HostTensor &host) override {
    const Tensor h = host.view(Device{Backend::cpu, 0});
    for (const Buffer &b : buffers_)
      if (b.data() == device.data)
        b.copy_to_host(h.data, h.nbytes());
  }
  void synchronize() override { kiln::synchronize(Device{Backend::cuda, 0}); }

private:
  std::deque<Buffer> buffers_;
};

// ---- the launch ---------------------------------------------------------------

struct RunOptions {
  std::string file;
  std::string kernel;
  std::string grid;
  int num_warps = 0;
  bool has_num_warps = false;
  int num_stages = 0;
  bool has_num_stages = false;
  bool debug = false;
  int repeat = 1;
  bool tune = false; ///< `kiln tune`: the kernel must be autotuned; its tuning is printed
  std::vector<std::string> outs;
  std::vector<std::string> assignments;
};

struct StagedTensor {
  std::string name;
  HostTensor host;
  Tensor device;
};

/// The launch's Args and everything they point at. An Arg holds raw
/// pointers (its name, tensor data, a jit function), so their owners live
/// here, in vectors reserved up front: a reallocation would move the
/// strings (a short one keeps its characters inline) and the Kernels.
class LaunchArgs {
public:
  void add(const std::string &name, Arg value) { args_.push_back(arg(keep(name), value)); }
  /// A launch option; `name` is a string literal, which lives forever.
  void add_option(const char *name, Arg value) { args_.push_back(arg(name, value)); }
  Arg function(Kernel fn) { return Arg(functions_.emplace_back(std::move(fn))); }
  /// A tensor staged where the launch runs, named `name` for --out ("x", "ptrs.1").
  Arg tensor(const std::string &name, HostTensor host, TensorStaging &staging) {
    StagedTensor &t = tensors_.emplace_back(StagedTensor{name, std::move(host), Tensor{}});
    t.device = staging.to_device(t.host);
    return Arg(t.device);
  }
  Arg tuple(std::vector<Arg> elems) { return Arg::tuple(tuples_.emplace_back(std::move(elems))); }
  /// A descriptor over the tensor staged as `name` (its --out name).
  Arg descriptor(const std::string &name, const DescriptorValue &d, TensorStaging &staging) {
    tensor(name, make_host_tensor(d.tensor), staging);
    return Arg(descriptors_.emplace_back(TensorDescriptor::from_tensor(
        tensors_.back().device, d.block_shape,
        d.nan_padding ? TensorDescriptor::Padding::nan : TensorDescriptor::Padding::zero)));
  }

  std::span<const Arg> args() const { return args_; }
  std::deque<StagedTensor> &tensors() { return tensors_; }
  StagedTensor *find_tensor(std::string_view name) {
    for (StagedTensor &t : tensors_)
      if (t.name == name)
        return &t;
    return nullptr;
  }

  /// A copy of `text` that lives as long as the arguments (a deque: taking
  /// more never moves the earlier ones).
  const char *keep(const std::string &text) { return names_.emplace_back(text).c_str(); }

private:
  // Deques: taking more never moves what the Args already point to.
  std::deque<std::string> names_;
  std::deque<Kernel> functions_;
  std::deque<StagedTensor> tensors_;
  std::deque<std::vector<Arg>> tuples_;
  std::deque<TensorDescriptor> descriptors_;
  std::vector<Arg> args_;
};

struct LaunchOutcome {
  LaunchResult binary;           ///< the kernel and where its binary came from
  std::vector<double> launch_us; ///< one per launch
  /// With --repeat K > 1: K launches back to back and one synchronize,
  /// divided by K: the kernel's own time once launches overlap it.
  double burst_us = 0;
};

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

LaunchOutcome launch(const Kernel &kernel, LaunchArgs &args, Grid fixed, const GridExpr *expr,
                     int repeat, TensorStaging &staging) {
  // A grid that reads the arguments is evaluated at each launch, on the
  // arguments that launch binds (an autotuner's config among them).
  const GridFn by_args = [expr](const BoundArgs &a) { return expr->eval(a); };
  auto run_once = [&] {
    return expr ? kernel.run(args.args(), by_args) : kernel.run(args.args(), fixed);
  };
  using Clock = std::chrono::steady_clock;
  LaunchOutcome out;
  // Get the binary first, apart from the launches: launch_us is then the
  // launch alone, and the source is that of this run's first look-up.
  out.binary = kernel.warmup(args.args());

  // Every launch starts from the same inputs, so --out shows the result of
  // one launch even for kernels that update a tensor in place (axpy).
  const bool autotuned = kernel.autotune().has_value();
  std::vector<HostTensor> initial;
  if (repeat > 1 || autotuned)
    for (StagedTensor &t : args.tensors())
      initial.push_back(t.host.clone());
  auto restore_inputs = [&] {
    for (std::size_t j = 0; j < initial.size(); ++j) {
      StagedTensor &t = args.tensors()[j];
      t.host.copy_from(initial[j]);
      staging.upload(t.host, t.device);
    }
    // A copy from pageable memory may still be in flight when it returns:
    // let it land before the clock starts.
    staging.synchronize();
  };
  // A launch that leaves an autotuned kernel's meta-parameters unset tunes
  // (or takes the tuning cache's choice): do that before the clock starts,
  // and report the kernel it chose, not the warmup's first config.
  if (autotuned) {
    const LaunchResult tuned = run_once();
    staging.synchronize();
    if (tuned.kernel && tuned.kernel != out.binary.kernel)
      out.binary.kernel = tuned.kernel;
    restore_inputs();
  }

  for (int i = 0; i < repeat; ++i) {
    if (i > 0)
      restore_inputs();
    const auto start = Clock::now();
    const LaunchResult r = run_once();
    staging.synchronize();
    out.launch_us.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (out.binary.kernel == nullptr)
      out.binary.kernel = r.kernel;
  }
  if (repeat > 1) {
    const auto start = Clock::now();
    for (int i = 0; i < repeat; ++i)
      run_once();
    staging.synchronize();
    out.burst_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / repeat;
    // --out shows one launch's result: start from the inputs once more.
    restore_inputs();
    run_once();
    staging.synchronize();
  }
  return out;
}

// ---- the report ---------------------------------------------------------------

struct WrittenOutput {
  std::string name;
  std::string path;
  DType dtype;
  std::vector<int64_t> shape;
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// Triton's repr of a compiled kernel: name, specialization, [options].
std::string kernel_repr(const CompiledKernel &k) {
  return k.name + k.specialization + "[" + k.options.str() + "]";
}

void print_json(const LaunchOutcome &o, const std::vector<WrittenOutput> &outputs) {
  const CompiledKernel *k = o.binary.kernel;
  const bool compiled = k != nullptr && o.binary.source == BinarySource::compiled;
  nlohmann::ordered_json j;
  j["kernel"] = k ? kernel_repr(*k) : "";
  j["key"] = k ? k->key : "";
  j["source"] = binary_source_name(o.binary.source);
  // Time spent compiling in this run: none on a cache hit.
  j["compile_ms"] = compiled ? k->total_ms() : 0.0;
  j["stages_ms"] = nlohmann::ordered_json::object();
  if (compiled)
    for (const StageTime &s : k->times)
      j["stages_ms"][s.stage] = s.ms;
  j["launch_us"] = median(o.launch_us);
  if (o.launch_us.size() > 1)
    j["burst_us"] = o.burst_us;
  j["outputs"] = nlohmann::ordered_json::array();
  for (const WrittenOutput &w : outputs)
    j["outputs"].push_back({{"name", w.name},
                            {"path", w.path},
                            {"dtype", std::string(dtype_short_name(w.dtype))},
                            {"shape", w.shape}});
  std::cout << j.dump(2) << '\n';
}

void print_human(const LaunchOutcome &o, const std::vector<WrittenOutput> &outputs, int verbosity) {
  const CompiledKernel *k = o.binary.kernel;
  std::ostream &out = std::cout;
  out << "kernel  " << (k ? kernel_repr(*k) : "(none)") << '\n';
  if (k) {
    out << "key     " << k->key << '\n';
    // --backend auto picks the GPU when there is one: say which it was.
    out << "target  " << k->target;
    if (k->registers >= 0)
      out << " (" << k->registers << " registers, " << k->spill_bytes << " bytes spilled, " << k->shared_bytes
          << " bytes shared)";
    out << '\n';
  }
  if (o.binary.source == BinarySource::compiled && k) {
    out << "binary  compiled in " << fixed(k->total_ms(), 2) << " ms\n";
    if (verbosity > 0)
      for (const StageTime &s : k->times)
        out << "          " << s.stage
            << std::string(s.stage.size() < 6 ? 6 - s.stage.size() : 0, ' ') << ' '
            << fixed(s.ms, 2) << " ms\n";
  } else {
    out << "binary  " << binary_source_name(o.binary.source) << " cache hit\n";
  }
  out << "launch  " << fixed(median(o.launch_us), 1) << " µs";
  if (o.launch_us.size() > 1)
    out << " (median of " << o.launch_us.size() << "; " << fixed(o.burst_us, 1)
        << " µs each back to back)";
  out << '\n';
  for (const WrittenOutput &w : outputs)
    out << "wrote   " << w.name << " -> " << w.path << " (" << dtype_short_name(w.dtype) << ", "
        << format_shape(w.shape) << ")\n";
}

// ---- the command ----------------------------------------------------------------

/// The words of the command line, checked: everything that can be checked
/// without reading FILE, so that a typo does not cost a compile.
struct CheckedWords {
  Grid grid;
  std::optional<GridExpr> grid_expr;   ///< set when --grid reads the arguments
  std::vector<Assignment> assignments; ///< NAME=VALUE, each name once
  std::vector<Assignment> outs;        ///< --out NAME=path, each NAME among `assignments`
};

CheckedWords check_words(const RunOptions &o) {
  CheckedWords w;
  if (is_grid_expr(o.grid))
    w.grid_expr = GridExpr::parse(o.grid);
  else
    w.grid = parse_grid(o.grid);
  std::set<std::string, std::less<>> given;
  for (const std::string &word : o.assignments) {
    Assignment a = parse_assignment(word, "argument");
    if (!given.insert(a.name).second)
      throw UsageError("argument " + in_quotes(a.name) + " is given twice");
    w.assignments.push_back(std::move(a));
  }
  for (auto [flag, name, set] : {std::tuple{"--num-warps", "num_warps", o.has_num_warps},
                                 std::tuple{"--num-stages", "num_stages", o.has_num_stages},
                                 std::tuple{"--debug", "debug", o.debug}})
    if (set && given.count(name))
      throw UsageError(std::string(name) + " is given both as " + flag + " and as " + name + "=");
  for (const std::string &word : o.outs) {
    Assignment a = parse_assignment(word, "--out", true);
    const std::string root = a.name.substr(0, a.name.find('.'));
    if (!given.count(root))
      throw UsageError("--out " + a.name + ": there is no argument " + in_quotes(root) +
                       "; give the tensor as " + root + "=zeros:SHAPE:DTYPE or " + root +
                       "=@file.npy");
    w.outs.push_back(std::move(a));
  }
  return w;
}

/// Classifies every VALUE against the module's jit functions, and checks
/// that each --out names a tensor.
std::vector<ArgValue> classify_all(const CheckedWords &w, const Module &module, const Kernel &kernel) {
  const std::vector<std::string> functions = module.function_names();
  std::vector<ArgValue> values;
  for (const Assignment &a : w.assignments) {
    bool is_constexpr = false;
    for (const KernelParam &p : kernel.params())
      is_constexpr |= p.name == a.name && p.is_constexpr;
    values.push_back(classify_value(a.name, a.value, functions, is_constexpr));
  }
  for (const Assignment &out : w.outs) {
    const std::size_t dot = out.name.find('.');
    const auto it =
        std::find_if(w.assignments.begin(), w.assignments.end(),
                     [&](const Assignment &a) { return a.name == out.name.substr(0, dot); });
    const ArgValue *v = &values[static_cast<std::size_t>(it - w.assignments.begin())];
    // A tuple element's path: "ptrs.1.0" -> elems[1].elems[0].
    for (std::size_t at = dot; v && at != std::string::npos;) {
      const std::size_t next = out.name.find('.', at + 1);
      const std::string index =
          out.name.substr(at + 1, next == std::string::npos ? next : next - at - 1);
      const auto *t = std::get_if<TupleValue>(v);
      std::size_t i = 0;
      const auto [p, ec] = std::from_chars(index.data(), index.data() + index.size(), i);
      v = t && ec == std::errc() && p == index.data() + index.size() && i < t->elems.size()
              ? &t->elems[i]
              : nullptr;
      at = next;
    }
    if (!v ||
        !(std::holds_alternative<TensorSpec>(*v) || std::holds_alternative<DescriptorValue>(*v)))
      throw UsageError("--out " + out.name + ": " + in_quotes(out.name) +
                       " is not a tensor argument (its value " + in_quotes(it->value) +
                       " is not, or has no element that is, @file.npy, zeros:SHAPE:DTYPE or "
                       "empty:SHAPE:DTYPE)");
  }
  return values;
}

template <class... F> struct Overloaded : F... { using F::operator()...; };
template <class... F> Overloaded(F...) -> Overloaded<F...>;

/// The Arg of one value of argument `name` (or of its element `name.i`),
/// making the tensors and jit functions it asks for.
Arg bind_value(LaunchArgs &args, const std::string &name, const ArgValue &value,
               const Module &module, TensorStaging &staging) {
  return std::visit(
      Overloaded{
          [&](const TensorSpec &s) { return args.tensor(name, make_host_tensor(s), staging); },
          [&](const FunctionRef &f) { return args.function(module.kernel(f.name)); },
          [&](const StringValue &s) { return Arg(args.keep(s.text)); },
          [&](const DescriptorValue &d) { return args.descriptor(name, d, staging); },
          [&](const TupleValue &t) {
            std::vector<Arg> elems;
            for (std::size_t i = 0; i < t.elems.size(); ++i)
              elems.push_back(
                  bind_value(args, name + "." + std::to_string(i), t.elems[i], module, staging));
            return args.tuple(std::move(elems));
          },
          [&](const auto &scalar) { return Arg(scalar); },
      },
      value);
}

/// Makes the tensors and jit functions the values ask for, and the Args.
void bind(LaunchArgs &args, const CheckedWords &w, const std::vector<ArgValue> &values,
          const RunOptions &o, const Module &module, TensorStaging &staging) {
  for (std::size_t i = 0; i < values.size(); ++i)
    args.add(w.assignments[i].name,
             bind_value(args, w.assignments[i].name, values[i], module, staging));
  if (o.has_num_warps)
    args.add_option("num_warps", o.num_warps);
  if (o.has_num_stages)
    args.add_option("num_stages", o.num_stages);
  // On the cpu `kiln run` owns every array, so it checks each load and
  // store against them (debug=True) unless told otherwise (debug=False,
  // KILN_DEBUG): a too-small output is an error naming the argument, not
  // a corrupted heap.
  const bool debug_given = std::any_of(w.assignments.begin(), w.assignments.end(),
                                       [](const Assignment &a) { return a.name == "debug"; });
  if (o.debug || (staging.backend() == Backend::cpu && !debug_given && !std::getenv("KILN_DEBUG")))
    args.add_option("debug", true);
}

std::vector<WrittenOutput> write_outputs(const std::vector<Assignment> &outs, LaunchArgs &args,
                                         TensorStaging &staging) {
  std::vector<WrittenOutput> written;
  for (const Assignment &out : outs) {
    StagedTensor *t = args.find_tensor(out.name);
    assert(t != nullptr); // classify_all checked that every --out names a tensor
    staging.download(t->device, t->host);
    write_npy(out.value, t->host);
    written.push_back({out.name, out.value, t->host.dtype(), t->host.shape()});
  }
  return written;
}

void run(const RunOptions &o, const CommonOptions &common) {
  const CheckedWords words = check_words(o);

  apply_common_options(common);
  if (o.tune) // read with the other knobs when the runtime starts, below
    ::setenv("KILN_PRINT_AUTOTUNING", "1", 1);
  const std::unique_ptr<TensorStaging> staging = make_tensor_staging(common.backend);
  // The runtime must compile for the backend the tensors live on.
  set_device(Device{staging->backend(), 0});

  const Module module = Module::from_file(o.file);
  const Kernel kernel = module.kernel(o.kernel);
  if (words.grid_expr)
    for (const std::string &name : words.grid_expr->names())
      if (std::none_of(kernel.params().begin(), kernel.params().end(),
                       [&](const KernelParam &p) { return p.name == name; }))
        throw UsageError("--grid '" + o.grid + "' reads '" + name +
                         "', which is not a parameter of " + o.kernel);
  if (o.tune && !kernel.autotune())
    throw UsageError(o.kernel + " has no @triton.autotune configs to tune; `kiln run` launches it");
  const std::vector<ArgValue> values = classify_all(words, module, kernel);

  LaunchArgs args;
  bind(args, words, values, o, module, *staging);
  const LaunchOutcome outcome = launch(
      kernel, args, words.grid, words.grid_expr ? &*words.grid_expr : nullptr, o.repeat, *staging);
  const std::vector<WrittenOutput> written = write_outputs(words.outs, args, *staging);

  if (common.json)
    print_json(outcome, written);
  else
    print_human(outcome, written, common.verbosity);
}

constexpr const char *kValueHelp = R"(VALUE is, in this order:
  None                           Python's None
  true, false                    a bool
  10007, -3, 0xff                an integer (specialized as the runtime does)
  1.5, 1e-5, inf                 a float (the kernel sees fp32)
  @in.npy, @in.npy:bf16          a tensor read from a .npy file (:bf16 reads a
                                 uint16 file as bf16 bit patterns)
  zeros:1000x64:f32, empty:N:f16 a new tensor; dtypes f16 bf16 f32 f64 i8 i16
                                 i32 i64 u8 u16 u32 u64 i1
  relu                           a jit function of FILE (a constexpr the kernel calls)
  (4, @x.npy)                    a tuple of values
  tensordesc(@a.npy, [64, 32])   a tensor descriptor over a tensor VALUE with
                                 that block shape; tensordesc(T, [64, 32], nan)
                                 reads NaN outside the tensor
Parameters not given take their defaults.)";

} // namespace

Grid parse_grid(std::string_view text) {
  const auto bad = [&] {
    return UsageError(
        "--grid " + in_quotes(text) +
        " is not 1 to 3 non-negative integers joined by commas, like 10, 4,8 or 4,8,2");
  };
  uint32_t dims[3] = {1, 1, 1};
  std::size_t n = 0, start = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    uint32_t v = 0;
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (n == 3 || part.empty() || ec != std::errc() || p != part.data() + part.size())
      throw bad();
    dims[n++] = v;
    if (end == text.size()) {
      const Grid g(dims[0], dims[1], dims[2]);
      if (!g.within_limits())
        throw UsageError("--grid " + in_quotes(text) + ": " + grid_limits_message(g));
      return g;
    }
    start = end + 1;
  }
}

Assignment parse_assignment(std::string_view text, std::string_view what, bool element) {
  const std::size_t eq = text.find('=');
  const std::string w(what);
  if (eq == std::string_view::npos)
    throw UsageError(w + " " + in_quotes(text) + " is not NAME=VALUE");
  Assignment a{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  const std::string_view root =
      std::string_view(a.name).substr(0, element ? a.name.find('.') : a.name.size());
  if (!is_identifier(root) || (root.size() < a.name.size() && a.name.back() == '.'))
    throw UsageError(w + " " + in_quotes(text) + ": " + in_quotes(a.name) +
                     " is not a parameter name");
  if (a.value.empty())
    throw UsageError(w + " " + in_quotes(text) + " has nothing after '='");
  return a;
}

namespace {

/// tensordesc(TENSOR, [B0, ...]) or tensordesc(TENSOR, [B0, ...], nan).
DescriptorValue descriptor_value(std::string_view name, std::string_view value) {
  const auto bad = [&](const std::string &why) {
    return UsageError(
        "argument " + in_quotes(name) + ": " + in_quotes(value) + " " + why +
        "; write tensordesc(@a.npy, [64, 32]) or tensordesc(zeros:128x64:f16, [64, 32], nan)");
  };
  const std::vector<std::string> parts =
      split_tuple(value.substr(std::string_view("tensordesc").size()));
  if (parts.size() < 2 || parts.size() > 3 ||
      (parts.size() == 3 && parts[2] != "nan" && parts[2] != "zero"))
    throw bad("is not a tensor, a block shape and an optional padding");
  DescriptorValue d;
  d.nan_padding = parts.size() == 3 && parts[2] == "nan";
  try {
    std::optional<TensorSpec> t = parse_tensor_spec(parts[0]);
    if (!t)
      throw bad("does not start with a tensor (@file.npy, zeros:SHAPE:DTYPE, empty:SHAPE:DTYPE)");
    d.tensor = *std::move(t);
  } catch (const ArgumentError &e) {
    throw UsageError("argument " + in_quotes(name) + ": " + e.what());
  }
  const std::string &block = parts[1];
  if (block.size() < 2 || !((block.front() == '[' && block.back() == ']') ||
                            (block.front() == '(' && block.back() == ')')))
    throw bad("has no block shape in brackets");
  for (const std::string &b : split_tuple("(" + block.substr(1, block.size() - 2) + ")")) {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(b.data(), b.data() + b.size(), v);
    if (ec != std::errc() || p != b.data() + b.size())
      throw bad("has a block dim " + in_quotes(b) + " that is not an integer");
    d.block_shape.push_back(v);
  }
  return d;
}

} // namespace

ArgValue classify_value(std::string_view name, std::string_view value,
                        std::span<const std::string> function_names, bool constexpr_param) {
  if (value.starts_with("tensordesc("))
    return descriptor_value(name, value);
  if (value.starts_with('(')) {
    TupleValue t;
    const std::vector<std::string> parts = split_tuple(value);
    for (std::size_t i = 0; i < parts.size(); ++i)
      t.elems.push_back(classify_value(std::string(name) + "." + std::to_string(i), parts[i],
                                       function_names, constexpr_param));
    return t;
  }
  if (value == "None")
    return nullptr;
  // A quoted constexpr ('gelu', "ue8m0") is that string, quotes removed, even
  // where a jit function has the name: as kiln compile's specs read it.
  if (constexpr_param && value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front())
    return StringValue{std::string(value.substr(1, value.size() - 2))};
  if (value == "true" || value == "True")
    return true;
  if (value == "false" || value == "False")
    return false;
  if (const auto i = integer_literal(name, value))
    return std::visit([](auto v) { return ArgValue(v); }, *i);
  if (std::optional<double> f = float_literal(name, value))
    return *f;
  try {
    if (std::optional<TensorSpec> spec = parse_tensor_spec(value))
      return *std::move(spec);
  } catch (const ArgumentError &e) {
    throw UsageError("argument " + in_quotes(name) + ": " + e.what());
  }
  if (std::find(function_names.begin(), function_names.end(), value) != function_names.end())
    return FunctionRef{std::string(value)};
  if (std::optional<DType> t = parse_language_dtype(value))
    return *t;
  if (constexpr_param)
    return StringValue{std::string(value)};
  throw UsageError("argument " + in_quotes(name) + ": " + in_quotes(value) +
                   " is not a number, true/false, a tensor (@file.npy, zeros:SHAPE:DTYPE, "
                   "empty:SHAPE:DTYPE) or a jit function of the file (" +
                   (function_names.empty() ? std::string("it has none") : joined(function_names)) +
                   ")");
}

std::unique_ptr<TensorStaging> make_tensor_staging(std::string_view backend) {
  // "auto" is cpu until there is a cuda staging: the runtime must compile
  // for the place the tensors are in, and only host memory exists so far.
  if (backend == "cpu" || (backend == "auto" && !cuda_available()))
    return std::make_unique<CpuStaging>();
  if (backend == "cuda" || backend == "auto") {
    if (!cuda_available())
      throw RuntimeError("--backend cuda: there is no usable GPU here; use --backend cpu");
    return std::make_unique<CudaStaging>();
  }
  throw UsageError("--backend " + in_quotes(backend) + " is not cpu, cuda or auto");
}

namespace {

/// `kiln run`, or `kiln tune` (`tune`): the same words, the same launch.
void add_launch_command(CLI::App &app, CommonOptions &common, bool tune) {
  // Shared with the callback, which runs during app.parse(); the App keeps
  // the callback (and so the options) alive as long as itself.
  auto o = std::make_shared<RunOptions>();
  o->tune = tune;
  CLI::App *sub =
      tune
          ? app.add_subcommand(
                "tune",
                "Tune an @triton.autotune KERNEL ahead of time: compile every config, time each on "
                "these arguments, print the times and the choice, and store it in the cache "
                "(KILN_CACHE_DIR/tuning) where later launches and processes find it")
          : app.add_subcommand(
                "run",
                "Load FILE, bind NAME=VALUE arguments, compile (or hit a cache), launch KERNEL and "
                "report");
  sub->add_option("FILE", o->file, "the kernel file")->required()->type_name("");
  sub->add_option("KERNEL", o->kernel, "the @triton.jit function to launch")
      ->required()
      ->type_name("");
  sub->add_option("ARGS", o->assignments, "arguments by parameter name, in any order")
      ->type_name("NAME=VALUE");
  sub->add_option(
         "--grid", o->grid,
         "programs per axis: 10, 4,8 or 4,8,2; or per axis a product of integers, parameter "
         "names and cdiv(a,b), evaluated at each launch: 'cdiv(M,BM),cdiv(N,BN)'")
      ->required()
      ->type_name("G");
  CLI::Option *warps = require_num_warps(
      sub->add_option("--num-warps", o->num_warps, "the num_warps option")->type_name("N"));
  CLI::Option *stages = require_at_least(
      sub->add_option("--num-stages", o->num_stages, "the num_stages option")->type_name("N"), 0);
  sub->add_flag("--debug", o->debug,
                "compile with debug=True (checks device_assert; on the cpu, the default of kiln "
                "run, also every "
                "load and store against its arrays; debug=False turns it off)");
  // One value per --out: without allow_extra_args(false) CLI11 would swallow
  // the NAME=VALUE words that follow into the list.
  sub->add_option("--out", o->outs, "after the launch, write tensor NAME to a .npy file")
      ->type_name("NAME=path.npy")
      ->allow_extra_args(false);
  require_at_least(
      sub->add_option("--repeat", o->repeat, "launch K times; report the median launch time")
          ->type_name("K"),
      1);
  add_common_options(*sub, common);
  sub->footer(kValueHelp);
  sub->callback([o, &common, warps, stages] {
    o->has_num_warps = warps->count() > 0;
    o->has_num_stages = stages->count() > 0;
    run(*o, common);
  });
}

} // namespace

void add_run_command(CLI::App &app, CommonOptions &common) {
  add_launch_command(app, common, false);
}

void add_tune_command(CLI::App &app, CommonOptions &common) {
  add_launch_command(app, common, true);
}

} // namespace kiln::cli
