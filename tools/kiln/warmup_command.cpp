// `kiln warmup FILE.jsonl [--threads N]` (shared/CLI.md): batch-compile the
// specializations of a file on the async compile pool, so that later
// launches are cache hits. One bad line is reported with its number and does
// not stop the rest. A line of an autotuned kernel that leaves its
// meta-parameters to tuning compiles the config stored for its tuning key
// (`kiln tune`), or every config when none is stored; each is counted.
#include "tools/kiln/warmup_command.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kiln/kiln.hpp"
#include "runtime/jit_function.hpp"
#include "runtime/spec_args.hpp"
#include "tools/kiln/cli_common.hpp"
#include "tools/kiln/stage_times.hpp"

namespace kiln::cli {

namespace {

struct WarmupOptions {
  std::string file;
};

struct LineError {
  int line;
  std::string message;
};

/// What one line asked for, once submitted.
struct Submitted {
  int line;
  LaunchResult result;
};

class Progress {
public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && isatty(STDERR_FILENO)) {}
  void tick() {
    ++done_;
    if (!enabled_)
      return;
    const int width = 30, filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu", filled, "##############################", width - filled, "", done_,
                 total_);
    if (done_ == total_)
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

private:
  std::size_t total_, done_ = 0;
  bool enabled_;
};

nlohmann::json parse_line(const std::string &line) {
  try {
    return nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception &e) {
    throw Error(std::string("not valid JSON: ") + e.what());
  }
}

/// Field `name` of a line, which must be a string.
std::string string_field(const nlohmann::json &j, const char *name) {
  const nlohmann::json &v = j.at(name);
  if (!v.is_string()) {
    const std::string t = v.type_name();
    throw Error(std::string("\"") + name + "\" must be a string, not " +
                (t == "null" ? t : (t == "object" || t == "array" ? "an " : "a ") + t));
  }
  return v.get<std::string>();
}

void warmup(const WarmupOptions &o, const CommonOptions &common) {
  apply_common_options(common);
  if (common.backend == "cuda")
    set_device(Device{Backend::cuda, 0});
  else if (common.backend == "cpu")
    set_device(Device{Backend::cpu, 0});

  if (std::filesystem::is_directory(o.file))
    throw UsageError(o.file +
                     " is a directory; kiln warmup reads a .jsonl file of specializations");
  std::ifstream in(o.file);
  if (!in)
    throw Error("cannot read " + o.file + ": no such file or not readable");
  const std::filesystem::path base = std::filesystem::path(o.file).parent_path();

  std::vector<std::pair<int, std::string>> lines;
  std::string text;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find_first_not_of(" \t\r") != std::string::npos)
      lines.emplace_back(n, text);

  if (lines.empty())
    throw Error(o.file + " has no specializations (no non-blank lines); nothing was warmed up");
  const auto start = std::chrono::steady_clock::now();
  std::vector<LineError> errors;
  std::vector<Submitted> submitted;
  std::map<std::string, Module> modules; // one Module per file: its kernels share caches
  std::set<std::uintptr_t> futures; // FutureKernel::id(): to tell de-duplicated lines from compiles
  std::size_t cache_hits = 0, deduplicated = 0, compiled = 0;
  double serial_ms = 0;
  StageTimes stages; // -v: compile time by stage over this run's compiles
  int threads = 0;
  {
    AsyncCompileMode mode(AsyncCompileMode::Config{common.threads, /*ignore_errors=*/true});
    threads = mode.threads();
    for (const auto &[n, line] : lines) {
      try {
        const nlohmann::json j = parse_line(line);
        if (!j.is_object() || !j.contains("file") || !j.contains("kernel") || !j.contains("args"))
          throw Error("a line needs \"file\", \"kernel\" and \"args\"");
        std::filesystem::path file = string_field(j, "file");
        if (file.is_relative())
          file = base / file;
        auto it = modules.find(file.string());
        if (it == modules.end())
          it = modules.emplace(file.string(), Module::from_file(file.string())).first;
        Kernel kernel = it->second.kernel(string_field(j, "kernel"));
        runtime::SpecStorage storage; // what the Args point into
        std::vector<Arg> args = runtime::args_from_specs(*kernel.impl(), j["args"], storage);
        runtime::append_option_args(j.value("options", nlohmann::json()), storage, args);
        // An autotuned kernel left to tuning: the stored choice, or every config.
        for (LaunchResult &r : kernel.warmup_all(args))
          submitted.push_back({n, std::move(r)});
      } catch (const std::exception &e) {
        errors.push_back({n, e.what()});
      }
    }
    Progress progress(submitted.size(), !common.json);
    for (Submitted &s : submitted) {
      LaunchResult &r = s.result;
      if (r.kernel) {
        ++cache_hits; // already in memory before this run asked
      } else if (!futures.insert(r.future.id()).second) {
        ++deduplicated; // the same specialization as an earlier line
      } else {
        const CompiledKernel *k = r.future.result(); // errors ignored: null on failure
        if (k) {
          ++compiled;
          serial_ms += k->total_ms();
          stages.add(*k);
        } else {
          try {
            std::rethrow_exception(r.future.error());
          } catch (const std::exception &e) {
            errors.push_back({s.line, e.what()});
          }
        }
      }
      progress.tick();
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::sort(errors.begin(), errors.end(), [](const LineError &a, const LineError &b) { return a.line < b.line; });
  const std::size_t failed = errors.size();
  const std::size_t specs = lines.size();

  if (common.json) {
    nlohmann::json out = {{"specs", specs},       {"compiled", compiled}, {"cache_hits", cache_hits},
                          {"deduplicated", deduplicated}, {"failed", failed}, {"threads", threads},
                          {"wall_s", wall_s},     {"errors", nlohmann::json::array()}};
    for (const LineError &e : errors)
      out["errors"].push_back({{"line", e.line}, {"message", e.message}});
    std::cout << out.dump() << "\n";
  } else {
    for (const LineError &e : errors)
      std::cerr << o.file << ":" << e.line << ": " << e.message << "\n";
    std::printf("%zu specs: %zu compiled, %zu cache hits, %zu deduplicated, %zu failed\n", specs, compiled,
                cache_hits, deduplicated, failed);
    std::printf("wall time %.2f s on %d compile thread%s", wall_s, threads,
                threads == 1 ? "" : "s");
    // The sum of the compile times is what one thread would have needed;
    // beside one thread's own wall time it says nothing.
    if (compiled && wall_s > 0 && threads > 1)
      std::printf(" (the compiles took %.2f s in all: %.2fx over one thread)", serial_ms / 1000,
                  serial_ms / 1000 / wall_s);
    std::printf("\n");
    if (common.verbosity > 0 && compiled) {
      std::fflush(stdout);
      stages.print(std::cout, "over the " + std::to_string(compiled) + " compiles of this run");
    }
  }
  if (failed)
    throw ExitStatus{kExitFailure};
}

} // namespace

void add_warmup_command(CLI::App &app, CommonOptions &common) {
  auto o = std::make_shared<WarmupOptions>();
  CLI::App *sub = app.add_subcommand("warmup", "Batch-compile the specializations of a .jsonl file into the caches");
  sub->add_option("FILE", o->file, "one JSON object per line: file, kernel, args, options")->required()->type_name("");
  add_common_options(*sub, common);
  sub->callback([o, &common] { warmup(*o, common); });
}

} // namespace kiln::cli
