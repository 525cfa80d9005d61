// `kiln cache info|ls|clear|prune` (shared/CLI.md) in-process through
// run_cli, on a folder of entries written by the disk cache itself: what it
// reports, what pruning and clearing remove, and a prune without a limit as
// a usage error.
#include <doctest/doctest.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runtime/disk_cache.hpp"
#include "tools/kiln/cache_command.hpp"
#include "tools/kiln/cli_common.hpp"

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

/// `kiln cache ARGS... --cache-dir DIR`, stdout captured.
Result kiln_cache(std::vector<std::string> args, const std::string &dir) {
  CLI::App app{"kiln", "kiln"};
  app.require_subcommand(1);
  kiln::cli::CommonOptions common;
  kiln::cli::add_cache_command(app, common);
  args.insert(args.begin(), {"kiln", "cache"});
  args.insert(args.end(), {"--cache-dir", dir});
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err, cout;
  std::streambuf *saved = std::cout.rdbuf(cout.rdbuf());
  Result r;
  r.status = kiln::cli::run_cli(app, static_cast<int>(argv.size()), argv.data(), out, err);
  std::cout.rdbuf(saved);
  r.out = out.str() + cout.str();
  r.err = err.str();
  return r;
}

} // namespace

TEST_CASE("cli: kiln cache reports, lists, prunes and clears the disk cache") {
  char tmpl[] = "/tmp/kiln-cli-cache-XXXXXX";
  REQUIRE(::mkdtemp(tmpl));
  const std::string dir = tmpl;
  {
    kiln::runtime::DiskCache disk(dir, 0);
    for (char c : {'1', '2'}) {
      kiln::runtime::CachedKernel k;
      k.kernel.name = std::string("kernel_") + c;
      k.kernel.target = "cpu:test";
      k.kernel.binary_kind = "obj";
      k.kernel.binary.assign(100, 7);
      disk.put(std::string(64, c), k);
    }
  }
  const Result info = kiln_cache({"info", "--json"}, dir);
  CAPTURE(info.out);
  CAPTURE(info.err);
  REQUIRE(info.status == 0);
  const nlohmann::json j = nlohmann::json::parse(info.out);
  CHECK(j["entries"] == 2);
  CHECK(j["bytes"].get<uint64_t>() > 200);

  const Result ls = kiln_cache({"ls"}, dir);
  CHECK(ls.status == 0);
  CHECK(ls.out.find("kernel_1") != std::string::npos);
  CHECK(ls.out.find("kernel_2") != std::string::npos);

  const Result no_limit = kiln_cache({"prune"}, dir);
  CHECK(no_limit.status == 2);
  CHECK(no_limit.err.find("--max-bytes") != std::string::npos);

  CHECK(kiln_cache({"prune", "--max-bytes", "1"}, dir).out.find("removed 2") != std::string::npos);
  CHECK(nlohmann::json::parse(kiln_cache({"--json"}, dir).out)["entries"] == 0);
  CHECK(kiln_cache({"clear"}, dir).status == 0);
  std::filesystem::remove_all(dir);
}
