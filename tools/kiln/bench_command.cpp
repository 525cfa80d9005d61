// `kiln bench [SECTION ...] [--json] [--out FILE] [--quick]` (shared/CLI.md):
// the one benchmark harness, cpu or cuda. Each section is a fixed workload
// timed several times and reported as medians, with min and max under a
// sibling "spread" key (`kiln help bench` lists every key):
//   compile     per shared kernel, one representative specialization:
//               cold_ms, compile + load in a fresh process with no cache (this
//               binary re-executed with the hidden __bench-cold subcommand, so
//               LLVM and the runtime start from nothing, as in a user's first
//               launch); memory_hit_us, warmup() of it once compiled;
//               disk_hit_ms, the same in a fresh process whose disk cache
//               holds the binary (file read, parse, key, disk read and check,
//               load), once the process has loaded another kernel (the
//               runtime's one-time set-up is not a per-kernel cost);
//               disk_lookup_ms, the warmup() call alone of that.
//   launch      dispatch_ns_*: the launch path on a memory hit with the driver
//               call left out (LaunchSpec::dispatch_only); launch_us: a real
//               launch of empty_kernel on one program; raw_launch_us: null on cpu.
//   warmup      the 40 specs of bench/warmup40.jsonl compiled in-process on 1
//               thread and on all cores, in an AsyncCompileMode (the pool).
//   throughput  generated code against anchors: on cpu bench_cpu.hpp, on cuda
//               bench_gpu.hpp.
//   dot         tensor-core workloads, cuda only (bench_dot.hpp).
#include "tools/kiln/bench_command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <tbb/info.h>
#include <tbb/partitioner.h>

#include "kiln/arg.hpp"
#include "kiln/buffer.hpp"
#include "kiln/error.hpp"
#include "kiln/kernel.hpp"
#include "kiln/module.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/spec_args.hpp"
#include "tools/kiln/bench_cpu.hpp"
#include "tools/kiln/bench_dot.hpp"
#include "tools/kiln/bench_gpu.hpp"
#include "tools/kiln/bench_numbers.hpp"
#include "tools/kiln/bench_parse.hpp"
#include "tools/kiln/bench_report.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/summary.hpp"

extern char **environ; // POSIX: the environment posix_spawn passes on

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json; // keys in CLI.md's order

/// The hidden subcommand `bench compile` runs in a child process.
constexpr const char *kColdCommand = "__bench-cold";

// Sample sizes. Cold compiles cost a process each (tens of ms), hence few;
// in-process calls take 0.1 to a few µs, so they are timed in batches that
// amortise the clock reads, and the batch means are the samples.
constexpr int kColdRuns = 5, kQuickColdRuns = 3; // per kernel, each of cold and disk hit
constexpr int kHitBatches = 50, kHitCalls = 1000;            // 50k warmup() hits per kernel
constexpr int kDispatchBatches = 100, kDispatchCalls = 2000; // 200k dispatches
constexpr int kLaunchBatches = 50, kLaunchCalls = 200;       // 10k launches
constexpr int kWarmupRuns = 3, kQuickWarmupRuns = 1;         // per thread count
constexpr std::size_t kQuickWorkloads = 2; // --quick: add_kernel and softmax_kernel

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Times `batches` batches of `calls` calls of `fn`; returns the mean time
/// per call of each batch, in the unit of `Period` (std::nano, std::micro).
template <class Period, class F> std::vector<double> time_per_call(int batches, int calls, F &&fn) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(batches));
  for (int b = 0; b < batches; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
      fn();
    out.push_back(std::chrono::duration<double, Period>(Clock::now() - t0).count() / calls);
  }
  return out;
}

// ---- the fixed workloads -------------------------------------------------------

/// One representative specialization of a shared kernel: the arguments of
/// its case in scripts/kernel-cases, so the integer specializations (16-
/// divisible or not, equal to 1) are the realistic ones. Pointers are
/// Arg::mock, which warmup never dereferences.
struct Workload {
  const char *file; ///< under <shared>/kernels
  const char *kernel;
  std::vector<Arg> args; ///< all by name; the names are string literals
};

Arg mock(const char *name, DType t) {
  return arg(name, Arg::mock(t));
}

std::vector<Workload> compile_workloads() {
  using enum DType;
  return {
      {"vector_add.py",
       "add_kernel",
       {mock("x_ptr", f32), mock("y_ptr", f32), mock("out_ptr", f32), arg("n", 10007),
        arg("BLOCK", 1024)}},
      {"softmax.py",
       "softmax_kernel",
       {mock("out_ptr", f32), mock("in_ptr", f32), arg("in_stride", 781), arg("out_stride", 781),
        arg("n_cols", 781), arg("BLOCK", 1024)}},
      {"layernorm.py",
       "layernorm_fwd",
       {mock("x_ptr", f32), mock("y_ptr", f32), mock("w_ptr", f32), mock("b_ptr", f32),
        mock("mean_ptr", f32), mock("rstd_ptr", f32), arg("stride", 3001), arg("n_cols", 3001),
        arg("eps", 1e-5), arg("BLOCK", 512)}},
      {"matmul.py",
       "matmul_kernel",
       {mock("a_ptr", f16), mock("b_ptr", f16), mock("c_ptr", f16), arg("M", 100), arg("N", 130),
        arg("K", 70), arg("stride_am", 70), arg("stride_ak", 1), arg("stride_bk", 130),
        arg("stride_bn", 1), arg("stride_cm", 130), arg("stride_cn", 1), arg("BM", 32),
        arg("BN", 32), arg("BK", 32)}},
      {"reductions.py",
       "reduce_rows",
       {mock("x_ptr", f32), mock("sum_ptr", f32), mock("max_ptr", f32), mock("argmin_ptr", i32),
        arg("M", 50), arg("N", 60), arg("stride", 60), arg("BM", 16), arg("BN", 64)}},
      {"reductions.py",
       "prefix_sum",
       {mock("x_ptr", i32), mock("out_ptr", i32), arg("n", 1000), arg("BLOCK", 1024)}},
      {"atomics.py",
       "histogram",
       {mock("x_ptr", i32), mock("hist_ptr", i32), arg("n", 5000), arg("n_bins", 32),
        arg("BLOCK", 512)}},
      {"composition.py",
       "normalize",
       {mock("x_ptr", f32), mock("out_ptr", f32), arg("n", 700), arg("BLOCK", 1024)}},
      {"control_flow.py",
       "collatz_steps",
       {mock("x_ptr", i32), mock("out_ptr", i32), arg("n", 8), arg("BLOCK", 1)}},
      {"control_flow.py",
       "poly",
       {mock("x_ptr", f32), mock("out_ptr", f32), arg("n", 300), arg("DEGREE", 4),
        arg("BLOCK", 256)}},
      {"dtypes.py",
       "convert",
       {mock("x_ptr", f32), mock("h_ptr", f16), mock("b_ptr", bf16), arg("n", 999),
        arg("BLOCK", 256)}},
      {"dtypes.py",
       "int_ops",
       {mock("a_ptr", i32), mock("b_ptr", i32), mock("q_ptr", i32), mock("r_ptr", i32),
        mock("s_ptr", i32), arg("n", 999), arg("BLOCK", 256)}},
  };
}

std::string kernel_file(const std::string &shared, const char *file) {
  return (fs::path(shared) / "kernels" / file).string();
}

/// A kernel with 16 runtime parameters (12 pointers, 4 ints) and nothing
/// to do, for the dispatch cost per argument. BLOCK is passed by name as in
/// the 4-argument case, so the two differ only in the 12 extra arguments.
constexpr const char *kArgs16Source = R"(import triton
import triton.language as tl


@triton.jit
def args16_kernel(p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, n0, n1, n2, n3,
                  BLOCK: tl.constexpr):
    pass
)";

// ---- running this binary again -------------------------------------------------

/// A fresh directory under the system temp dir, removed with its contents
/// on destruction: the cold runs' cache, so none sees another's binaries.
class TempDir {
public:
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "kiln-bench-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr)
      throw RuntimeError("cannot create a temporary cache directory in " +
                         fs::temp_directory_path().string() + ": " + std::strerror(errno));
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ignored; // a leftover temp dir is not worth failing the bench
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Runs this binary (/proc/self/exe) with `args` (args[0] is its argv[0])
/// and our environment with `env` ("NAME=value") replacing or adding
/// entries, and returns its stdout. Its stderr is ours, so a child that
/// fails explains itself there. Throws RuntimeError when it fails.
std::string run_self(const std::vector<std::string> &args, const std::vector<std::string> &env) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<char *> envp;
  for (char **e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string &x) {
      return x.size() > name.size() && x.compare(0, name.size(), name) == 0 &&
             x[name.size()] == '=';
    });
    if (!replaced)
      envp.push_back(*e);
  }
  for (const std::string &e : env)
    envp.push_back(const_cast<char *>(e.c_str()));
  envp.push_back(nullptr);

  // Close-on-exec, so the only copy of the write end in the child is its
  // stdout and the read below sees end-of-file when the child exits.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw RuntimeError(std::string("cannot create a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  pid_t pid = 0;
  const int err =
      ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw RuntimeError(std::string("cannot run /proc/self/exe again: ") + std::strerror(err));
  }

  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0)
      out.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string command;
    for (const std::string &a : args)
      command.append(command.empty() ? "" : " ").append(a);
    throw RuntimeError("'" + command + "' failed (" +
                       (WIFEXITED(status)
                            ? "exit status " + std::to_string(WEXITSTATUS(status))
                            : "killed by signal " + std::to_string(WTERMSIG(status))) +
                       ")");
  }
  return out;
}

// ---- compile -------------------------------------------------------------------

struct CompileFigures {
  std::string kernel;
  Summary cold_ms;       ///< compile + load in a fresh process
  Summary compiler_ms;   ///< of which the compiler's own stages (CompiledKernel::total_ms)
  Summary memory_hit_us; ///< warmup() once compiled
  Summary disk_hit_ms;   ///< file read to binary loaded, in a fresh process, from the disk cache
  Summary disk_lookup_ms; ///< of which the warmup() call (key, disk read and check, load)
  std::vector<std::pair<std::string, double>> stage_ms; ///< median per compiler stage
  std::string error;     ///< why this kernel has no figures; empty when it has
};

/// What the hidden subcommand does in the child: times loading the file and
/// warming up the workload's specialization, from before the file is read
/// to after the binary is loaded, so it holds all a first launch in a new
/// process pays (parsing, the runtime's and LLVM's set-up, compile, load).
/// Prints "<wall ms> <compiler stages ms>" on stdout.
/// `expect`: where the binary must come from ("compiled", "disk", "remote":
/// bench/remote_bench runs it against a disk cache and Redis); `warm`:
/// another kernel goes first, untimed (always, for a disk or remote hit).
void run_cold(const std::string &kernel, const std::string &shared, const std::string &expect,
              bool warm) {
  std::vector<Workload> all = compile_workloads();
  const auto w =
      std::find_if(all.begin(), all.end(), [&](const Workload &x) { return kernel == x.kernel; });
  if (w == all.end())
    throw UsageError("'" + kernel + "' is not one of the bench's kernels");

  if (warm || expect != "compiled") {
    // The per-kernel cost, not the process's one-time set-up (the driver,
    // LLVM's targets, the JIT): another kernel goes first, untimed.
    const Module m = Module::from_file(kernel_file(shared, "vector_add.py"));
    m.kernel("empty_kernel").warmup(std::vector<Arg>{mock("x_ptr", DType::f32), arg("n", 16), arg("BLOCK", 16)});
  }
  const auto t0 = Clock::now();
  const Module module = Module::from_file(kernel_file(shared, w->file));
  const Kernel k = module.kernel(w->kernel);
  const auto t1 = Clock::now();
  const LaunchResult r = k.warmup(w->args);
  const double wall_ms = ms_since(t0), warmup_ms = ms_since(t1);
  if (binary_source_name(r.source) != expect || r.kernel == nullptr)
    throw RuntimeError(kernel + ": the run found its binary in " + binary_source_name(r.source) +
                       ", not " + expect);
  std::printf("%.6f %.6f %.6f", wall_ms, r.kernel->total_ms(), warmup_ms);
  for (const StageTime &t : r.kernel->times) // the plot's compile latency by stage
    std::printf(" %s=%.6f", t.stage.c_str(), t.ms);
  std::printf("\n");
}

/// Times one workload: its cold runs, then its memory hits in this process.
/// The cold runs come first and double as a canary: a compile that crashes
/// kills a child, not the bench, and its in-process part is then skipped.
CompileFigures bench_compile_one(const Workload &w, const std::string &shared,
                                 const std::string &backend, int runs) {
  CompileFigures f;
  f.kernel = w.kernel;
  std::vector<double> cold, compiler;
  std::map<std::string, std::vector<double>> stages;
  std::vector<std::string> stage_order; // the pipeline's, as the child prints them
  for (int i = 0; i < runs; ++i) {
    // A fresh, empty cache directory and no reuse: when the disk cache
    // lands, this stays a cold compile.
    const TempDir cache;
    const std::string out = run_self({"kiln", kColdCommand, w.kernel, "--shared", shared},
                                     {"KILN_CACHE_DIR=" + cache.path(), "KILN_ALWAYS_COMPILE=1",
                                      "KILN_BACKEND=" + backend, "KILN_NO_CACHE=0"});
    double wall_ms = 0, compiler_ms = 0;
    if (std::sscanf(out.c_str(), "%lf %lf", &wall_ms, &compiler_ms) != 2)
      throw RuntimeError("the cold run printed '" + out + "', not two times");
    std::istringstream words(out);
    for (std::string word; words >> word;)
      if (const auto eq = word.find('='); eq != std::string::npos) {
        const std::string stage = word.substr(0, eq);
        if (!stages.contains(stage))
          stage_order.push_back(stage);
        stages[stage].push_back(std::strtod(word.c_str() + eq + 1, nullptr));
      }
    cold.push_back(wall_ms);
    compiler.push_back(compiler_ms);
  }
  f.cold_ms = summarize(cold);
  f.compiler_ms = summarize(compiler);
  for (const std::string &stage : stage_order)
    f.stage_ms.emplace_back(stage, summarize(stages[stage]).median);
  {
    // One compile fills a cache; then fresh processes read it.
    const TempDir cache;
    const std::vector<std::string> env = {"KILN_CACHE_DIR=" + cache.path(),
                                          "KILN_BACKEND=" + backend, "KILN_NO_CACHE=0"};
    run_self({"kiln", kColdCommand, w.kernel, "--shared", shared}, env);
    std::vector<double> hit, lookup;
    for (int i = 0; i < runs; ++i) {
      const std::string out = run_self({"kiln", kColdCommand, w.kernel, "--shared", shared, "--disk"}, env);
      double wall_ms = 0, compiler_ms = 0, warmup_ms = 0;
      if (std::sscanf(out.c_str(), "%lf %lf %lf", &wall_ms, &compiler_ms, &warmup_ms) != 3)
        throw RuntimeError("the disk-hit run printed '" + out + "', not three times");
      hit.push_back(wall_ms);
      lookup.push_back(warmup_ms);
    }
    f.disk_hit_ms = summarize(hit);
    f.disk_lookup_ms = summarize(lookup);
  }

  const Module module = Module::from_file(kernel_file(shared, w.file));
  const Kernel kernel = module.kernel(w.kernel);
  kernel.warmup(w.args); // the compile; what follows are hits
  int misses = 0;
  f.memory_hit_us = summarize(time_per_call<std::micro>(kHitBatches, kHitCalls, [&] {
    misses += kernel.warmup(w.args).source != BinarySource::memory;
  }));
  if (misses != 0)
    throw RuntimeError(std::to_string(misses) +
                       " warmup() calls of a compiled specialization missed the memory cache");
  return f;
}

/// Every workload; one that fails is reported in its `error` and the
/// others still run, so one broken kernel does not cost the whole table.
std::vector<CompileFigures> bench_compile(const std::string &shared, const std::string &backend,
                                          bool quick) {
  std::vector<Workload> workloads = compile_workloads();
  if (quick)
    workloads.resize(kQuickWorkloads);
  std::vector<CompileFigures> figures;
  for (const Workload &w : workloads) {
    try {
      figures.push_back(bench_compile_one(w, shared, backend, quick ? kQuickColdRuns : kColdRuns));
    } catch (const std::exception &e) {
      CompileFigures failed;
      failed.kernel = w.kernel;
      failed.error = e.what();
      figures.push_back(std::move(failed));
    }
  }
  return figures;
}

// ---- launch --------------------------------------------------------------------

struct LaunchFigures {
  Summary dispatch_ns_4args, dispatch_ns_16args, launch_us;
  std::optional<double> raw_launch_us; ///< cuda: cuLaunchKernel of the same cubin, straight
};

/// ns per call of the launch path on a memory hit without the driver call.
Summary dispatch_ns(const Kernel &kernel, std::span<const Arg> args, Grid grid) {
  runtime::JitFunction &fn = *kernel.impl();
  runtime::JitFunction::LaunchSpec spec;
  spec.grid = grid;
  spec.dispatch_only = true;
  fn.run(args, spec); // compiles; the figure is of hits
  int misses = 0;
  Summary s = summarize(time_per_call<std::nano>(kDispatchBatches, kDispatchCalls, [&] {
    misses += fn.run(args, spec).source != BinarySource::memory;
  }));
  if (misses != 0)
    throw RuntimeError(kernel.name() +
                       ": dispatches of a compiled specialization missed the cache");
  return s;
}

LaunchFigures bench_launch(const std::string &shared, bool cuda) {
  LaunchFigures f;
  // Real, 16-byte aligned buffers (never read: dispatch_only stops before
  // the driver, and empty_kernel touches nothing), so the pointers
  // specialize as a real launch's would; device memory on cuda.
  constexpr int32_t n = 1 << 20;
  std::vector<float> buffer(16 * 16);
  std::optional<Buffer> device;
  if (cuda)
    device = Buffer::allocate(Device{Backend::cuda, 0}, buffer.size() * sizeof(float));
  float *p = cuda ? static_cast<float *>(device->data()) : buffer.data();

  const Module vector_add = Module::from_file(kernel_file(shared, "vector_add.py"));
  const Kernel add = vector_add.kernel("add_kernel");
  const Arg args4[] = {p, p + 16, p + 32, n, arg("BLOCK", 1024)};
  f.dispatch_ns_4args = dispatch_ns(add, args4, Grid(static_cast<uint32_t>(cdiv(n, 1024))));

  const Module many = Module::from_string(kArgs16Source, "<bench: args16_kernel>");
  const Kernel args16 = many.kernel("args16_kernel");
  const Arg args16_values[] = {
      p,       p + 16,  p + 32,  p + 48, p + 64, p + 80, p + 96, p + 112,           p + 128,
      p + 144, p + 160, p + 176, n,      4096,   1000,   17,     arg("BLOCK", 1024)};
  f.dispatch_ns_16args =
      dispatch_ns(args16, args16_values, Grid(static_cast<uint32_t>(cdiv(n, 1024))));

  const Kernel empty = vector_add.kernel("empty_kernel");
  const Arg empty_args[] = {p, n, arg("BLOCK", 1024)};
  const LaunchResult compiled = empty.run(empty_args, Grid(1)); // the compile
  // Host time per launch; on cuda each batch ends in a synchronize so the
  // launch queue never fills and the figure stays the host's cost.
  std::vector<double> batches;
  for (int b = 0; b < kLaunchBatches; ++b) {
    batches.push_back(
        time_per_call<std::micro>(1, kLaunchCalls, [&] { empty.run(empty_args, Grid(1)); })[0]);
    if (cuda)
      synchronize(Device{Backend::cuda, 0});
  }
  f.launch_us = summarize(batches);
  if (cuda)
    f.raw_launch_us = raw_launch_us(compiled, p, n);
  return f;
}

// ---- warmup --------------------------------------------------------------------

/// One line of warmup40.jsonl.
struct WarmupSpec {
  int line = 0;
  std::string file; ///< resolved against the .jsonl's directory
  std::string kernel;
  nlohmann::json args, options;
};

std::vector<WarmupSpec> read_warmup_specs(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw RuntimeError("cannot read " + path + "; pass the shared directory with --shared DIR");
  const fs::path dir = fs::path(path).parent_path();
  std::vector<WarmupSpec> specs;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      WarmupSpec s;
      s.line = line;
      s.file = (dir / j.at("file").get<std::string>()).lexically_normal().string();
      s.kernel = j.at("kernel").get<std::string>();
      s.args = j.at("args");
      s.options = j.value("options", nlohmann::json());
      specs.push_back(std::move(s));
    } catch (const nlohmann::json::exception &e) {
      throw RuntimeError(path + ":" + std::to_string(line) + ": not a warmup line: " + e.what());
    }
  }
  return specs;
}

/// Compiles every spec once on at most `threads` threads and returns the
/// wall time in seconds, loading of the files included (as `kiln warmup`
/// would pay it). Every file is loaded afresh, so its caches are empty and
/// every spec compiles; a spec that did not (two equal lines) is an error,
/// since the time would then not be of that many compiles.
double warmup_once(const std::vector<WarmupSpec> &specs, int threads) {
  const auto t0 = Clock::now();
  std::map<std::string, Module> modules;
  std::size_t compiled = 0;
  {
    // The async compile scope, as `kiln warmup` uses it: every warmup
    // returns at once and the pool of `threads` compiles them.
    AsyncCompileMode mode(AsyncCompileMode::Config{threads, false});
    std::vector<std::pair<int, LaunchResult>> pending;
    for (const WarmupSpec &s : specs) {
      if (!modules.contains(s.file))
        modules.emplace(s.file, Module::from_file(s.file));
      const Kernel kernel = modules.at(s.file).kernel(s.kernel);
      runtime::SpecStorage storage; // what the Args point into
      std::vector<Arg> args = runtime::args_from_specs(*kernel.impl(), s.args, storage);
      runtime::append_option_args(s.options, storage, args);
      pending.emplace_back(s.line, kernel.warmup(args));
    }
    for (auto &[line, r] : pending) {
      try {
        if (!r.kernel && r.future.valid() && r.future.result() && r.source == BinarySource::compiled)
          ++compiled;
      } catch (const std::exception &e) {
        throw RuntimeError("warmup40.jsonl line " + std::to_string(line) + ": " + e.what());
      }
    }
  }
  const double wall_s = ms_since(t0) / 1000;
  if (compiled != specs.size())
    throw RuntimeError("only " + std::to_string(compiled) + " of the " + std::to_string(specs.size()) +
                       " warmup specs compiled; the others were cache hits");
  return wall_s;
}

struct WarmupFigures {
  std::size_t specs = 0;
  std::vector<int> threads;
  std::vector<Summary> wall_s; ///< one per entry of `threads`
  int runs = kWarmupRuns;      ///< per thread count
  double speedup = 0;          ///< median wall on 1 thread / on the most
  double peak_rss_mb = 0;
};

WarmupFigures bench_warmup(const std::string &shared, int max_threads, bool quick) {
  const std::vector<WarmupSpec> specs =
      read_warmup_specs((fs::path(shared) / "bench" / "warmup40.jsonl").string());
  WarmupFigures f;
  f.specs = specs.size();
  f.runs = quick ? kQuickWarmupRuns : kWarmupRuns;
  // 1, 2, 4, ... and all: the scaling curve of the plot.
  // --quick: 1 and all only.
  for (int t = 1; t < max_threads; t = quick ? max_threads : t * 2)
    f.threads.push_back(t);
  f.threads.push_back(max_threads);

  // Set up the runtime and LLVM once before timing, so that the first
  // timed run is not also the process's first compile.
  {
    const Module m = Module::from_file(kernel_file(shared, "vector_add.py"));
    m.kernel("empty_kernel")
        .warmup(std::vector<Arg>{mock("x_ptr", DType::f32), arg("n", 16), arg("BLOCK", 16)});
  }
  for (int t : f.threads) {
    std::vector<double> walls;
    for (int run = 0; run < f.runs; ++run)
      walls.push_back(warmup_once(specs, t));
    f.wall_s.push_back(summarize(walls));
  }
  f.speedup = f.wall_s.front().median / f.wall_s.back().median;

  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  f.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024; // Linux: ru_maxrss is in KiB
  return f;
}

// ---- reports -------------------------------------------------------------------

/// The sections in the order they run; `all` is each that the backend has.
constexpr const char *kSections[] = {"compile", "launch", "warmup", "throughput", "dot"};

struct BenchOptions {
  std::vector<std::string> sections; ///< as asked; empty: all
  std::string shared;                ///< empty: find_shared_dir's search
  std::string anchors, compare;      ///< files to print the figures beside
  std::string out;                   ///< --out FILE: the JSON document, also written there
  std::string data_dir;              ///< --data DIR: the dot section's tensors
  bool quick = false;                ///< fewer kernels, cases and runs
};

struct Results {
  std::string backend = "cpu";
  int cpus = 0;
  std::optional<std::vector<CompileFigures>> compile;
  std::optional<LaunchFigures> launch;
  std::optional<WarmupFigures> warmup;
  std::optional<CpuThroughputFigures> cpu_throughput;
  std::optional<Json> cuda_throughput;                     ///< already rounded
  std::optional<Json> dot;                                 ///< already rounded
  std::vector<std::pair<std::string, std::string>> errors; ///< section, why it has no figures
};

Json stages_json(const std::vector<std::pair<std::string, double>> &stages) {
  Json j = Json::object();
  for (const auto &[stage, ms] : stages)
    j[stage] = rounded(ms, 3);
  return j;
}

Json to_json(const Results &r) {
  Json j;
  j["backend"] = r.backend;
  j["machine"] = {{"cpus", r.cpus}, {"gpu", r.backend == "cuda" ? Json("cuda:0") : Json(nullptr)}};
  if (r.compile) {
    Json &c = j["compile"] = Json::object();
    // A kernel that failed is left out rather than given made-up numbers;
    // the failure is on stderr and in the exit status.
    for (const CompileFigures &f : *r.compile)
      if (f.error.empty())
        c[f.kernel] = {{"cold_ms", rounded(f.cold_ms.median, 2)},
                       {"disk_hit_ms", rounded(f.disk_hit_ms.median, 3)},
                       {"disk_lookup_ms", rounded(f.disk_lookup_ms.median, 3)},
                       {"memory_hit_us", rounded(f.memory_hit_us.median, 3)},
                       {"stages_ms", stages_json(f.stage_ms)},
                       {"spread",
                        {{"cold_ms", spread_json(f.cold_ms, 2)},
                         {"disk_hit_ms", spread_json(f.disk_hit_ms, 3)},
                         {"memory_hit_us", spread_json(f.memory_hit_us, 3)}}}};
  }
  if (r.launch) {
    const LaunchFigures &f = *r.launch;
    j["launch"] = {{"dispatch_ns_4args", rounded(f.dispatch_ns_4args.median, 1)},
                   {"dispatch_ns_16args", rounded(f.dispatch_ns_16args.median, 1)},
                   {"launch_us", rounded(f.launch_us.median, 3)},
                   {"raw_launch_us", f.raw_launch_us ? Json(rounded(*f.raw_launch_us, 3))
                                                     : Json(nullptr)}, // cuda only
                   {"spread",
                    {{"dispatch_ns_4args", spread_json(f.dispatch_ns_4args, 1)},
                     {"dispatch_ns_16args", spread_json(f.dispatch_ns_16args, 1)},
                     {"launch_us", spread_json(f.launch_us, 3)}}}};
  }
  if (r.warmup) {
    const WarmupFigures &f = *r.warmup;
    Json wall = Json::array(), wall_spread = Json::array();
    for (const Summary &s : f.wall_s) {
      wall.push_back(rounded(s.median, 3));
      wall_spread.push_back(spread_json(s, 3));
    }
    j["warmup"] = {{"specs", f.specs},
                   {"threads", f.threads},
                   {"wall_s", wall},
                   {"speedup", rounded(f.speedup, 2)},
                   {"peak_rss_mb", rounded(f.peak_rss_mb, 1)},
                   {"spread", {{"wall_s", wall_spread}}}};
  }
  if (r.cpu_throughput)
    j["throughput"] = cpu_throughput_json(*r.cpu_throughput);
  if (r.cuda_throughput)
    j["throughput"] = *r.cuda_throughput;
  if (r.dot)
    j["dot"] = *r.dot;
  if (!r.errors.empty()) {
    Json &e = j["errors"] = Json::object();
    for (const auto &[section, message] : r.errors)
      e[section] = message;
  }
  return j;
}

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width)
    s.insert(0, width - s.size(), ' ');
  return s;
}

std::string left(std::string s, std::size_t width) {
  if (s.size() < width)
    s.append(width - s.size(), ' ');
  return s;
}

void print_compile(const std::vector<CompileFigures> &figures, int runs) {
  std::ostream &out = std::cout;
  out << "compile  one specialization per kernel; median (min-max)\n"
      << "  " << left("kernel", 16) << padded("cold ms", 22) << padded("of which compiler", 20)
      << padded("memory hit us", 24) << padded("disk hit ms", 24) << "  lookup ms" << '\n';
  for (const CompileFigures &f : figures) {
    out << "  " << left(f.kernel, 16);
    if (!f.error.empty()) {
      out << "  failed (see the error below)\n";
      continue;
    }
    out << padded(with_spread(f.cold_ms, 1), 22) << padded(fixed(f.compiler_ms.median, 1), 20)
        << padded(with_spread(f.memory_hit_us, 3), 24) << padded(with_spread(f.disk_hit_ms, 3), 24)
        << padded(fixed(f.disk_lookup_ms.median, 3), 11) << '\n';
  }
  out << "  cold: file read to binary loaded, in a fresh process with an empty cache, median of "
      << runs << " processes\n"
      << "  memory hit: warmup() of the compiled specialization, median of " << kHitBatches
      << " batches of " << kHitCalls << "\n"
      << "  disk hit: file read to binary loaded in a fresh process whose disk cache holds it; "
         "lookup: its "
         "warmup() call alone (key, read, hash check, load), median of "
      << runs << " processes\n\n";
}

void print_launch(const LaunchFigures &f) {
  std::cout << "launch   median (min-max)\n"
            << "  dispatch, 4 args (add_kernel)       "
            << padded(with_spread(f.dispatch_ns_4args, 1), 22) << " ns\n"
            << "  dispatch, 16 args (12 ptr + 4 int)  "
            << padded(with_spread(f.dispatch_ns_16args, 1), 22) << " ns\n"
            << "  launch, empty_kernel on grid 1      " << padded(with_spread(f.launch_us, 3), 22)
            << " us\n"
            << "  raw cuLaunchKernel, same cubin      "
            << (f.raw_launch_us ? padded(fixed(*f.raw_launch_us, 3), 22) + " us\n"
                                : padded("n/a", 22) + "    (cuda only)\n")
            << "  dispatch: bind + specialize + key + cache hit, no driver call; "
            << kDispatchBatches << " batches of " << kDispatchCalls << "\n\n";
}

void print_warmup(const WarmupFigures &f) {
  std::cout << "warmup   " << f.specs << " specs of bench/warmup40.jsonl, each compiled, median of "
            << f.runs << " runs\n"
            << "  " << padded("threads", 8) << padded("wall s", 24) << '\n';
  for (std::size_t i = 0; i < f.threads.size(); ++i)
    std::cout << "  " << padded(std::to_string(f.threads[i]), 8)
              << padded(with_spread(f.wall_s[i], 3), 24) << '\n';
  std::cout << "  speedup " << fixed(f.speedup, 2) << "x on " << f.threads.back()
            << " threads; peak rss " << fixed(f.peak_rss_mb, 1) << " MB (the whole process)\n\n";
}

/// "ir 0.36, llir 1.22, ...": a stages_ms object on one line.
std::string stages_line(const Json &stages) {
  std::string line;
  for (const auto &[stage, ms] : stages.items())
    line += (line.empty() ? "" : ", ") + stage + " " + fixed(ms.get<double>(), 2);
  return line;
}

void print_cuda_throughput(const Json &t) {
  std::cout << "throughput  cuda: GB/s each launch synchronized, median of 20; TFLOP/s median of 7 "
               "rounds of 10; compiles in a process that has compiled before\n";
  for (const auto &[k, v] : t.items())
    if (v.is_number())
      std::cout << "  " << left(k, 36) << padded(fixed(v.get<double>(), 2), 12) << '\n';
  // Held in a local: a range-for over items() of value()'s temporary would
  // iterate a destroyed object (only the proxy's lifetime is extended).
  const Json stages = t.value("stages_ms", Json::object());
  for (const auto &[k, v] : stages.items())
    std::cout << "  " << left(k + " stages ms", 36) << "  " << stages_line(v) << '\n';
  std::cout << '\n';
}

void print_dot(const Json &d) {
  std::cout << "dot  cuda tensor cores, TFLOP/s, median of rounds of back-to-back launches\n";
  for (const char *kind : {"matmul", "attention"})
    for (const auto &[name, c] : d[kind].items())
      std::cout << "  " << left(std::string(kind) + " " + name, 40)
                << padded(fixed(c["tflops"].get<double>(), 2), 10) << '\n';
  std::cout << "  cold compile of matmul.py 128x128x32, process warm: "
            << fixed(d["matmul_cold_compile_ms"].get<double>(), 1) << " ms ("
            << stages_line(d["matmul_compile_stages_ms"]) << "); " << d["matmul_registers"]
            << " registers, " << d["matmul_spill_bytes"] << " spill bytes\n\n";
}

/// "cuda" or "cpu" for --backend; cuda without a GPU is an error saying so.
std::string resolve_backend(const std::string &backend) {
  if (backend == "cpu")
    return "cpu";
  const bool gpu = cuda_available();
  if (backend == "cuda" && !gpu)
    throw RuntimeError("--backend cuda: no NVIDIA GPU or CUDA driver (libcuda.so.1) was found on "
                       "this machine; run on a GPU machine, or use --backend cpu");
  return gpu ? "cuda" : "cpu";
}

/// What runs, in kSections' order, each once: the sections asked for, `all`
/// (or none) being every section the backend has (dot is cuda only).
/// Throws UsageError for dot asked for by name on cpu.
std::vector<std::string> sections_to_run(const std::vector<std::string> &asked,
                                         const std::string &backend) {
  const bool all = asked.empty() || std::find(asked.begin(), asked.end(), "all") != asked.end();
  std::vector<std::string> run;
  for (const char *s : kSections) {
    const bool named = std::find(asked.begin(), asked.end(), s) != asked.end();
    if (std::string_view(s) == "dot" && backend != "cuda") {
      if (named)
        throw UsageError("kiln bench dot measures tensor cores, so it runs on cuda only; run it on "
                         "a GPU machine (--backend cuda)");
      continue;
    }
    if (all || named)
      run.emplace_back(s);
  }
  return run;
}

void bench(const BenchOptions &o, const CommonOptions &common) {
  // No disk cache in this process, set before the first call into kiln
  // reads the knobs: a warmup run or the softmax compile would otherwise
  // find the binaries an earlier run (or an earlier bench) stored and time
  // disk hits as compiles. The children set their own caches.
  ::setenv("KILN_NO_CACHE", "1", 1);
  // Nor NVIDIA's compute cache (~/.nv), which nvJitLink and the driver
  // answer a PTX they assembled before from: a cold compile's cubin stage
  // measured 0.2 ms from it on the GPU machine. Here and in the children.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  // Every input checked before any work: the run takes minutes.
  const std::string backend = resolve_backend(common.backend);
  const std::vector<std::string> sections = sections_to_run(o.sections, backend);
  const auto runs = [&](const char *s) {
    return std::find(sections.begin(), sections.end(), s) != sections.end();
  };
  if (!o.data_dir.empty() && !runs("dot"))
    throw UsageError("--data DIR is where the dot section writes its tensors, and dot does not run "
                     "here; add it (kiln bench dot --backend cuda --data DIR) or leave --data out");
  const std::string shared = find_shared_dir(o.shared);
  std::optional<Reference> anchors, earlier;
  if (!o.anchors.empty())
    anchors = read_anchors(o.anchors);
  if (!o.compare.empty())
    earlier = read_compare(o.compare);
  std::ofstream out_file;
  if (!o.out.empty()) {
    out_file.open(o.out);
    if (!out_file)
      throw UsageError("--out " + o.out + ": cannot write the file (" + std::strerror(errno) + ")");
  }
  ::setenv("KILN_BACKEND", backend.c_str(), 1);

  Results r;
  r.backend = backend;
  r.cpus = tbb::info::default_concurrency(); // the cores this process may use
  const bool human = !common.json;
  // Each section on its own: one that fails is reported at the end and the
  // others still run, so a long run keeps every figure it could measure.
  // The human report prints each section as it completes; the JSON
  // document comes at the end.
  const auto section = [&](const char *name, auto &&work) {
    if (!runs(name))
      return;
    try {
      work();
    } catch (const std::exception &e) {
      r.errors.emplace_back(name, e.what());
      if (human)
        std::cout << name << "  failed (see the error below)\n\n";
    }
  };
  section("compile", [&] {
    r.compile = bench_compile(shared, backend, o.quick);
    if (human)
      print_compile(*r.compile, o.quick ? kQuickColdRuns : kColdRuns);
  });
  section("launch", [&] {
    r.launch = bench_launch(shared, backend == "cuda");
    if (human)
      print_launch(*r.launch);
  });
  section("warmup", [&] {
    r.warmup = bench_warmup(shared, common.threads > 0 ? common.threads : r.cpus, o.quick);
    if (human)
      print_warmup(*r.warmup);
  });
  section("throughput", [&] {
    if (backend == "cuda") {
      r.cuda_throughput = bench_throughput(shared);
      if (human)
        print_cuda_throughput(*r.cuda_throughput);
    } else {
      r.cpu_throughput = bench_cpu_throughput(shared, o.quick);
      if (human)
        print_cpu_throughput(*r.cpu_throughput, std::cout);
    }
  });
  section("dot", [&] {
    r.dot = bench_dot(shared, DotOptions{o.quick, o.data_dir});
    if (human)
      print_dot(*r.dot);
  });

  Json doc = to_json(r);
  const Figures figures = flatten_figures(doc);
  if (anchors)
    doc["anchors"] = beside_json(figures, *anchors);
  if (earlier)
    doc["compare"] = beside_json(figures, *earlier);
  if (common.json) {
    std::cout << doc.dump(2) << '\n';
  } else {
    if (anchors)
      std::cout << '\n' << beside_text(figures, *anchors);
    if (earlier)
      std::cout << '\n' << beside_text(figures, *earlier);
  }
  if (out_file.is_open()) {
    out_file << doc.dump(2) << '\n';
    out_file.close();
    if (!out_file)
      throw RuntimeError("--out " + o.out + ": writing the file failed");
  }

  // Failures last, after every figure that could be measured: the work
  // failed, so exit 1 (CLI.md), but the report above stands.
  bool failed = !r.errors.empty();
  for (const auto &[name, message] : r.errors)
    print_error(std::cerr, "kiln bench " + name + " failed", message);
  if (r.compile)
    for (const CompileFigures &f : *r.compile)
      if (!f.error.empty()) {
        print_error(std::cerr, "kiln bench compile: " + f.kernel + " failed", f.error);
        failed = true;
      }
  if (failed)
    throw ExitStatus{kExitFailure};
}

/// `kiln help bench`'s footer: every section and every key of its JSON. The
/// README's bench section says the same; keep them together.
constexpr const char *kBenchHelp =
    R"(Sections (several may be given; they run in the order below; all, the default, is
every section the backend has):
  compile     per shared kernel (12; --quick: add_kernel and softmax_kernel), one
              specialization each. Keys under compile.KERNEL: cold_ms (file read to binary
              loaded in a fresh process with an empty cache, median of 5 processes, 3 with
              --quick), stages_ms {STAGE: ms} (the compiler's stages of those runs),
              memory_hit_us (warmup() once compiled, median of 50 batches of 1000),
              disk_hit_ms (the same as cold_ms in a fresh process whose disk cache holds the
              binary, after another kernel loaded), disk_lookup_ms (its warmup() call alone).
  launch      dispatch_ns_4args, dispatch_ns_16args (bind + specialize + key + cache hit,
              no driver call), launch_us (host time of a launch of empty_kernel on grid 1),
              raw_launch_us (a bare cuLaunchKernel of the same cubin; null on cpu).
  warmup      the 40 specs of bench/warmup40.jsonl compiled in-process on 1, 2, 4, ... and
              all threads (--quick: 1 and all; 1 run instead of 3): specs, threads [N...],
              wall_s [s per entry of threads], speedup (1 thread / the most), peak_rss_mb.
  throughput  cpu: vector add against memcpy and softmax against a C++ loop (-O3), median
              of 7 runs (5 with --quick, which also shrinks the sizes): runs;
              vector_add {n, bytes_per_element, gbps_by_block {BLOCK: GB/s}, best_block,
              gbps, memcpy_gbps, memcpy_gbps_all_threads, fraction (aim >= 0.7),
              fraction_all_threads}; softmax {rows, cols, rows_per_s, reference_rows_per_s,
              reference_rows_per_s_all_threads, fraction (aim >= 0.8), fraction_all_threads,
              max_abs_diff}.
              cuda: add_kernel_compile_ms, softmax_4096_compile_ms, softmax_2048_compile_ms
              (source to cubin in a fresh Module of a process that has compiled before,
              median of 5; CUDA's compute cache off), vector_add_gbps (2^28 fp32),
              softmax_gbps (16384x4096 fp32), layernorm_gbps (8192x4096 fp16),
              column_sum_gbps (8192x8192 fp32), each launch synchronized, median of 20;
              matmul_4096_128x128x32_tflops, matmul_4096_128x256x64_tflops (median of 7
              rounds of 10); stages_ms {add_kernel, softmax_4096, softmax_2048: {STAGE: ms}}.
              A wrong result is an error, not a figure.
  dot         cuda only: matmul_cold_compile_ms (matmul.py 128x128x32 in a warm process),
              matmul_compile_stages_ms {STAGE: ms}, matmul_registers, matmul_spill_bytes;
              matmul {CASE: {tflops, case {M, N, K, BM, BN, BK, warps, stages}, files}} for
              six cases (--quick: two), attention {CASE: {tflops, case {Z, H, N, D, causal,
              BM, BN, warps}, files}} for four (--quick: one); files (with --data DIR) is
              the path prefix of the case's raw fp16 tensors.
Every section's medians come with their min and max under a sibling "spread" key. The
document also has backend, machine {cpus, gpu}, and with --anchors or --compare an object
of that name ({"figures": {KEY: {value, reference, ratio}}, "missing": [...]}). A section
that fails is named under "errors" {SECTION: message}, the others still run, and the exit
status is 1.
--threads N sets the largest thread count of the warmup section (default: all cores). The
bench sets up its own caches (fresh processes, fresh modules), so --cache-dir and
--no-cache do not change it. bench/plot.py draws the JSON as PNGs.)";

} // namespace

void add_bench_command(CLI::App &app, CommonOptions &common) {
  // Shared with the callbacks, which run during app.parse().
  auto o = std::make_shared<BenchOptions>();
  CLI::App *sub = app.add_subcommand(
      "bench", "The benchmark harness, cpu or cuda: compile, launch, warmup, throughput and "
               "(cuda) dot figures, medians of several runs");
  sub->add_option("SECTION", o->sections,
                  "one or more of compile, launch, warmup, throughput, dot (cuda) or all; "
                  "they run in that order")
      ->check(CLI::IsMember({"compile", "launch", "warmup", "throughput", "dot", "all"}))
      ->default_str("all")
      ->type_name("");
  sub->add_option("--shared", o->shared,
                  "the shared directory with kernels/ and bench/ (default: $KILN_SHARED_DIR, "
                  "else found next to this binary)")
      ->type_name("DIR");
  sub->add_option("--anchors", o->anchors,
                  "print each figure beside a recorded anchor (bench/anchors/*.json)")
      ->type_name("FILE");
  sub->add_option("--compare", o->compare, "print each figure beside an earlier --json run")
      ->type_name("OLD.json");
  sub->add_option("--out", o->out,
                  "also write the JSON document to FILE (the report on stdout stays as chosen)")
      ->type_name("FILE");
  sub->add_flag("--quick", o->quick,
                "a smoke run: fewer kernels, cases and runs, smaller cpu throughput sizes; "
                "figures are rough");
  sub->add_option("--data", o->data_dir,
                  "the dot section writes each case's inputs and output there as raw fp16 "
                  "files, for bench/dot_report.py")
      ->type_name("DIR");
  add_common_options(*sub, common);
  sub->footer(kBenchHelp);
  sub->callback([o, &common] { bench(*o, common); });

  // The child of `bench compile`: not for people, so hidden from --help
  // (CLI11 hides a subcommand whose group is empty).
  struct Cold {
    std::string kernel, shared, expect = "compiled";
    bool disk = false, warm = false, list = false;
  };
  auto cold = std::make_shared<Cold>();
  add_bench_parse_command(app);
  CLI::App *child = app.add_subcommand(kColdCommand, "internal: one cold compile of kiln bench");
  child->group("");
  child->add_option("KERNEL", cold->kernel);
  child->add_flag("--list", cold->list, "print the kernels' names, one a line");
  child->add_option("--shared", cold->shared);
  child->add_flag("--disk", cold->disk, "expect a disk hit, not a compile");
  child->add_option("--expect", cold->expect, "where the binary must come from")
      ->check(CLI::IsMember({"compiled", "disk", "remote"}));
  child->add_flag("--warm", cold->warm, "another kernel goes first, untimed");
  child->callback([cold] {
    if (cold->list) {
      for (const Workload &w : compile_workloads())
        std::printf("%s\n", w.kernel);
      return;
    }
    run_cold(cold->kernel, find_shared_dir(cold->shared), cold->disk ? "disk" : cold->expect,
             cold->warm);
  });
}

} // namespace kiln::cli
