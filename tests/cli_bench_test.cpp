// `kiln bench`'s inputs: where it finds the shared kernels, --anchors and
// --compare files (bad ones fail before any benchmark runs), and --backend
// cuda on a machine without a GPU. Nothing here times anything.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kiln/buffer.hpp"
#include "kiln/error.hpp"
#include "temp_dir.hpp"
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

CliRun run_bench(std::vector<const char *> args) {
  CLI::App app{"kiln test", "kiln"};
  app.require_subcommand(1);
  kiln::cli::CommonOptions common;
  kiln::cli::add_bench_command(app, common);
  args.insert(args.begin(), {"kiln", "bench"});
  std::ostringstream out, err;
  CliRun r;
  r.status = kiln::cli::run_cli(app, static_cast<int>(args.size()), args.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
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
