// `kiln bench`'s inputs: where it finds the shared kernels, --anchors and
// --compare files (bad ones fail before any benchmark runs), --backend cuda
// on a machine without a GPU, the sections asked for and the options that go
// with them; then the cpu sections themselves in --quick runs, and that
// `kiln help bench` and the README name every section and key.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kiln/buffer.hpp"
#include "kiln/error.hpp"
#include "temp_dir.hpp"
#include "tests/shell.hpp"
#include "tests/text_checks.hpp"
#include "tools/kiln/bench_command.hpp"
#include "tools/kiln/bench_report.hpp"
#include "tools/kiln/cli_common.hpp"

namespace fs = std::filesystem;
using kiln::cli::Figures;

using kiln::test::contains;
using kiln::test::error_of;

namespace {

void write(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

struct CliRun {
  int status = -1;
  std::string out, err;
};

/// Runs `kiln ARGS...` in this process; the bench's report, which goes to
/// std::cout, is captured with what run_cli writes to its stream.
CliRun run_kiln_here(std::vector<const char *> args) {
  CLI::App app{"kiln test", "kiln"};
  app.require_subcommand(1);
  kiln::cli::CommonOptions common;
  kiln::cli::add_bench_command(app, common);
  args.insert(args.begin(), "kiln");
  std::ostringstream out, err;
  CliRun r;
  std::streambuf *const saved = std::cout.rdbuf(out.rdbuf());
  r.status = kiln::cli::run_cli(app, static_cast<int>(args.size()), args.data(), out, err);
  std::cout.rdbuf(saved);
  r.out = out.str();
  r.err = err.str();
  return r;
}

CliRun run_bench(std::vector<const char *> args) {
  args.insert(args.begin(), "bench");
  return run_kiln_here(std::move(args));
}

/// A JSON file, its keys in the file's order.
nlohmann::ordered_json read_json(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::ordered_json::parse(in);
}

/// Under TSan the throughput section (CPU kernels over arrays of hundreds
/// of MB, filled and checked by instrumented code) ran past ctest's
/// 15-minute limit; the cases that run it are skipped there.
bool throughput_too_slow_here() {
#if defined(__SANITIZE_THREAD__)
  MESSAGE("[SKIP] the throughput section under ThreadSanitizer");
  return true;
#else
  return false;
#endif
}

/// Sets an environment variable for one scope.
struct EnvVar {
  std::string name;
  EnvVar(const char *n, const std::string &v) : name(n) { ::setenv(n, v.c_str(), 1); }
  ~EnvVar() { ::unsetenv(name.c_str()); }
};

} // namespace

TEST_CASE(
    "bench: the shared kernels are found from --shared, KILN_SHARED_DIR or the binary's place") {
  kiln::test::TempDir t;
  fs::create_directories(t.path / "shared" / "kernels");
  fs::create_directories(t.path / "repo" / "build" / "bin");
  write(t.file("repo/build/bin/kiln"), "");
  ::unsetenv("KILN_SHARED_DIR");
  // repo/build/bin/kiln finds repo/../shared, as in a checkout beside shared/.
  CHECK(fs::equivalent(kiln::cli::find_shared_dir("", t.file("repo/build/bin/kiln")),
                       t.path / "shared"));
  CHECK(kiln::cli::find_shared_dir(t.file("shared"), "/nonexistent") == t.file("shared"));
  CHECK(contains(
      error_of<kiln::cli::UsageError>([&] { kiln::cli::find_shared_dir(t.file("repo"), ""); }),
      "has no kernels/"));
  {
    const EnvVar env("KILN_SHARED_DIR", t.file("shared"));
    CHECK(kiln::cli::find_shared_dir("", "/nonexistent/bin/kiln") == t.file("shared"));
  }
  // A bundle: bin/kiln with kernels/ beside bin/.
  fs::create_directories(t.path / "shared" / "bin");
  CHECK(
      fs::equivalent(kiln::cli::find_shared_dir("", t.file("shared/bin/kiln")), t.path / "shared"));
  kiln::test::TempDir u; // nothing near
  fs::create_directories(u.path / "alone" / "bin");
  const std::string lost = error_of<kiln::cli::UsageError>(
      [&] { kiln::cli::find_shared_dir("", u.file("alone/bin/kiln")); });
  CHECK(contains(lost, "cannot find the shared kernels"));
  CHECK(contains(lost, "--shared DIR or set KILN_SHARED_DIR"));
}

TEST_CASE("bench: a bad --anchors file is an error naming the file and what is wrong") {
  kiln::test::TempDir t;
  CHECK(
      contains(error_of<kiln::RuntimeError>([&] { kiln::cli::read_anchors(t.file("none.json")); }),
               "cannot read"));
  write(t.file("bad.json"), "{ not json");
  CHECK(contains(error_of<kiln::RuntimeError>([&] { kiln::cli::read_anchors(t.file("bad.json")); }),
                 "bad.json: not JSON"));
  write(t.file("nofig.json"), R"({"name": "x"})");
  CHECK(
      contains(error_of<kiln::RuntimeError>([&] { kiln::cli::read_anchors(t.file("nofig.json")); }),
               "needs a \"figures\" object"));
  write(t.file("text.json"), R"({"figures": {"launch.launch_us": "fast"}})");
  CHECK(
      contains(error_of<kiln::RuntimeError>([&] { kiln::cli::read_anchors(t.file("text.json")); }),
               "\"launch.launch_us\" has no number"));

  // Through the command: exit 1 and one sentence, before any benchmark runs.
  // --shared given: a clone outside the checkout's parent has no ../shared to find.
  const CliRun r = run_bench({"launch", "--backend", "cpu", "--shared", KILN_SHARED_DIR,
                              "--anchors", t.file("bad.json").c_str()});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "not JSON"));
  CHECK(r.out.empty());
}

TEST_CASE(
    "bench: __bench-parse times a kernel file's parse, a missing or malformed file is an error") {
  const std::string file = std::string(KILN_SHARED_DIR) + "/kernels/layernorm.py";
  const CliRun ok = run_kiln_here({"__bench-parse", file.c_str(), "--repeat", "2"});
  CHECK(ok.status == 0);
  CHECK(contains(ok.out, "1285 bytes, lex "));
  const CliRun missing = run_kiln_here({"__bench-parse", "/nonexistent/k.py"});
  CHECK(missing.status == 1);
  CHECK(contains(missing.err, "cannot read kernel file '/nonexistent/k.py'"));
  kiln::test::TempDir t;
  write(t.file("bad.py"), "def f(:\n");
  const CliRun bad = run_kiln_here({"__bench-parse", t.file("bad.py").c_str(), "--repeat", "1"});
  CHECK(bad.status == 1);
  CHECK(contains(bad.err, "bad.py:1:"));
}

TEST_CASE("bench: the shipped H200 anchors parse, and a '*' key serves every kernel") {
  const kiln::cli::Reference ref =
      kiln::cli::read_anchors(std::string(KILN_SOURCE_DIR) + "/bench/anchors/h200-triton-3.6.json");
  CHECK(contains(ref.about, "H200"));
  CHECK(contains(ref.about, "2026-12-03"));
  const Figures run = {{"launch.launch_us", 8.77}, {"compile.softmax_kernel.disk_lookup_ms", 1.3}};
  const nlohmann::ordered_json j = kiln::cli::beside_json(run, ref);
  CHECK(j["figures"]["launch.launch_us"]["reference"].get<double>() == doctest::Approx(17.54));
  CHECK(j["figures"]["launch.launch_us"]["ratio"].get<double>() == doctest::Approx(0.5));
  CHECK(j["figures"]["compile.softmax_kernel.disk_lookup_ms"]["reference"].get<double>() ==
        doctest::Approx(2.6));
  CHECK(contains(j["missing"].dump(), "throughput.vector_add_gbps"));
}

TEST_CASE("bench: --compare with a figure missing on either side lists it, and fails on no run") {
  kiln::test::TempDir t;
  write(t.file("old.json"), R"({"backend": "cpu", "machine": {"cpus": 2},
    "launch": {"launch_us": 2.0, "dispatch_ns_4args": 100.0, "spread": {"launch_us": [1, 3]}},
    "warmup": {"specs": 40, "threads": [1, 2], "wall_s": [4.0, 2.5]}})");
  const kiln::cli::Reference old = kiln::cli::read_compare(t.file("old.json"));
  // This run has a figure the old one lacks (raw_launch_us) and lacks one
  // it had (dispatch_ns_4args).
  const Figures now = {
      {"launch.launch_us", 3.0}, {"launch.raw_launch_us", 1.0}, {"warmup.wall_s.2", 2.0}};
  const nlohmann::ordered_json j = kiln::cli::beside_json(now, old);
  CHECK(j["figures"]["launch.launch_us"]["ratio"].get<double>() == doctest::Approx(1.5));
  CHECK(j["figures"]["warmup.wall_s.2"]["reference"].get<double>() == doctest::Approx(2.5));
  CHECK_FALSE(j["figures"].contains("launch.raw_launch_us"));
  CHECK(contains(j["missing"].dump(), "launch.dispatch_ns_4args"));
  CHECK_FALSE(contains(j["missing"].dump(), "spread"));
  const std::string text = kiln::cli::beside_text(now, old);
  CHECK(contains(text, "launch.dispatch_ns_4args"));
  CHECK(contains(text, "missing"));

  write(t.file("anchor.json"), R"({"figures": {}})");
  CHECK(contains(
      error_of<kiln::RuntimeError>([&] { kiln::cli::read_compare(t.file("anchor.json")); }),
      "not the JSON of an earlier `kiln bench --json` run"));
}

TEST_CASE("bench: --backend cuda without a GPU says so and exits 1 before any work") {
  if (kiln::cuda_available()) {
    MESSAGE("[SKIP] this machine has a GPU");
    return;
  }
  const CliRun r = run_bench({"launch", "--backend", "cuda"});
  CHECK(r.status == 1);
  CHECK(contains(r.err, "--backend cuda: no NVIDIA GPU"));
  CHECK(contains(r.err, "--backend cpu"));
  CHECK(r.out.empty());
  // Under --json the failure is still one JSON object.
  const CliRun j = run_bench({"launch", "--backend", "cuda", "--json"});
  CHECK(j.status == 1);
  CHECK(contains(j.out, "no NVIDIA GPU"));
}

TEST_CASE("bench: sections, --data and --out are checked before any work") {
  kiln::test::TempDir t;
  // dot measures tensor cores: on cpu, asked for by name, it is bad usage.
  const CliRun dot = run_bench({"dot", "--backend", "cpu", "--shared", KILN_SHARED_DIR});
  CHECK(dot.status == 2);
  CHECK(contains(dot.err, "cuda only"));
  const CliRun unknown = run_bench({"launch", "fast", "--backend", "cpu"});
  CHECK(unknown.status == 2);
  CHECK(contains(unknown.err, "fast"));
  // --data is the dot section's; without dot it would be silently unused.
  const CliRun data = run_bench(
      {"launch", "--backend", "cpu", "--shared", KILN_SHARED_DIR, "--data", t.file("d").c_str()});
  CHECK(data.status == 2);
  CHECK(contains(data.err, "--data DIR"));
  CHECK_FALSE(fs::exists(t.path / "d"));
  const std::string nowhere = t.file("no/such/dir/out.json");
  const CliRun out = run_bench(
      {"launch", "--backend", "cpu", "--shared", KILN_SHARED_DIR, "--out", nowhere.c_str()});
  CHECK(out.status == 2);
  CHECK(contains(out.err, "cannot write"));
  CHECK(out.out.empty()); // nothing measured
}

TEST_CASE("bench: two sections in one call run in the harness's order, --quick, into --out") {
  if (throughput_too_slow_here())
    return;
  kiln::test::TempDir t;
  const std::string file = t.file("run.json");
  // Given throughput first; the document and the report have launch first.
  const CliRun r = run_bench({"throughput", "launch", "--backend", "cpu", "--quick", "--shared",
                              KILN_SHARED_DIR, "--out", file.c_str()});
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "launch   median"));
  CHECK(contains(r.out, "throughput  cpu, median (min-max) of 5 runs"));
  CHECK(r.out.find("launch   median") < r.out.find("throughput  cpu"));
  const nlohmann::ordered_json doc = read_json(file);
  std::vector<std::string> keys;
  for (const auto &[k, v] : doc.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"backend", "machine", "launch", "throughput"});
  CHECK(doc["backend"] == "cpu");
  CHECK(doc["launch"]["raw_launch_us"].is_null());
  CHECK(doc["launch"]["dispatch_ns_4args"].get<double>() > 0);
  // The cpu throughput of --quick: 5 runs, 2^22 elements, 512 rows, checked.
  const nlohmann::ordered_json &tp = doc["throughput"];
  CHECK(tp["runs"] == 5);
  CHECK(tp["vector_add"]["n"] == 1 << 22);
  CHECK(tp["vector_add"]["gbps"].get<double>() > 0);
  CHECK(tp["vector_add"]["gbps_by_block"].contains("4096"));
  CHECK(tp["vector_add"]["memcpy_gbps"].get<double>() > 0);
  CHECK(tp["softmax"]["rows"] == 512);
  CHECK(tp["softmax"]["rows_per_s"].get<double>() > 0);
  CHECK(tp["softmax"]["max_abs_diff"].get<double>() <= 1e-5);

  // The same run under --json: the document on stdout is the --out file's.
  const std::string again = t.file("again.json");
  const CliRun j = run_bench({"launch", "--backend", "cpu", "--json", "--shared", KILN_SHARED_DIR,
                              "--out", again.c_str()});
  REQUIRE(j.status == 0);
  CHECK(nlohmann::ordered_json::parse(j.out) == read_json(again));
}

TEST_CASE("bench: the compile and warmup sections with --quick, through the kiln binary") {
  kiln::test::TempDir t;
  const std::string file = t.file("run.json");
  // compile re-executes its binary, so it needs the real one; --threads 1
  // keeps the warmup section to one pass of its 40 specs.
  const kiln::test::Child c =
      kiln::test::shell("'" KILN_BIN "' bench compile warmup --quick "
                        "--backend cpu --threads 1 --shared '" KILN_SHARED_DIR "' --out '" +
                            file + "'",
                        300);
  CAPTURE(c.output);
  REQUIRE(c.status == 0);
  const nlohmann::ordered_json doc = read_json(file);
  // --quick: the first two kernels, add_kernel and softmax_kernel.
  REQUIRE(doc["compile"].size() == 2);
  for (const char *k : {"add_kernel", "softmax_kernel"}) {
    CAPTURE(k);
    CHECK(doc["compile"][k]["cold_ms"].get<double>() > 0);
    CHECK(doc["compile"][k]["disk_lookup_ms"].get<double>() > 0);
    CHECK(doc["compile"][k]["stages_ms"].size() > 0);
  }
  CHECK(contains(c.output, "median of 3 processes"));
  CHECK(doc["warmup"]["specs"] == 40);
  CHECK(doc["warmup"]["threads"] == nlohmann::ordered_json::array({1}));
  CHECK(doc["warmup"]["wall_s"].size() == 1);
  CHECK_FALSE(doc.contains("throughput"));
  CHECK_FALSE(doc.contains("dot"));
}

TEST_CASE("bench: a dot case's TFLOP/s is a figure, the sizes of a workload are not") {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(R"({"backend": "cuda",
    "dot": {"matmul_cold_compile_ms": 190.3, "matmul_registers": 168,
            "matmul": {"4096_128x128x32_w4": {"tflops": 585.3, "case": {"M": 4096, "BM": 128},
                                              "files": "/tmp/d/mm_4096"}}},
    "throughput": {"runs": 7, "vector_add": {"n": 67108864, "gbps": 20.5,
                                             "gbps_by_block": {"1024": 20.5}}}})");
  Figures figures = kiln::cli::flatten_figures(doc);
  std::set<std::string> names;
  for (const auto &[name, value] : figures)
    names.insert(name);
  CHECK(names == std::set<std::string>{"dot.matmul_cold_compile_ms", "dot.matmul_registers",
                                       "dot.matmul.4096_128x128x32_w4.tflops",
                                       "throughput.vector_add.gbps",
                                       "throughput.vector_add.gbps_by_block.1024"});
}

namespace {

/// Every key of `j`, at any depth, that is a name rather than a number
/// (gbps_by_block's "1024") or a case name of the dot section.
void key_names(const nlohmann::ordered_json &j, std::set<std::string> &out) {
  for (const auto &[k, v] : j.items()) {
    if (k.find_first_not_of("0123456789") != std::string::npos)
      out.insert(k);
    if (v.is_object() && k != "matmul" && k != "attention" && k != "stages_ms")
      key_names(v, out);
  }
}

} // namespace

TEST_CASE("bench: kiln help bench and the README document every section, option and key") {
  const CliRun help = run_kiln_here({"help", "bench"});
  REQUIRE(help.status == 0);
  std::ifstream readme_file(std::string(KILN_SOURCE_DIR) + "/README.md");
  std::stringstream readme_text;
  readme_text << readme_file.rdbuf();
  const std::string readme = readme_text.str();
  for (const char *word : {"compile", "launch", "warmup", "throughput", "dot", "all", "--out",
                           "--quick", "--data", "--anchors", "--compare", "--shared"}) {
    CAPTURE(word);
    CHECK(contains(help.out, word));
    CHECK(contains(readme, word));
  }
  // Every key a cpu run writes, taken from a real run so that the list
  // cannot drift from the code.
  if (throughput_too_slow_here())
    return;
  kiln::test::TempDir t;
  const std::string file = t.file("run.json");
  const CliRun run = run_bench({"launch", "throughput", "--backend", "cpu", "--quick", "--shared",
                                KILN_SHARED_DIR, "--out", file.c_str()});
  REQUIRE(run.status == 0);
  std::set<std::string> keys;
  key_names(read_json(file), keys);
  // The cuda-only keys, which no run here can write.
  for (const char *k : {"add_kernel_compile_ms",
                        "softmax_4096_compile_ms",
                        "softmax_2048_compile_ms",
                        "vector_add_gbps",
                        "softmax_gbps",
                        "layernorm_gbps",
                        "column_sum_gbps",
                        "matmul_4096_128x128x32_tflops",
                        "matmul_4096_128x256x64_tflops",
                        "stages_ms",
                        "matmul_cold_compile_ms",
                        "matmul_compile_stages_ms",
                        "matmul_registers",
                        "matmul_spill_bytes",
                        "tflops",
                        "causal",
                        "files",
                        "cold_ms",
                        "disk_hit_ms",
                        "disk_lookup_ms",
                        "memory_hit_us",
                        "specs",
                        "threads",
                        "wall_s",
                        "speedup",
                        "peak_rss_mb",
                        "errors"})
    keys.insert(k);
  for (const std::string &k : keys) {
    CAPTURE(k);
    CHECK(contains(help.out, k));
  }
}
